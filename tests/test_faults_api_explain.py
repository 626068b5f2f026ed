"""clparse.explain.explain names a bad ``top`` before parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.errors import ParameterError
from clparse.explain import explain
from clparse.parser import Parser


@pytest.mark.parametrize("top", [1.5, "3", True, -1])
def test_explain_refuses_a_top_that_is_not_a_count(trained_db: Path, top: object) -> None:
    """1.5 failed after the parse with "slice indices must be integers", "3" with a TypeError."""
    parser = Parser.from_db(trained_db, theta=3.0, beam=1)
    with pytest.raises(ParameterError, match="top"):
        explain(parser, "The dog barked .", top=top)  # type: ignore[arg-type]
    assert explain(parser, "The dog barked .", top=2).top == 2
