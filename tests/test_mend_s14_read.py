"""Contracts of the shared reading helpers the simplicity review of 2026-11-27 made (behaviour unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.errors import TreebankError
from clparse.read.ptb import empty_parses_unwrapped, format_tree, read_trees


def test_empty_parses_unwrapped_keeps_columns_and_leaves_a_bracketed_word() -> None:
    assert empty_parses_unwrapped("(()) ( () )\n") == "()   ()    \n"
    assert empty_parses_unwrapped("(( ))\n") == "(( ))\n"  # "( )" is a word to evalb.c
    assert empty_parses_unwrapped("(S (NP (DT a)))") == "(S (NP (DT a)))"


@pytest.mark.parametrize("skip_bad", [False, True])
def test_read_trees_reads_a_wrapped_empty_parse_only_when_asked(tmp_path: Path, skip_bad: bool) -> None:
    path = tmp_path / "parses.txt"
    path.write_text("(())\n(S (NN x))\n", encoding="utf-8")
    trees = list(read_trees(path, allow_empty=True, wrapped_empty=True, skip_bad=skip_bad))
    assert [format_tree(tree) for tree in trees] == ["()", "(S (NN x))"]
    with pytest.raises(TreebankError, match=r":1:2: empty tree '\(\)'"):
        list(read_trees(path, allow_empty=True))
