from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given

from clparse.errors import TreebankError
from clparse.read import (
    ReadReport,
    Tree,
    format_tree,
    format_tree_indented,
    parse_tree,
    read_treebank,
    read_trees,
    unwrap,
    write_trees,
)
from tests.strategies import trees


def write(tmp_path: Path, text: str | bytes, name: str = "x.mrg") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_many_trees_any_extension_and_wrappers(tmp_path: Path) -> None:
    path = write(tmp_path, "( (S (NP (DT a)) (VP (VBD b))) )\n\n(ROOT (NP (NN c)))\n"
                           "(TOP (X (Y d)))(NP (NN e))\n", "t.ptb")
    got = list(read_trees(path))
    assert [t.label for t in got] == ["", "ROOT", "TOP", "NP"]
    assert [unwrap(t).label for t in got] == ["S", "NP", "X", "NP"]
    assert got[0].words() == ["a", "b"]


def test_spans_are_half_open_word_offsets() -> None:
    tree = parse_tree("(S (NP (DT the) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))))")
    assert tree.labeled_spans() == [(0, 4, "S"), (0, 2, "NP"), (2, 4, "VP"), (3, 4, "ADVP")]
    assert len(tree) == 4 and tree.tags() == ["DT", "NN", "VBD", "RB"]


def test_brackets_in_words_use_ptb_escapes() -> None:
    tree = parse_tree("(NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-))")
    assert tree.tags() == ["-LRB-", "NN", "-RRB-"]


@pytest.mark.parametrize(
    ("text", "line", "col", "problem"),
    [
        ("(S (NP (DT a))\n", 1, 1, "unbalanced '('"),
        ("(S (NP (DT a))))\n", 1, 16, "unbalanced ')'"),
        ("(S (NP (DT a)) ())\n", 1, 16, "empty tree '()'"),
        ("(S (NP a (NN b)))\n", 1, 8, "leaf 'a' without a tag"),
        ("(S\n  (NP (DT a b)))\n", 2, 13, "more than one word"),
        ("(S (NP))\n", 1, 4, "'NP' has no children"),
        ("word (S (X y))\n", 1, 1, "outside any bracket"),
        ("(S ((NP (X y))))\n", 1, 5, "phrase without a label"),
    ],
)
def test_malformed_input_names_file_line_column(tmp_path: Path, text: str, line: int, col: int,
                                                problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TreebankError) as info:
        list(read_trees(path))
    err = info.value
    assert (err.path, err.line, err.column) == (str(path), line, col)
    assert problem in err.problem
    assert str(err).startswith(f"{path}:{line}:{col}: ")


def test_empty_file_and_binary_garbage(tmp_path: Path) -> None:
    with pytest.raises(TreebankError, match="no trees"):
        list(read_trees(write(tmp_path, "", "empty.mrg")))
    with pytest.raises(TreebankError, match="NUL byte"):
        list(read_trees(write(tmp_path, b"(S (X y))\n\x00\x01\x02", "bin.mrg")))
    with pytest.raises(TreebankError, match="not UTF-8"):
        list(read_trees(write(tmp_path, b"(S (X \xff\xfe))", "bad.mrg")))


def test_skip_bad_reports_and_keeps_good_trees(tmp_path: Path) -> None:
    text = "(S (X a))\n\n(S (X b)\n\n(S (X c))\n(S (Y d e))\n(S (X f))\n"
    report = ReadReport()
    got = list(read_trees(write(tmp_path, text), skip_bad=True, report=report))
    assert [t.words() for t in got] == [["a"], ["c"], ["f"]]
    assert report.trees == 3 and report.skipped == 2
    assert report.first_errors is not None and ":3:1:" in report.first_errors[0]



def test_skip_bad_names_where_an_unclosed_tree_ends_in_file_lines(tmp_path: Path) -> None:
    """An unclosed tree skipped mid-file ends where the next tree starts (a file line), not "at end of file
    (line 1)" of its own text; the last tree of the file does end at the end of the file."""
    report = ReadReport()
    got = list(read_trees(write(tmp_path, "(S (X a))\n(S (X b)\n(S (X c))\n(S (X d)\n"), skip_bad=True,
                          report=report))
    assert [t.words() for t in got] == [["a"], ["c"]] and report.skipped == 2
    assert report.first_errors is not None
    assert report.first_errors[0].endswith(":2:1: unbalanced '(': tree is not closed before the next tree "
                                           "(line 3)")
    assert report.first_errors[1].endswith(":4:1: unbalanced '(': tree is not closed at end of file")

def test_read_treebank_streams_several_files(tmp_path: Path) -> None:
    a = write(tmp_path, "(S (X a))", "a.mrg")
    b = write(tmp_path, "(S (X b))\n(S (X c))", "b.txt")
    assert [t.words()[0] for t in read_treebank([a, b])] == ["a", "b", "c"]


@given(trees())
def test_write_then_read_is_identity(tree: Tree) -> None:
    assert parse_tree(format_tree(tree)) == tree
    assert parse_tree(format_tree_indented(tree)) == tree
    wrapped = Tree("", [tree])
    assert parse_tree(format_tree(wrapped)) == wrapped


@given(trees())
def test_write_trees_both_layouts_round_trip(tree: Tree) -> None:
    for indented in (False, True):
        out = io.StringIO()
        write_trees([tree, tree], out, indented=indented)
        lines = out.getvalue().splitlines()
        from clparse.read.ptb import iter_trees_from_lines

        assert list(iter_trees_from_lines(lines)) == [tree, tree]
