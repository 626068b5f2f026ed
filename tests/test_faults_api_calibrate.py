"""api.calibrate checks its Θ̂ list as calibration_grid does, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.errors import ParameterError


@pytest.mark.parametrize("thetas", ["3.0", [-1.0], [float("nan")], [float("inf")], ["3"], [True]])
def test_calibrate_names_bad_thetas(trained_db: Path, thetas: object) -> None:
    """A string was read one character at a time (ValueError: could not convert string to float: '.'),
    and other bad values were a ConfigurationError that did not name the parameter."""
    before = trained_db.read_bytes()
    with pytest.raises(ParameterError) as caught:
        api.calibrate(trained_db, thetas=thetas)  # type: ignore[arg-type]
    assert caught.value.parameter == "thetas"
    assert trained_db.read_bytes() == before
