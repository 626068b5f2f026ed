"""Parsing from a trained database: ``clparse parse`` through click's test runner, and the Python API.

Everything reads the session's ``trained_db`` (every label trained until Θ < 3, never calibrated),
parsing at Θ̂ = 3 so that every label is usable.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from pathlib import Path

import nltk
import pytest
from click.testing import CliRunner, Result

from clparse.cli import main
from clparse.data import sample_path
from clparse.errors import ConfigurationError, RunningTextWarning
from clparse.parser import Parser
from clparse.read import read_trees
from clparse.read.ptb import format_tree, parse_tree
from clparse.read.tree import Tree
from clparse.rebuild import load_model
from clparse.train import label_status
from tests.conftest import read_rows

THETA = 3.0
DEV = sample_path("dev")



def invoke(args: Sequence[str], stdin: str | None = None) -> Result:
    """Run the CLI in-process with stdout and stderr kept apart (whatever click's version)."""
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    else:  # click >= 8.2 always separates result.stderr
        runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def output_trees(text: str) -> list[Tree]:
    return [parse_tree(line) for line in text.splitlines() if line.strip()]


def is_flat(tree: Tree) -> bool:
    return tree.label == "ROOT" and all(child.is_preterminal for child in tree.children)


# ------------------------------------------------------------------------------ command line


def test_cli_tokens_from_stdin(trained_db: Path) -> None:
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1"],
                    "The dog barked at the cat .\n\nShe sleeps .\n")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and lines[1] == "(ROOT)"  # one output line per input line, an empty one (ROOT)
    trees = output_trees(lines[0] + "\n" + lines[2])
    assert [t.words() for t in trees] == [["The", "dog", "barked", "at", "the", "cat", "."],
                                          ["She", "sleeps", "."]]
    assert all(t.label == "ROOT" for t in trees)
    assert "-:2: empty line; its output is (ROOT), so output lines stay aligned with input" in result.stderr
    assert "parser at Θ̂ = 3:" in result.stderr
    assert "parsed 3 sentence(s); 0 flat fallback(s); 0 completed greedily at the pop cap" in result.stderr


def test_cli_tagged_input_keeps_tags(trained_db: Path) -> None:
    tagged = [("The", "DT"), ("dogs", "NNS"), ("barked", "VBD"), ("at", "IN"), ("the", "DT"), ("cat", "NN"),
              (".", "."), ("1/2", "CD")]  # a word may hold '/': the tag is after the last one
    line = " ".join(f"{w}/{t}" for w, t in tagged)
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "tagged"],
                    line + "\nShe/PRP sleeps/VBZ\n")
    assert result.exit_code == 0, result.stderr
    first, second = output_trees(result.stdout)
    assert first.tagged_words() == tagged
    assert second.tagged_words() == [("She", "PRP"), ("sleeps", "VBZ")]


@pytest.mark.parametrize("bad", ["bar", "bar/", "/NN"])
def test_cli_tagged_input_malformed_token(trained_db: Path, bad: str) -> None:
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "tagged"],
                    f"The/DT dog/NN\nfoo/NN {bad} baz/NN\n")
    assert result.exit_code == 1
    assert f"Error: -:2: token 2 {bad!r} is not word/TAG" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def dev_parsed(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """The whole bundled dev sample parsed greedily from its gold tags (one run, shared)."""
    out = tmp_path_factory.mktemp("dev") / "dev.parsed"
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "ptb",
                     "--max-words", "1000", "-o", out, DEV])
    assert result.exit_code == 0, result.stderr
    return out, result


def test_cli_ptb_input_one_tree_per_gold_tree(dev_parsed: tuple[Path, Result]) -> None:
    out, result = dev_parsed
    gold = list(read_trees(DEV))
    test = output_trees(out.read_text(encoding="utf-8"))
    assert len(gold) == len(test) == 75
    assert f"parsed {len(gold)} sentence(s); 0 flat fallback(s)" in result.stderr
    for g, t in zip(gold, test):
        assert t.label == "ROOT"
        assert len(t.words()) == len([w for w, tag in g.tagged_words() if tag != "-NONE-"])


