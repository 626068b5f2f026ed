"""`clparse combine` and `parse --db COMBO`, and `parse --constraints`, end to end on the trained sample:
the stored dev F1 is what parsing the dev set with the stored combination scores, one member with K = 1
parses as that member, the combination is plain SQL, and known brackets are kept (or refused in one line)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse.cli import main
from clparse.combine.run import MemberSpec, fit_members
from clparse.data import sample_path
from clparse.evaluate import evaluate
from clparse.read import format_tree, parse_tree, read_trees
from tests.conftest import backup_database, write_sql


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def dev_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dev") / "dev.ptb"
    path.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:12]),
                    encoding="utf-8")
    return path


def test_combine_stores_a_combination_that_parses_to_its_dev_f1(trained_db: Path, dev_file: Path,
                                                               tmp_path: Path) -> None:
    combo = tmp_path / "combo.sqlite"
    code, out, err = run("combine", "--member", f"{trained_db}@3", "--member", f"{trained_db}@8",
                         "--dev", str(dev_file), "--kbest", "3", "--beam", "20", "--max-evaluations", "20",
                         "--out", str(combo))
    assert code == 0, err
    assert "combination: dev F1" in out
    code, rows, err = run("sql", "--db", str(combo), "--json",
                          "SELECT c.dev_f1, c.k, c.beam, m.position, m.theta, m.weight FROM combinations c "
                          "JOIN combination_members m ON m.combination_id = c.id ORDER BY m.position")
    assert code == 0, err
    members = json.loads(rows)
    assert [(m["position"], m["theta"], m["k"], m["beam"]) for m in members] == [(0, "3", 3, 20),
                                                                                (1, "8", 3, 20)]
    assert all(m["weight"] > 0 for m in members)
    code, parsed, err = run("parse", "--db", str(combo), "--input-format", "ptb", str(dev_file))
    assert code == 0, err
    assert "combination of 2 parsers" in err
    f1 = evaluate(read_trees(dev_file), [parse_tree(line) for line in parsed.splitlines()]).all.f1
    assert f1 == pytest.approx(members[0]["dev_f1"], abs=1e-9)
    # a combination parses with its members' stored Θ̂ and in one process
    assert run("parse", "--db", str(combo), "--theta", "5", input="The dog barked .\n")[0] == 2
    assert run("parse", "--db", str(combo), "--jobs", "2", input="The dog barked .\n")[0] == 2


@pytest.mark.parametrize("aggregator", ["sum", "maxmin"])
def test_one_member_with_one_tree_parses_as_that_member(trained_db: Path, dev_file: Path, tmp_path: Path,
                                                        aggregator: str) -> None:
    combo = tmp_path / "one.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [dev_file], combo, k=1, beam=20, max_evaluations=10,
                aggregator=aggregator, progress=False)
    # a combination's members parse with the aggregator it was fitted with, whatever parse's default
    alone = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--aggregator", aggregator,
                "--input-format", "ptb", str(dev_file))
    combined = run("parse", "--db", str(combo), "--input-format", "ptb", str(dev_file))
    assert alone[0] == combined[0] == 0
    assert combined[1] == alone[1]
    assert f", {aggregator}, dev F1" in combined[2]  # the line saying what parses


def test_the_aggregator_is_stored_and_shown(trained_db: Path, dev_file: Path, tmp_path: Path) -> None:
    combo = tmp_path / "combo.sqlite"
    code, out, err = run("combine", "--member", f"{trained_db}@3", "--member", f"{trained_db}@8", "--dev",
                         str(dev_file), "--kbest", "2", "--beam", "20", "--max-evaluations", "10",
                         "--aggregator", "maxmin", "-o", str(combo))
    assert code == 0, err
    assert "K 2, maxmin)" in out
    code, rows, err = run("sql", "--db", str(combo), "--json",
                          "SELECT json_extract(dev_json, '$.aggregator') AS aggregator FROM combinations")
    assert code == 0, err
    assert json.loads(rows) == [{"aggregator": "maxmin"}]
    # a sum search on a max-min combination: one line, nothing parsed
    code, out, err = run("parse", "--db", str(combo), "--aggregator", "sum", input="The dog barked .\n")
    assert code != 0 and out == ""
    assert "--aggregator" in err and "maxmin" in err and "Traceback" not in err


def test_a_combination_stored_before_the_aggregator_was_kept_reads_as_maxmin(trained_db: Path, dev_file: Path,
                                                                             tmp_path: Path) -> None:
    from clparse.store import combinations
    from clparse.store.database import init_database

    combo = tmp_path / "old.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [dev_file], combo, k=1, beam=20, max_evaluations=10,
                aggregator="maxmin", progress=False)
    stored = combinations.latest(combo)
    assert stored is not None and stored.aggregator == "maxmin"
    old = {key: value for key, value in stored.dev.items() if key != "aggregator"}  # as 0.1.0 wrote it
    older = tmp_path / "older.sqlite"
    init_database(older)
    combinations.write(older, dataclasses.replace(stored, dev=old, id=None))
    again = combinations.latest(older)
    assert again is not None and "aggregator" not in again.dev and again.aggregator == "maxmin"
    alone = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--aggregator", "maxmin",
                "--input-format", "ptb", str(dev_file))
    combined = run("parse", "--db", str(older), "--input-format", "ptb", str(dev_file))
    assert alone[0] == combined[0] == 0, combined[2]
    assert combined[1] == alone[1]


def test_a_combination_keeps_the_offsets_of_running_text(trained_db: Path, dev_file: Path,
                                                         tmp_path: Path) -> None:
    # text input through a combination wrote "offsets": null and "text": null in the JSON, exit status 0
    pytest.importorskip("syntok")
    combo = tmp_path / "text.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("clparse", trained_db, "8")], [dev_file],
                combo, k=2, beam=20, max_evaluations=10, progress=False)
    text = "Dogs bark (loudly). The cat sat."
    code, out, err = run("parse", "--db", str(combo), "--input-format", "text", "--format", "json",
                         input=text)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 2
    for record in records:
        assert record["offsets"] is not None and record["text"] is not None
        assert [text[s:e] for s, e in record["offsets"]] == record["text"]


def test_explain_on_a_combination_names_its_members(trained_db: Path, dev_file: Path, tmp_path: Path) -> None:
    combo = tmp_path / "one.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [dev_file], combo, k=1, beam=20, max_evaluations=10,
                progress=False)
    code, out, err = run("explain", "--db", str(combo), "The", "dog", "barked", ".")
    assert code == 1 and out == ""
    assert err == (f"Error: explain takes one parser's database; this is a combination (clparse combine), "
                   f"whose trees are its members': explain a member ({trained_db.resolve()}@3)\n")


def test_combine_refuses_a_training_run_as_its_output(trained_db: Path, dev_file: Path,
                                                      db_copy: Path) -> None:
    code, _, err = run("combine", "--member", f"{trained_db}@3", "--dev", str(dev_file), "--out",
                       str(db_copy))
    assert code == 1 and "holds a training run" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("combine", "--member", f"{trained_db}@x", "--dev", str(dev_file), "--out", "o.sqlite")
    assert code == 2 and "must be a number or best" in err


# ------------------------------------------------------------------------------------- parse --constraints


def test_constraints_are_kept_and_a_complete_bracketing_returns_its_tree(trained_db: Path, dev_file: Path,
                                                                        tmp_path: Path) -> None:
    """Each sentence's own free parse, given back as a complete bracketing, is returned; a required
    bracket the free parse lacks appears in the constrained one."""
    code, free, err = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--input-format",
                          "ptb", str(dev_file))
    assert code == 0, err
    trees = [parse_tree(line) for line in free.splitlines()]
    lines = []
    for tree in trees:
        spans = [[s, e, label] for s, e, label in tree.labeled_spans() if label != "ROOT"]
        lines.append(json.dumps({"require": spans, "complete": True}))
    constraints = tmp_path / "c.jsonl"
    constraints.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, bound, err = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--input-format",
                           "ptb", "--constraints", str(constraints), str(dev_file))
    assert code == 0, err
    assert evaluate(trees, [parse_tree(line) for line in bound.splitlines()]).all.f1 == 100.0
    # a bracket the free parse of "The dog barked ." lacks
    sentence = "The old dog barked at the cat .\n"
    plain = parse_tree(run("parse", "--db", str(trained_db), "--theta", "3", input=sentence)[1])
    wanted = next(([s, s + 2] for s in range(5) if all((a, b) != (s, s + 2) for a, b, _ in
                                                         plain.labeled_spans())), None)
    assert wanted is not None
    constraints.write_text(json.dumps({"require": [wanted + ["NP"]]}) + "\n", encoding="utf-8")
    code, out, err = run("parse", "--db", str(trained_db), "--theta", "3", "--constraints", str(constraints),
                         input=sentence)
    assert code == 0, err
    assert (wanted[0], wanted[1], "NP") in parse_tree(out).labeled_spans()


@pytest.mark.parametrize("lines,sentences,message", [
    (['{"require": [[0, 2], [1, 3]]}'], 1, "c.jsonl:1: sentence 1: required brackets"),
    (['{}', '{"forbid": [[0, 9]]}'], 2, "c.jsonl:2: sentence 2: bracket * 0:9 is not a span"),
    (['{}'], 2, "1 line(s) for more sentences"),
    (['{}', '{}'], 1, "more lines of constraints than sentences"),
    (['{"require": [[0, 1, "XYZ"]]}'], 1, "no label 'XYZ'"),
    (['{"require": [[3, 4]]}'], 1, "holds only tokens the parser sets aside"),
    (['{"require": 3}'], 1, "c.jsonl:1: 'require' must be a list"),
])
def test_constraints_that_cannot_hold_are_one_error_line(trained_db: Path, tmp_path: Path, lines: list[str],
                                                        sentences: int, message: str) -> None:
    constraints = tmp_path / "c.jsonl"
    constraints.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run("parse", "--db", str(trained_db), "--theta", "3", "--constraints", str(constraints),
                       input="The dog barked .\n" * sentences)
    assert code == 1, err
    error = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and message in error[0], err


def test_a_ptb_member_of_other_sentences_is_one_error_line(trained_db: Path, dev_file: Path,
                                                           tmp_path: Path) -> None:
    """Parses of other sentences (shifted by one, or one word off) were a traceback from the vote count or,
    with as many words, counted silently as votes for the dev sentences."""
    gold = list(read_trees(dev_file))
    shifted = tmp_path / "shifted.ptb"
    shifted.write_text("".join(format_tree(t) + "\n" for t in gold[1:] + gold[:1]), encoding="utf-8")
    changed = parse_tree(format_tree(gold[2]))
    first = next(iter(changed.preterminals()))
    first.word = "Zebra"
    one_off = tmp_path / "one_off.ptb"
    one_off.write_text("".join(format_tree(t) + "\n" for t in [*gold[:2], changed, *gold[3:]]),
                       encoding="utf-8")
    for member, message in ((shifted, "tree 1 is not a parse of dev sentence 1"),
                            (one_off, "tree 3 is not a parse of dev sentence 3")):
        out = tmp_path / f"{member.stem}.sqlite"
        code, _, err = run("combine", "--member", f"{trained_db}@3", "--ptb-member", str(member), "--dev",
                           str(dev_file), "--kbest", "2", "--beam", "5", "--max-evaluations", "10", "--out",
                           str(out))
        assert code == 1, err
        assert err.startswith("Error: ") and len(err.strip().splitlines()) == 1 and message in err, err
        assert "'Zebra'" in err or member is shifted
        assert not out.exists()


def test_a_member_calibrated_or_replaced_since_the_fit_is_refused(copy_trained_db: Callable[[], Path],
                                                                  trained_db: Path, dev_file: Path,
                                                                  tmp_path: Path) -> None:
    """A member at @best that is calibrated again parsed silently at its new Θ̂, with λ, ρ, τ fitted for
    another model; a member file replaced by another run parsed silently too."""
    member = copy_trained_db()
    assert run("calibrate", "--db", str(member), "--thetas", "8", "--beam", "1")[0] == 0
    combo = tmp_path / "combo.sqlite"
    fit_members([MemberSpec("clparse", member, "best")], [dev_file], combo, k=2, beam=5, max_evaluations=10,
                progress=False)
    assert run("parse", "--db", str(combo), input="The dog barked .\n")[0] == 0
    assert run("calibrate", "--db", str(member), "--thetas", "4", "--beam", "2")[0] == 0  # the latest best
    code, out, err = run("parse", "--db", str(combo), input="The dog barked .\n")
    assert code == 1 and out == "", err
    assert "changed since the combination was fitted (Θ̂ best is now 4, was 8)" in err
    assert len(err.strip().splitlines()) == 1
    other = tmp_path / "other.sqlite"
    backup_database(trained_db, other)
    fit_members([MemberSpec("clparse", other, "5")], [dev_file], combo, k=2, beam=5, max_evaluations=10,
                progress=False)
    assert run("parse", "--db", str(combo), input="The dog barked .\n")[0] == 0
    write_sql(other, "UPDATE runs SET input_digest = 'another run'")  # another run put at its path
    code, out, err = run("parse", "--db", str(combo), input="The dog barked .\n")
    assert code == 1 and "since the combination was fitted (it holds another training run)" in err, err


def test_a_combination_keeps_one_line_per_sentence_and_warns_of_flat_trees(trained_db: Path,
                                                                          dev_file: Path,
                                                                          tmp_path: Path) -> None:
    """With K > 1 stored, an empty line was written as a k-best list ('nan<TAB>(ROOT)' and an empty line:
    the output no longer lined up with the input), and a sentence every member gave a flat tree (too long,
    no parse keeping the brackets) got it without a warning, counted as parsed."""
    combo = tmp_path / "combo.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [dev_file], combo, k=2, beam=5, max_evaluations=10,
                progress=False)
    code, out, err = run("parse", "--db", str(combo), input="The dog barked .\n\nA cat .\n")
    assert code == 0, err
    assert len(out.splitlines()) == 3 and out.splitlines()[1] == "(ROOT)", out
    code, out, err = run("parse", "--db", str(combo), "--max-words", "3",
                         input="The dog barked at the cat .\n")
    assert code == 0 and out.count("\n") == 1 and not out.startswith("nan"), out
    assert "warning: sentence 1: flat tree (longer than 3 tokens)" in err and "1 flat fallback(s)" in err
    constraints = tmp_path / "c.jsonl"
    constraints.write_text('{"complete": true}\n', encoding="utf-8")  # nothing but ROOT may be built
    code, out, err = run("parse", "--db", str(combo), "--format", "json", "--constraints", str(constraints),
                         input="The dog barked .\n")
    assert code == 0, err
    assert json.loads(out)["fallback"].startswith("no parse keeps the brackets")
    assert "1 flat fallback(s)" in err


def test_an_uncalibrated_member_at_best_says_how_to_name_its_theta(trained_db: Path, dev_file: Path,
                                                                   tmp_path: Path) -> None:
    """The parser's advice for an uncalibrated database is `--theta X`, which combine does not take: a
    combination names a member's Θ̂ as RUN.sqlite@THETA."""
    out = tmp_path / "combo.sqlite"
    code, _, err = run("combine", "--member", str(trained_db), "--member", f"{trained_db}@3", "--dev",
                       str(dev_file), "--kbest", "2", "--beam", "5", "--max-evaluations", "10",
                       "--out", str(out))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "not calibrated yet" in err and f"--member {trained_db}@THETA" in err and "--theta" not in err, err
    assert not out.exists()
