"""Faults of eval, compare, combine and parsing a combination (session 13, helper B); each test failed before
its fix."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clparse.data import sample_path
from clparse.errors import ParameterError
from clparse.evaluate import evaluate
from clparse.read import format_tree, read_trees
from tests.conftest import invoke_cli

invoke = invoke_cli

GOLD = "(ROOT (S (NP (DT the) (NN dog)) (VP (VBD ran) (NP (NN home))) (. .)))\n"


# ----------------------------------------------------------------------------- eval --one-per-line


def test_one_per_line_several_trees_on_a_line_scored_as_evalb(tmp_path: Path) -> None:
    """A test line holding several trees was refused ("expected one tree on the line, found 5"); evalb.c
    reads a line's brackets to its end, so the line is one sentence: its trees' words in order and each
    tree's brackets, with none over them all (figures from evalb.c itself, COLLINS.prm)."""
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.txt"
    gold.write_text(GOLD)
    test.write_text("(NP (DT the) (NN dog)) () (VP (VBD ran)) (NP (NN home)) (. .)\n")
    result = invoke(["eval", gold, test, "--one-per-line", "--collins-prm", "--json"])
    assert result.exit_code == 0, result.output
    totals = json.loads(result.stdout)["all"]
    # evalb.c: "1  5  0  40.00  66.67  2  5  3  0  4  4  100.00"
    assert (totals["matched_brackets"], totals["gold_brackets"], totals["test_brackets"]) == (2, 5, 3)
    assert (totals["words"], totals["correct_tags"], totals["crossing"]) == (4, 4, 0)
    result = invoke(["eval", gold, test, "--one-per-line", "--json"])  # ROOT not counted: S, NP, VP, NP
    totals = json.loads(result.stdout)["all"]
    assert (totals["matched_brackets"], totals["gold_brackets"], totals["test_brackets"]) == (2, 4, 3)


# ----------------------------------------------------------------------------- parse COMBO --jobs N