def test_cli_ptb_input_keeps_every_token(dev_parsed: tuple[Path, Result]) -> None:
    out, _ = dev_parsed
    gold = list(read_trees(DEV))
    test = output_trees(out.read_text(encoding="utf-8"))
    for i, (g, t) in enumerate(zip(gold, test), 1):
        expected = [(w, tag) for w, tag in g.tagged_words() if tag != "-NONE-"]
        assert t.tagged_words() == expected, f"sentence {i}"


def test_cli_ptb_output_evaluates_against_gold(dev_parsed: tuple[Path, Result]) -> None:
    out, _ = dev_parsed
    result = invoke(["eval", DEV, out])
    assert result.exit_code == 0, result.stderr
    assert "mismatch" not in result.stderr
    assert re.search(r"Number of Error sentence\s+=\s+0\n", result.stdout)


def test_cli_ptb_output_evaluates_without_bracket_sentences(dev_parsed: tuple[Path, Result],
                                                            tmp_path: Path) -> None:
    """The same check on the dev sentences without '[' or ']' (those the bracket bug does not touch)."""
    out, _ = dev_parsed
    gold_lines = [format_tree(t) for t in read_trees(DEV)]
    test_lines = [line for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = [i for i, g in enumerate(gold_lines) if not {"[", "]"} & set(parse_tree(g).words())]
    assert 40 <= len(keep) < len(gold_lines)
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.ptb"
    gold.write_text("".join(gold_lines[i] + "\n" for i in keep), encoding="utf-8")
    test.write_text("".join(test_lines[i] + "\n" for i in keep), encoding="utf-8")
    result = invoke(["eval", gold, test])
    assert result.exit_code == 0, result.stderr
    assert "mismatch" not in result.stderr and "warning" not in result.stderr
    assert re.search(rf"Number of Valid sentence\s+=\s+{len(keep)}\n", result.stdout)
    assert re.search(r"Number of Error sentence\s+=\s+0\n", result.stdout)
    assert re.search(r"Tagging accuracy\s+=\s+100\.00\n", result.stdout)  # the gold tags were kept


def test_cli_theta_below_training_fails(trained_db: Path) -> None:
    result = invoke(["parse", "--db", trained_db, "--theta", "0.01", "--beam", "1"], "The dog barked .\n")
    assert result.exit_code == 1
    assert "not every label is trained past" in result.stderr
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1  # one short line
    short = [r.label for r in label_status(trained_db) if r.state != "converged" and r.theta >= 0.01]
    verbose = invoke(["--verbose", "parse", "--db", trained_db, "--theta", "0.01", "--beam", "1"],
                     "The dog barked .\n")
    assert verbose.exit_code == 1  # --verbose names every label short of Θ̂
    assert short and all(f"{label}: trained only down to" in verbose.stderr for label in short)


def test_cli_theta_best_before_calibration_fails(trained_db: Path) -> None:
    result = invoke(["parse", "--db", trained_db, "--theta", "best", "--beam", "1"], "The dog barked .\n")
    assert result.exit_code == 1
    assert "not calibrated" in result.stderr and "calibrate" in result.stderr


def test_cli_theta_not_a_number(trained_db: Path) -> None:
    result = invoke(["parse", "--db", trained_db, "--theta", "high"], "The dog barked .\n")
    assert result.exit_code == 2
    assert "neither a number nor 'best'" in result.stderr


# ------------------------------------------------------------------------------ Python API


@pytest.fixture(scope="module")
def parser(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=THETA, beam=1)


def test_parse_tokens(parser: Parser) -> None:
    result = parser.parse("The dog barked .")
    assert result.fallback is None
    assert result.tree.label == "ROOT"
    assert result.tree.words() == ["The", "dog", "barked", "."]
    assert [w for w, _ in result.tagged] == ["The", "dog", "barked", "."]
    assert not is_flat(result.tree)
    assert str(result) == format_tree(result.tree)
    nltk_tree = result.to_nltk()
    assert isinstance(nltk_tree, nltk.Tree)
    assert nltk_tree.label() == "ROOT"
    assert nltk_tree.leaves() == ["The", "dog", "barked", "."]


def test_parse_tagged_keeps_tags(parser: Parser) -> None:
    given = [("The", "DT"), ("dog", "NN")]
    result = parser.parse(given)
    assert result.fallback is None
    assert result.tree.tagged_words() == given
    odd = [("The", "DT"), ("dog", "VB"), ("barked", "NN")]  # tags the tagger would not give are still kept
    assert parser.parse(odd).tree.tagged_words() == odd


def test_tagged_input_never_loads_the_tagger(trained_db: Path) -> None:
    # Loading a tagger imports its library (nltk's perceptron: over a second); tagged input needs none.
    fresh = Parser.from_db(trained_db, theta=THETA, beam=1)
    fresh.parse([("The", "DT"), ("dog", "NN"), ("barked", "VBD")])
    fresh.parse("The/DT dog/NN".split())  # strings: untagged tokens, which do need it
    assert fresh._tagger is not None
    tagged_only = Parser.from_db(trained_db, theta=THETA, beam=1)
    for sentence in ([("The", "DT"), ("dog", "NN")], [], "  "):
        tagged_only.parse(sentence)
    assert tagged_only._tagger is None and tagged_only._tagger_db is not None


def test_parse_many(parser: Parser) -> None:
    inputs = ["The dog barked .", ["She", "sleeps", "."], [("A", "DT"), ("cat", "NN")], "It rains ."]
    results = list(parser.parse_many(inputs))
    assert len(results) == len(inputs)
    assert [r.tree.words() for r in results] == [["The", "dog", "barked", "."], ["She", "sleeps", "."],
                                                ["A", "cat"], ["It", "rains", "."]]
    assert all(r.tree.label == "ROOT" for r in results)


@pytest.mark.parametrize("empty", ["", "   ", []])
def test_parse_empty_sentence(parser: Parser, empty: str | list) -> None:
    result = parser.parse(empty)
    assert result.fallback == "empty sentence"
    assert result.tree.words() == []


def test_parse_longer_than_max_words(trained_db: Path) -> None:
    short = Parser.from_db(trained_db, theta=THETA, beam=1, max_words=3)
    tokens = ["The", "dog", "barked", "at", "the", "cat", "."]
    result = short.parse(tokens)
    assert result.fallback is not None and "longer than 3 tokens" in result.fallback
    assert is_flat(result.tree)
    assert result.tree.words() == tokens
    assert short.parse("The dog barked").fallback is None  # exactly max_words is parsed


def test_parse_bracket_tokens(parser: Parser) -> None:
    result = parser.parse("He ( really ) left .")
    assert result.tree.words() == ["He", "-LRB-", "really", "-RRB-", "left", "."]
    assert parse_tree(str(result)).words() == result.tree.words()
    assert result.to_nltk().leaves() == result.tree.words()


def test_parse_tokens_containing_brackets_give_readable_trees(parser: Parser) -> None:
    # GUM keeps '[' ']' as is (tagged -LRB-/-RRB-); only '(' and ')' cannot appear in PTB text.
    with pytest.warns(RunningTextWarning):  # a bracket on a word: running text, most often
        result = parser.parse("f(x) is nice :)")
    back = parse_tree(str(result))
    assert len(back.words()) == 4
    assert not any(c in w for w in back.words() for c in "()")


def test_parse_keeps_square_brackets_given_with_tags(parser: Parser) -> None:
    given = [("see", "VB"), ("[", "-LRB-"), ("1", "CD"), ("]", "-RRB-")]
    assert parser.parse(given).tree.tagged_words() == given


def dev_sentences(count: int, max_words: int = 12) -> list[list[tuple[str, str]]]:
    out = []
    for tree in read_trees(DEV):
        tagged = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
        if 4 <= len(tagged) <= max_words and not {"[", "]"} & {w for w, _ in tagged}:
            out.append(tagged)
        if len(out) == count:
            break
    return out


@pytest.mark.parametrize("beam", [1, 50])
def test_beams_give_complete_trees(trained_db: Path, beam: int) -> None:
    parser = Parser.from_db(trained_db, theta=THETA, beam=beam)
    sentences = dev_sentences(4)
    assert len(sentences) == 4
    for tagged in sentences:
        result = parser.parse(tagged)
        assert result.fallback is None, result.fallback
        assert result.tree.label == "ROOT" and not is_flat(result.tree)
        assert result.tree.tagged_words() == tagged
        assert result.pops >= 1


def test_max_pops_completes_greedily_instead_of_a_flat_tree(trained_db: Path) -> None:
    tokens = ["The", "dog", "saw", "a", "cat"]
    capped = Parser.from_db(trained_db, theta=THETA, beam=1000, max_pops=1).parse(tokens)
    assert capped.fallback is None and not is_flat(capped.tree)
    assert capped.completion == "no complete parse within 1 popped states: completed greedily"
    assert capped.tree.words() == tokens and capped.pops == 1
    # beam 1 never needs the cap: its one path is the greedy completion of the first pop
    greedy = Parser.from_db(trained_db, theta=THETA, beam=1).parse(tokens)
    assert greedy.completion is None and str(greedy.tree) == str(capped.tree)


def test_theta_above_every_first_theta_is_refused_with_the_usable_range(trained_db: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        load_model(trained_db, 1e6)
    message = str(error.value)
    assert "Θ̂ = 1e+06 is above every label's first Θ, so no tree would be used" in message
    [(top,)] = read_rows(trained_db, "SELECT max(theta) FROM iterations WHERE iteration = 1")
    [(floor,)] = read_rows(trained_db, "SELECT max(theta) FROM label_training WHERE state != 'converged'")
    assert f"use a Θ̂ above {floor:.4g} and at most {top:.4g}" in message
    load_model(trained_db, top)  # the top of the range has trees


def test_cli_counts_greedy_completions_at_the_pop_cap_in_one_summary_line(trained_db: Path) -> None:
    """Issue 27: no warning line per completed sentence (a full tree, not a failure), one summary line."""
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1000", "--max-pops", "1"],
                    "The dog barked at the cat .\nA cat sat .\n")
    assert result.exit_code == 0, result.stderr
    trees = output_trees(result.stdout)
    assert trees[0].words() == ["The", "dog", "barked", "at", "the", "cat", "."] and not is_flat(trees[0])
    assert "warning" not in result.stderr and "popped states" not in result.stderr
    assert result.stderr.splitlines()[-1] == ("parsed 2 sentence(s); 0 flat fallback(s); 2 completed "
                                              "greedily at the pop cap (raise --max-pops to search further)")


# Measured when this floor was set (sample model of conftest.trained_db with the defaults of issue #11:
# constraints, richer templates, smoothing 0.5; its 20 dev sentences <= 15 words, gold tags, Θ̂ = 3.5):
# F1 68.88 greedy, 69.57 at beam 100 (the paper's settings gave 69.57 and 72.73: 20 sentences are too
# few to rank settings, GUM dev is where they are compared). Training is deterministic, so the figures
# only move when the code does; the margin leaves room for deliberate small changes.
QUALITY_FLOOR = {1: 66.0, 100: 67.0}


@pytest.mark.parametrize("beam", sorted(QUALITY_FLOOR))
def test_quality_floor_on_the_sample_dev_set(trained_db: Path, beam: int) -> None:
    from clparse.calibrate.run import dev_trees
    from clparse.evaluate import EvalbParams, evaluate

    gold = dev_trees(trained_db)
    parser = Parser.from_db(trained_db, theta=3.5, beam=beam)
    test = [parser.parse_tagged([(w, t) for w, t in g.tagged_words() if t != "-NONE-"]).tree for g in gold]
    f1 = evaluate(gold, test, EvalbParams()).all.f1
    assert f1 >= QUALITY_FLOOR[beam], f"sample dev F1 {f1:.2f} fell below the floor {QUALITY_FLOOR[beam]}"


def test_parse_document_keeps_order_and_draws_progress_only_when_asked(
        trained_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = Parser.from_db(trained_db, theta=THETA, beam=1)
    sentences = ["The dog barked .", "", [("She", "PRP"), ("sleeps", "VBZ")]]
    results = parser.parse_document(sentences)
    assert [str(r.tree) for r in results] == [str(parser.parse(s).tree) for s in sentences]
    assert capsys.readouterr().err == ""  # stderr is not a terminal here: no progress line


def test_the_command_line_and_the_library_share_the_search_limit() -> None:
    # written twice: the command line's options must not import the parser's module (numba) for --help
    from clparse import parser
    from clparse.cli import options
    from clparse.search.aggregate import AGGREGATORS

    assert options.SEARCH_LIMIT == parser.SEARCH_LIMIT
    assert options.AGGREGATOR == parser.DEFAULT_AGGREGATOR
    assert set(options.AGGREGATOR_CHOICES) == set(AGGREGATORS)
    assert options.AGGREGATOR_CHOICES[0] == options.AGGREGATOR  # --help lists the default first


def test_cli_ptb_input_reads_its_own_empty_parse_back(trained_db: Path, tmp_path: Path) -> None:
    """``(ROOT)``, parse's output for an empty line, and ``()`` read back as empty sentences, aligned."""
    trees = tmp_path / "mixed.ptb"
    trees.write_text("(ROOT (S (NP (PRP I)) (VP (VBD ran))))\n(ROOT)\n()\n"
                     "(S (NP (PRP It)) (VP (VBD went)))\n")
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "ptb",
                     trees])
    lines = result.stdout.splitlines()
    assert result.exit_code == 0, result.stderr
    assert len(lines) == 4 and lines[1] == lines[2] == "(ROOT)" and "I" in lines[0] and "went" in lines[3]
    assert "tree 2 has no words" in result.stderr and "tree 3 has no words" in result.stderr


