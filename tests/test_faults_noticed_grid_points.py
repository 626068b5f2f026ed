"""`api.calibration_grid(points=0)` returned [] in silence: points < 1 is a ParameterError naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.errors import ParameterError


@pytest.mark.parametrize("points", [0, -3])
def test_points_below_one_are_refused(trained_db: Path, points: int) -> None:
    with pytest.raises(ParameterError) as caught:
        api.calibration_grid(trained_db, points=points)
    assert caught.value.parameter == "points"
    assert api.calibration_grid(trained_db, points=1)  # one point still is a grid
