"""A directory given as the database (`Parser.from_db`, `api.open_parser`, the spaCy component's `db`): one
clear ClparseError naming the path, not a raw IsADirectoryError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clparse import api
from clparse.errors import ClparseError
from clparse.parser import Parser


def _spacy(path: Path) -> Any:
    spacy = pytest.importorskip("spacy")
    import clparse.spacy_component  # noqa: F401  (registers the factory)

    return spacy.blank("en").add_pipe("clparse", config={"db": str(path)})


@pytest.mark.parametrize("opening", [api.open_parser, Parser.from_db, _spacy])
def test_a_directory_is_named(tmp_path: Path, opening: Callable[[Path], Any]) -> None:
    with pytest.raises(ClparseError) as caught:
        opening(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path}: a directory, not a database file")
