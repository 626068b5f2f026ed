"""Faults of eval, compare, combine and parsing a combination (session 13, helper B); each test failed before
its fix."""

from __future__ import annotations

import json
from pathlib import Path

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
