"""api.parse, api.tag and api.count_input name a missing input file as the command line does."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.errors import ParameterError


def test_a_missing_or_directory_input_is_one_parameter_error(trained_db: Path, tmp_path: Path) -> None:
    """A FileNotFoundError (or IsADirectoryError) from deep inside the reader before."""
    missing = str(tmp_path / "nope.txt")
    for call in (lambda f: list(api.parse(trained_db, [f], theta=3.0)),
                 lambda f: list(api.tag(trained_db, [f])),
                 lambda f: api.count_input([f]),
                 lambda f: list(api.parse(trained_db, [f], "text", theta=3.0))):
        for name in (missing, str(tmp_path)):
            with pytest.raises(ParameterError, match="files") as caught:
                call(name)
            assert name in str(caught.value)