def test_cli_ptb_input_from_stdin_as_from_a_file(trained_db: Path, tmp_path: Path) -> None:
    """``--input-format ptb -`` reads trees from stdin (it was refused), the same trees as from a file, and
    a bad tree there is one error line naming ``-``, its line and column."""
    text = "(ROOT (S (NP (PRP I)) (VP (VBD ran))))\n()\n(S (NP (PRP It)) (VP (VBD went)))\n"
    trees = tmp_path / "trees.ptb"
    trees.write_text(text)
    args = ["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "ptb"]
    from_file = invoke([*args, trees])
    from_stdin = invoke([*args, "-"], stdin=text)
    assert from_stdin.exit_code == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout and len(from_stdin.stdout.splitlines()) == 3
    assert "-: tree 2 has no words" in from_stdin.stderr
    broken = invoke([*args, "-"], stdin="(ROOT (S (NP (PRP I))\n")
    assert broken.exit_code == 1 and "Error: -:1:1: unbalanced '('" in broken.stderr
    assert "Traceback" not in broken.stderr
    empty = invoke([*args, "-"], stdin="")
    assert empty.exit_code == 1 and "Error: -:1:1: stdin contains no trees" in empty.stderr


@pytest.mark.parametrize("input_format", ["ptb", "tokens"])
def test_cli_stdin_given_twice_is_refused_before_anything_is_read(trained_db: Path,
                                                                  input_format: str) -> None:
    """`parse - -` read stdin once and then an exhausted stdin: nothing more in tokens format, and in ptb
    format "-:1:1: file contains no trees" (exit 1) after the trees had been written. Now a usage error."""
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format",
                     input_format, "-", "-"], stdin="(ROOT (S (NP (PRP I)) (VP (VBD ran))))\n")
    assert result.exit_code == 2 and result.stdout == ""
    assert "'-' is given more than once; stdin can be read only once" in result.stderr


def test_cli_output_file_started_before_the_first_tree(trained_db: Path, tmp_path: Path) -> None:
    """A run stopped at its first sentence leaves an empty -o file, not an older run's trees."""
    out = tmp_path / "out.ptb"
    out.write_text("(ROOT (NP (NN old)))\n")
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--input-format", "tagged", "-o", out],
                    stdin="The/DT dog\n")  # stdin is read as it is parsed: the bad token stops the first tree
    assert result.exit_code == 1 and "is not word/TAG" in result.stderr
    assert out.read_text() == ""