@pytest.fixture(scope="module")
def combo(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A combination of one member (K = 1), fitted on five dev trees."""
    from clparse.combine.run import MemberSpec, fit_members

    dev = tmp_path_factory.mktemp("combo") / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:5]))
    path = dev.parent / "combo.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [dev], path, k=1, beam=20, max_evaluations=10,
                progress=False)
    return path


def test_a_combination_in_parallel_is_refused_from_its_tables(combo: Path, trained_db: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_jobs.refuse_combination: the check `parse --jobs N` / `--dask` needs before the model loads."""
    from clparse.combine.run import CombinedParser
    from clparse.parse_jobs import ONE_PROCESS, refuse_combination

    monkeypatch.setattr(CombinedParser, "from_db", _loaded)
    for jobs, dask in ((2, None), (1, "local:1")):
        with pytest.raises(ParameterError, match=re.escape(ONE_PROCESS)):
            refuse_combination(combo, jobs, dask)
    refuse_combination(combo, 1, None)
    refuse_combination(trained_db, 2, None)  # a training run parses with --jobs


def _loaded(*args: object, **kwargs: object) -> None:
    raise AssertionError("the combination's members were loaded")


def test_parse_refuses_a_combination_with_jobs_before_it_loads(combo: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`parse --db COMBO --jobs 2` said "parse in one process" only after the members' models had loaded
    (the "combination of N parsers" line came first: seconds on a big run)."""
    from clparse import api
    from clparse.combine.run import CombinedParser
    from clparse.parse_jobs import ONE_PROCESS

    monkeypatch.setattr(CombinedParser, "from_db", _loaded)
    for extra in (["--jobs", "2"], ["--dask", "local:1"]):
        result = invoke(["parse", "--db", combo, *extra], stdin="The dog barked .\n")
        assert result.exit_code == 2, (result.output, result.exception)
        assert "combination of" not in result.stderr
        assert result.stderr.strip().endswith(f"Error: Invalid value for '--jobs': {ONE_PROCESS}")
    with pytest.raises(ParameterError, match=re.escape(ONE_PROCESS)):
        next(api.parse(combo, ["-"], jobs=2))


# ----------------------------------------------------------------------------- parse --dask local:N, Ctrl-C


def slow_parse(base: type, marker: str) -> Any:
    """A worker plugin (a ``base``, Dask's WorkerPlugin): the parser a worker opens parses each sentence for a
    minute, after saying so in ``marker`` (a chunk still parsing when the run is stopped)."""

    class SlowParse(base):  # type: ignore[misc, valid-type]
        def setup(self, worker: Any) -> None:
            import clparse.parse_dask as module

            class Parser:
                def parse(self, sentence: Any) -> Any:
                    Path(marker).write_text("parsing\n")
                    time.sleep(60)

            module._PARSERS.clear()
            module.open_worker_parser = lambda *args: Parser()

    return SlowParse()


def test_ctrl_c_on_a_local_cluster_stops_its_busy_workers_at_once(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`parse --dask local:N` took 4 s to exit after Ctrl-C: closing the cluster waited for the chunk each
    worker was parsing (Dask's Nanny waits 80 % of its 5 s before it kills)."""
    distributed = pytest.importorskip("distributed")
    from clparse.parse_dask import parse_on_cluster
    from clparse.parser import SearchOptions

    marker = tmp_path / "parsing"
    real_client = distributed.Client

    def client(*args: Any, **kwargs: Any) -> Any:
        made = real_client(*args, **kwargs)
        made.register_plugin(slow_parse(distributed.WorkerPlugin, str(marker)))
        return made

    monkeypatch.setattr(distributed, "Client", client)
    db = tmp_path / "db.sqlite"
    db.write_bytes(b"")  # the workers stat it; SlowParse's parser never reads it
    parser = SimpleNamespace(source=db, model=SimpleNamespace(label_thetas=None, theta=3.0),
                             options=SearchOptions(), active_chooser=None)
    pressed: list[float] = []

    def sentences() -> Iterator[tuple[list[str], None]]:
        yield ["a"], None  # the first chunk, sent to the worker
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the worker never started parsing"
        pressed.append(time.monotonic())
        raise KeyboardInterrupt  # Ctrl-C while the worker parses

    with pytest.raises(KeyboardInterrupt):
        next(iter(parse_on_cluster(parser, sentences(), "local:1", chunk=1)))
    assert time.monotonic() - pressed[0] < 1.5


# ----------------------------------------------------------------------------- eval / compare options


@pytest.mark.parametrize("command", ["eval", "compare"])
def test_prm_and_collins_prm_together_are_refused(tmp_path: Path, command: str) -> None:
    """--prm FILE --collins-prm scored with FILE alone, exit status 0 (--collins-prm ignored in silence)."""
    gold, prm = tmp_path / "gold.ptb", tmp_path / "mine.prm"
    gold.write_text(GOLD)
    prm.write_text("DELETE_LABEL ROOT\n")
    files = [gold, gold] + ([gold] if command == "compare" else [])
    result = invoke([command, *files, "--prm", prm, "--collins-prm"])
    assert result.exit_code == 2
    assert "--prm and --collins-prm cannot be combined" in result.stderr


def test_one_per_line_names_compressed_utf16_and_indented_files(tmp_path: Path) -> None:
    """With --one-per-line a gzip-compressed or UTF-16 test file was "not UTF-8 text (binary file?)" (the
    reader names them without the flag), and an indented file's first tree "not closed at end of file
    (line 1)" on line 1 of a file of many lines."""
    import gzip

    gold = tmp_path / "gold.ptb"
    gold.write_text(GOLD)
    packed, wide, indented = tmp_path / "test.gz", tmp_path / "test16.txt", tmp_path / "pretty.txt"
    packed.write_bytes(gzip.compress(GOLD.encode()))
    wide.write_bytes(GOLD.encode("utf-16"))
    indented.write_text("(ROOT\n  (S (NP (DT the) (NN dog))\n    (VP (VBD ran) (NP (NN home))) (. .)))\n")
    said = {path: invoke(["eval", gold, path, "--one-per-line"]) for path in (packed, wide, indented)}
    assert all(result.exit_code == 1 for result in said.values())
    assert said[packed].stderr.strip().endswith("(gzip-compressed: gunzip it first)")
    assert said[wide].stderr.strip().endswith("(UTF-16 text: save it as UTF-8)")
    assert said[indented].stderr.startswith(f"Error: {indented}:1:1: unbalanced '(': tree is not closed at "
                                            "the end of the line; --one-per-line reads one parse per line, "
                                            "and an indented file")


# ----------------------------------------------------------------------------- parse with a combination


def test_a_combination_whose_member_is_gone_says_so(copy_trained_db: Callable[[], Path],
                                                    tmp_path: Path) -> None:
    """A member database moved away: `parse --db COMBO` said "MEMBER: no such database; check the path, or
    make a run with `clparse prepare --db MEMBER ...`", a path the user never gave and the wrong remedy."""
    from clparse.combine.run import MemberSpec, fit_members

    member = copy_trained_db()
    dev = tmp_path / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:3]))
    combo = tmp_path / "combo.sqlite"
    fit_members([MemberSpec("clparse", member, "3")], [dev], combo, k=1, beam=20, max_evaluations=10,
                progress=False)
    member.rename(tmp_path / "moved.sqlite")
    for args in (["parse", "--db", combo], ["explain", "--db", combo, "The dog barked ."]):
        result = invoke(args, stdin="The dog barked .\n")
        assert result.exit_code == 1
        assert result.stderr.strip() == (f"Error: {combo}: its member {member} is not there (moved or "
                                         "deleted?): a combination names its members' databases by path; put "
                                         "it back, or fit the combination again with `clparse combine`")


