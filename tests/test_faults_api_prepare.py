"""api.prepare names a bad parameter before anything is made (a string read one character at a time, a
fraction where a count goes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.data import sample_path
from clparse.errors import ParameterError


@pytest.mark.parametrize(("name", "value"), [
    ("skip_steps", "raise_punctuation"),  # "unknown preprocessing setting 'r'"
    ("templates", "length"),  # "unknown template 'e'"
    ("templates", "none"),
    ("max_words", 1.5),  # taken, and stored as the run's setting
    ("max_words", 15.0),
    ("context", 2.0),
    ("max_children", True),
    ("jobs", 0),  # taken in silence with gold training tags
])
def test_prepare_names_a_bad_parameter_and_makes_no_file(tmp_path: Path, name: str, value: object) -> None:
    db = tmp_path / "run.sqlite"
    with pytest.raises(ParameterError) as caught:
        api.prepare(db, [sample_path("train")], **{name: value})  # type: ignore[arg-type]
    assert caught.value.parameter == name
    if isinstance(value, str):
        assert "not one name" in str(caught.value)
    assert not db.exists()
