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


@pytest.mark.parametrize(("encoding", "bom", "name"), [
    ("utf-16-le", b"\xff\xfe", "UTF-16"), ("utf-16-be", b"\xfe\xff", "UTF-16"),
    ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32"), ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32"),
])
def test_a_treebank_saved_as_utf32_is_named_as_sentence_files_name_it(tmp_path: Path, encoding: str,
                                                                       bom: bytes, name: str) -> None:
    """A treebank saved as UTF-32 was "UTF-16 text" (little-endian) or not named at all (big-endian),
    while a sentence file said UTF-32: the two readers kept their own lists of byte-order marks."""
    from clparse.read.sentences import wide_text

    path = tmp_path / "wide.mrg"
    path.write_bytes(bom + "(S (NP (DT a) (NN b)))\n".encode(encoding))
    assert str(wide_text(str(path), bom)).startswith(f"{path}:1: {name} text")
    with pytest.raises(TreebankError) as error:
        list(read_trees(path))
    assert str(error.value).endswith(f"binary data (NUL byte): not a treebank file ({name} text: save it as "
                                     "UTF-8)")