# ----------------------------------------------------------------------------- combine


@pytest.mark.parametrize("theta", ["-1", "0", "nan", "inf"])
def test_combine_member_theta_out_of_range_is_a_usage_error(trained_db: Path, tmp_path: Path,
                                                            theta: str) -> None:
    """--member RUN@-1 (or 0, nan, inf) passed the option's check and failed once the member opened with
    "Θ̂ must be a positive number, got -1.0", naming neither the option nor the member."""
    dev = tmp_path / "dev.ptb"
    dev.write_text(GOLD)
    out = tmp_path / "c.sqlite"
    result = invoke(["combine", "--member", f"{trained_db}@{theta}", "--dev", dev, "-o", out])
    assert result.exit_code == 2
    said = f"Invalid value for '--member': '{trained_db}@{theta}': Θ̂ after @ must be a positive number"
    assert said in result.stderr
    assert not out.exists()


def test_combine_member_theta_is_stored_without_spaces(trained_db: Path, tmp_path: Path) -> None:
    """--member 'RUN@ 3' was stored (and shown, and named in later messages) as Θ̂ ' 3'."""
    dev = tmp_path / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:3]))
    combo = tmp_path / "c.sqlite"
    result = invoke(["combine", "--member", f"{trained_db}@ 3", "--dev", dev, "-o", combo, "--kbest", "1",
                     "--beam", "20", "--max-evaluations", "10"])
    assert result.exit_code == 0, result.stderr
    assert f"member {trained_db}@3: dev F1" in result.stdout


def test_compare_names_the_file_with_too_many_mismatches(tmp_path: Path) -> None:
    """compare stopped at MAX_ERROR with "more than 10 sentences with mismatched words; ..." without saying
    whether A or B had them."""
    gold, good, bad = tmp_path / "gold.ptb", tmp_path / "a.ptb", tmp_path / "b.ptb"
    gold.write_text(GOLD * 12)
    good.write_text(GOLD * 12)
    bad.write_text(GOLD.replace("dog", "cat") * 12)
    for a, b in ((good, bad), (bad, good)):
        result = invoke(["compare", gold, a, b])
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: {bad}: more than 10 sentences with mismatched words")


@pytest.mark.parametrize(("written", "hint"), [
    ('{"tokens": ["the"], "trees": []}\n', "; it looks like parse --format json output: eval reads trees"),
    ("-0.25\t" + GOLD + "\n", "; it looks like parse --kbest output, a score before each tree: eval scores"),
    ("# sentence 1, tree 1 of 2, score -0.25\n" + GOLD + "\n", "; it looks like parse --kbest output"),
])
def test_eval_of_parse_output_it_cannot_score_says_what_it_is(tmp_path: Path, written: str,
                                                              hint: str) -> None:
    """`parse --format json` or `--kbest` output given to eval: "text '{"tokens":' outside any bracket",
    with no word of what the file is or how to write one eval reads."""
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.txt"
    gold.write_text(GOLD)
    test.write_text(written)
    for args in (["eval", gold, test], ["eval", gold, test, "--one-per-line"], ["compare", gold, gold, test]):
        result = invoke(args)
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: {test}:1:1: text ")
        assert hint in result.stderr


