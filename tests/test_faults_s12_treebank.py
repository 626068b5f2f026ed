"""Faults a user met reading treebanks and preparing runs (session 12), each fixed and held here."""

from __future__ import annotations

from pathlib import Path

from clparse import api
from clparse.data import sample_path
from clparse.preprocess import preprocess_tree
from clparse.read import format_tree, parse_tree
from tests.conftest import read_rows


def _quick_prepare(db: Path, train: list[Path], dev: list[Path] | None = None, **settings: object) -> str:
    """api.prepare with the quickest tagger; returns what it warned."""
    warned: list[str] = []
    api.prepare(db, train, dev or [], tagger="perceptron", tagger_iterations=1, warn=warned.append,
                **settings)  # type: ignore[arg-type]
    return "\n".join(warned)


def _sample_plus(tmp_path: Path, extra: str, name: str = "train.mrg") -> Path:
    path = tmp_path / name
    path.write_text(sample_path("train").read_text(encoding="utf-8") + "\n" + extra, encoding="utf-8")
    return path


# ---------------------------------------------------------------- a wrapper with several children


def test_a_wrapper_with_several_children_is_the_root_not_a_phrase() -> None:
    for text in ["( (S (NP (PRP I)) (VP (VBD ran))) (. .))", "(ROOT (S (NP (PRP I)) (VP (VBD ran))) (. .))",
                 "(TOP (S (NP (PRP I)) (VP (VBD ran))) (. .))"]:
        result = preprocess_tree(parse_tree(text))
        assert result is not None
        assert format_tree(result.tree) == "(ROOT (S (NP (PRP I)) (VP (VBD ran))))", text
    two = "( (S (NP (PRP I)) (VP (VBD ran))) (S (NP (PRP we)) (VP (VBD sat))))"
    still_two = preprocess_tree(parse_tree(two))
    assert still_two is not None
    assert format_tree(still_two.tree).startswith("(ROOT (S (NP (PRP I))")


def test_prepare_trains_no_empty_label_from_a_bare_wrapper(tmp_path: Path) -> None:
    """It trained a label "" and stored "(ROOT ( (S ...)))", a tree no reader takes back."""
    train = _sample_plus(tmp_path, "( (S (NP (PRP I)) (VP (VBD ran))) (. .))\n"
                                   "(ROOT (S (NP (PRP We)) (VP (VBD sat))) (. .))\n")
    db = tmp_path / "run.sqlite"
    _quick_prepare(db, [train])
    labels = [name for (name,) in read_rows(db, "SELECT name FROM labels")]
    assert "" not in labels
    trees = [tree for (tree,) in read_rows(db, "SELECT tree FROM sentences")]
    assert "(ROOT (S (NP (PRP I)) (VP (VBD ran))))" in trees
    assert not any("(ROOT (ROOT" in tree or "( (" in tree for tree in trees)
