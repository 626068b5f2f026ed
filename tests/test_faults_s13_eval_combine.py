"""Faults of eval, compare, combine and parsing a combination (session 13, helper B); each test failed before
its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clparse.data import sample_path
from clparse.errors import ParameterError
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


@pytest.mark.xfail(strict=True, reason="needs helper B's change to clparse/cli/parsing.py and clparse/api.py "
                                       "(refuse_combination before open_parser); drop this mark with it")
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