def test_a_ptb_member_may_hold_failed_parses(trained_db: Path, tmp_path: Path) -> None:
    """Another parser's file with a failed parse, `()` or `(())`, was refused ("empty tree
    '()'"); it votes for nothing there, and its dev F1 counts it as a parse with no bracket."""
    from clparse.combine.run import MemberSpec, fit_members

    gold = list(read_trees(sample_path("dev")))[:2]
    dev, theirs = tmp_path / "dev.ptb", tmp_path / "theirs.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in gold))
    theirs.write_text(format_tree(gold[0]) + "\n(())\n")  # as the Berkeley parser writes a failure
    report = fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("ptb", theirs)], [dev],
                         tmp_path / "c.sqlite", k=1, beam=20, max_evaluations=10, progress=False)
    first, second = (evaluate([t], [t]).all for t in gold)
    both = 2 * first.gold_brackets / (2 * first.gold_brackets + second.gold_brackets)  # P 1, R of the first
    assert report.member_f1[1] == pytest.approx(100 * both)


@pytest.mark.parametrize("command", ["eval", "compare"])
def test_a_dash_for_a_tree_file_says_files_are_read(tmp_path: Path, command: str) -> None:
    """`parse ... | clparse eval GOLD -` said "File '-' does not exist" (parse reads - as standard input)."""
    gold = tmp_path / "gold.ptb"
    gold.write_text(GOLD)
    result = invoke([command, gold, "-", *([gold] if command == "compare" else [])], stdin=GOLD)
    assert result.exit_code == 2
    assert "'-': trees are read from files, not standard input" in result.stderr


def test_a_parse_of_punctuation_alone_is_not_called_an_empty_parse(tmp_path: Path) -> None:
    """A sentence of punctuation alone, "(ROOT (. .))", is skipped as EVALB skips it, but eval said "1 empty
    parse(s) skipped": the parse was not empty, and the user looked for a failure that was not there."""
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.ptb"
    gold.write_text(GOLD + "(ROOT (. .))\n(ROOT (S (NN a)))\n")
    test.write_text(GOLD + "(ROOT (. .))\n()\n")
    result = invoke(["eval", gold, test])
    assert result.exit_code == 0
    assert result.stderr == ("warning: sentence 2: no word left to score (the parse's tokens are all delete "
                             "labels, such as punctuation): skipped, as EVALB does\n"
                             "warning: 1 empty parse(s) skipped, as EVALB does\n")
    assert "Number of Skip  sentence  =      2" in result.stdout


@pytest.mark.parametrize("one_per_line", [False, True])
def test_a_failed_parse_written_as_berkeley_writes_it_is_skipped(tmp_path: Path, one_per_line: bool) -> None:
    """"(())", the Berkeley parser's failed parse, which EVALB skips (status 2), stopped eval with "empty
    tree '()' (a bracket written as a word? ...)"."""
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.txt"
    gold.write_text(GOLD + "(ROOT (S (NN a)))\n")
    test.write_text(GOLD + "( () )\n")
    result = invoke(["eval", gold, test, "--json", *(["--one-per-line"] if one_per_line else [])])
    assert result.exit_code == 0, result.stderr
    totals = json.loads(result.stdout)["all"]
    assert (totals["sentences"], totals["skipped_sentences"], totals["f1"]) == (2, 1, 100.0)
    assert result.stderr == "warning: 1 empty parse(s) skipped, as EVALB does\n"


def test_a_local_cluster_that_cannot_start_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """api.parse(dask="local:N") from a script without a main guard: Dask's workers re-ran the script and
    the caller got a traceback ending in "RuntimeError: Nanny failed to start."."""
    distributed = pytest.importorskip("distributed")
    from clparse.errors import ClparseError
    from clparse.parse_dask import connect

    def refuse(**kwargs: Any) -> None:
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    with pytest.raises(ClparseError, match=re.escape(
            "could not start the local Dask cluster local:2: Nanny failed to start; from a script, parse "
            "under `if __name__ == '__main__':`")):
        connect("local:2")
