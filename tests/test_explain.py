"""`clparse explain` and :mod:`clparse.explain` on the trained sample: every constituent's confidence is the
sum of its trees' κ (walked here without the compiled scorer) and equals what the search ranked the parse
by; the tree is `clparse parse`'s; the ids printed are rows of the database and the printed SQL runs; JSON
parses; bad input is one ``Error:`` line; nothing is written."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from clparse.cli import main
from clparse.errors import ClparseError
from clparse.explain import Explanation, explain, sentence_tokens
from clparse.features.items import ItemTable
from clparse.features.state import interner
from clparse.parser import Parser
from clparse.read.ptb import format_tree, iter_trees_from_lines
from clparse.search.aggregate import logistic_loss
from clparse.search.scorer import CompiledModel, state_rows
from tests.conftest import dev_tagged, read_rows

THETA = 3.0  # the session database is trained to Θ 3 and not calibrated
SENTENCE = "The dog barked at the cat ."


def invoke(args: Sequence[object], stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.fixture(scope="module", params=[(1, "sum"), (50, "sum"), (50, "maxmin")],
                ids=["greedy", "beam50", "beam50-maxmin"])
def parser(request: pytest.FixtureRequest, trained_db: Path) -> Parser:
    beam, aggregator = request.param
    return Parser.from_db(trained_db, theta=THETA, beam=beam, max_pops=2_000, aggregator=aggregator)


@pytest.fixture(scope="module")
def sentences(trained_db: Path) -> list[list[tuple[str, str]]]:
    return dev_tagged(trained_db)[:12]


def test_contributions_sum_to_the_confidences_the_search_used(parser: Parser,
                                                              sentences: list[list[tuple[str, str]]]) -> None:
    checked = 0
    for tagged in sentences:
        found = explain(parser, tagged, top=2)
        searched = Parser.from_model(parser.source or "", parser.model, parser.options).parse(tagged)
        assert found.ptb == format_tree(searched.tree)
        # Each total (κ walked tree by tree) is the confidence of its inference ...
        for c in found.constituents:
            assert close(c.total, c.confidence), (c.label, c.total, c.confidence)
            assert close(math.fsum(c.kappas), c.total)
            assert close(math.fsum(t.kappa for t in c.top) + c.rest, c.total)
            assert len(c.kappas) == parser.model.ensembles[c.label].trees
        # ... and together they are every confidence the search aggregated into the parse's score.
        totals = sorted(c.total for c in found.constituents)
        assert len(totals) == len(searched.trees[0].confidences)
        assert all(close(a, b) for a, b in zip(totals, searched.trees[0].confidences))
        (lowest,) = [c for c in found.constituents if c.lowest]
        assert lowest.confidence == min(c.confidence for c in found.constituents)
        # the score: minus the summed loss (the default aggregator), or under max-min the lowest
        summed = -math.fsum(logistic_loss(c.total) for c in found.constituents)
        expected = lowest.confidence if parser.options.aggregator == "maxmin" else summed
        assert close(searched.score, expected), (searched.score, expected)
        checked += len(totals)
    assert checked > 50


def test_totals_match_the_kernel_rows_scored_by_the_forest(trained_db: Path,
                                                           sentences: list[list[tuple[str, str]]]) -> None:
    """A second way to each confidence: every candidate row of the state as ``prepare`` computes rows
    (:func:`clparse.search.scorer.state_rows`, heads from the kernel's head table), scored by the label's
    forest (``Forest.score``, the trainer's margin walk). (tests/reference_scorer.py knows only the
    paper's templates, not the richer ones the sample is prepared with.)"""
    parser = Parser.from_db(trained_db, theta=THETA, beam=1)
    compiled = CompiledModel(parser.model.for_scoring())
    for tagged in sentences[:6]:
        found = explain(parser, tagged)
        derivation = parser.parse(tagged).trees[0].derivation
        assert derivation is not None
        leaves, path, _ = derivation
        items, make, frontier = ItemTable(list(leaves), compiled.symbols, compiled.model.max_children), \
            interner(), tuple(leaves)
        expected = []
        for first, end, label, _ in path:
            state = state_rows(compiled, items, items.frontier(frontier))
            rows = {(f, e, lab): row for f, e, lab, row in state}
            row = rows[(first, end, label)]
            indptr = np.array([0, len(row)], dtype=np.int64)
            expected.append((label, float(parser.model.ensembles[label].score(indptr, row)[0])))
            frontier = frontier[:first] + (make(label, frontier[first:end]),) + frontier[end:]
        mine = sorted((c.label, c.total) for c in found.constituents)
        assert [label for label, _ in mine] == [label for label, _ in sorted(expected)]
        assert all(close(a, b) for (_, a), (_, b) in zip(mine, sorted(expected))), (mine, sorted(expected))


def explained(trained_db: Path, *args: object, stdin: str | None = None) -> Result:
    result = invoke(["explain", "--db", trained_db, "--theta", THETA, *args], stdin)
    assert result.exit_code == 0, result.stderr
    return result


def test_the_tree_printed_is_the_parse(trained_db: Path) -> None:
    for sentence in (SENTENCE, "She sleeps .", "A man with a hat sat on the mat near the door ."):
        parsed = invoke(["parse", "--db", trained_db, "--theta", THETA], sentence + "\n")
        assert parsed.exit_code == 0, parsed.stderr
        text = explained(trained_db, *sentence.split()).stdout
        block = text.split("\n\n", 1)[0]  # the indented tree comes first
        (tree,) = iter_trees_from_lines(block.splitlines(), "<explain>")
        assert format_tree(tree) + "\n" == parsed.stdout
        data = json.loads(explained(trained_db, "--json", *sentence.split()).stdout)
        assert data["ptb"] + "\n" == parsed.stdout


def test_every_id_printed_is_a_row_and_the_sql_runs(trained_db: Path) -> None:
    found = explain(Parser.from_db(trained_db, theta=THETA), SENTENCE.split(), top=3)
    shown = [t for c in found.constituents for t in c.top]
    assert shown
    for tree in shown:
        (name,) = read_rows(trained_db, "SELECT name FROM labels WHERE id = ?", tree.label_id)[0]
        assert name == tree.label
        assert read_rows(trained_db, "SELECT count(*) FROM iterations WHERE label_id = ? AND iteration = ?",
                         tree.label_id, tree.iteration) == [(1,)]
        nodes = {row[0]: row[1:] for row in read_rows(
            trained_db, "SELECT node, feature_id, true_child, false_child, confidence FROM tree_nodes "
                        "WHERE label_id = ? AND iteration = ?", tree.label_id, tree.iteration)}
        node = 0  # the stored tree, walked along the tests printed, ends at the leaf printed with its κ
        for test in tree.tests:
            feature, yes, no, _ = nodes[node]
            assert (test.node, test.feature_id) == (node, feature)
            assert read_rows(trained_db, "SELECT text FROM features WHERE id = ?", feature) == [(test.name,)]
            node = yes if test.present else no
        assert node == tree.leaf and nodes[node][0] is None and nodes[node][3] == tree.kappa
    # The command printed last in the text is the lowest phrase's first tree's: pasted into a shell, it
    # lists that tree's rows (as JSON here), the leaf with its κ among them.
    text = explained(trained_db, *SENTENCE.split()).stdout
    line = text.rstrip("\n").splitlines()[-1]
    (tree,) = [c.top[0] for c in found.constituents if c.lowest]
    assert line == tree.sql(trained_db)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    ran = subprocess.run(["bash", "-c", f"{line} --json"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(ran.stdout)
    assert [r["node"] for r in rows] == [n for n, in read_rows(
        trained_db, "SELECT node FROM tree_nodes WHERE label_id = ? AND iteration = ? ORDER BY node",
        tree.label_id, tree.iteration)]
    assert rows[tree.leaf]["kappa"] == tree.kappa and rows[tree.leaf]["feature_id"] is None


def test_json_parses_and_holds_the_text(trained_db: Path) -> None:
    result = explained(trained_db, "--json", "--top", "1", stdin=f"{SENTENCE}\n\nShe sleeps .\n")
    lines = result.stdout.splitlines()
    assert len(lines) == 2  # one object per sentence, blank lines skipped
    first, second = (json.loads(line) for line in lines)
    assert first["tokens"] == SENTENCE.split() and second["tokens"] == ["She", "sleeps", "."]
    assert first["theta"] == THETA
    for c in first["constituents"] + second["constituents"]:
        assert close(math.fsum(c["kappas"]), c["confidence"]) and len(c["top"]) <= 1
        assert c["words"] == first["tokens"][c["start"]:c["end"]] or c in second["constituents"]
        assert all(t["sql"].startswith("clparse sql --db ") for t in c["top"])
    text = explained(trained_db, "--top", "1", *SENTENCE.split()).stdout
    for c in first["constituents"]:  # the text shows what the JSON holds
        assert f"{c['label']} over tokens {c['start']}-{c['end']}" in text
        assert f"confidence {c['confidence']:+.4f} from {c['trees']} trees" in text


@pytest.mark.parametrize("aggregator", ["sum", "maxmin"])
def test_the_aggregator_is_named_in_the_text_and_the_json(trained_db: Path, aggregator: str) -> None:
    # the score means another thing under each aggregator: both outputs say which
    data = json.loads(explained(trained_db, "--json", "--aggregator", aggregator, SENTENCE).stdout)
    assert data["aggregator"] == aggregator
    text = explained(trained_db, "--aggregator", aggregator, SENTENCE).stdout
    assert f"(--aggregator {aggregator}" in text
    assert ("the parse's score (max-min)" in text) == (aggregator == "maxmin")
    default = json.loads(explained(trained_db, "--json", SENTENCE).stdout)
    assert default["aggregator"] == "sum"


def test_tagged_input_keeps_its_tags(trained_db: Path) -> None:
    data = json.loads(explained(trained_db, "--json", "--input-format", "tagged", "Dogs/NNS bark/VBP").stdout)
    assert data["tags"] == ["NNS", "VBP"]


def test_a_tag_never_seen_in_training_is_warned_about_once(trained_db: Path) -> None:
    done = invoke(["explain", "--db", trained_db, "--theta", THETA, "--input-format", "tagged"],
                  "Dogs/NNS bark/XYZ loudly/XYZ ./.\nCats/NNS purr/VBP ./.\n")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == ("warning: sentence 1: token 2 has tag 'XYZ', never seen in training (warned once "
                           "per tag)\n")


def test_a_flat_tree_says_why(trained_db: Path) -> None:
    found = explain(Parser.from_db(trained_db, theta=THETA, max_words=2), SENTENCE)
    assert found.fallback and found.constituents == []
    assert "no classifier built a phrase of it" in found.format()


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (["--input-format", "tagged", "The/DT", "dog"], None, "Error: sentence:1: token 2 'dog' is not word/TAG"),
    (["--input-format", "tagged"], "The/DT dog/NN\nfoo/NN bar\n",
     "Error: stdin:2: token 2 'bar' is not word/TAG"),
    ([], "\n  \n", "Error: no sentence given"),
    (["--db", "no/such.sqlite", "a"], None, "Error: no/such.sqlite: no such database"),
    (["--theta", "1e-9", "a"], None, "Error: "),  # not trained that far
])
def test_bad_input_is_one_error_line(trained_db: Path, args: list[str], stdin: str | None,
                                     message: str) -> None:
    result = invoke(["explain", "--db", trained_db, *args], stdin)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


def test_an_empty_sentence_is_refused() -> None:
    with pytest.raises(ClparseError, match="no sentence given"):
        sentence_tokens("  \t ")
    assert sentence_tokens("a/DT 1/2/CD", "tagged") == [("a", "DT"), ("1/2", "CD")]


def test_nothing_is_written(copy_trained_db: object, tmp_path: Path) -> None:
    db = copy_trained_db()  # type: ignore[operator]
    before = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    explained(db, *SENTENCE.split())
    assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == before


def test_explanation_is_usable_from_python(trained_db: Path) -> None:
    found = explain(Parser.from_db(trained_db, theta=THETA), SENTENCE, top=0)
    assert isinstance(found, Explanation) and all(c.top == () for c in found.constituents)
    assert all(close(c.rest, c.total) for c in found.constituents)
