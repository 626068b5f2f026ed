"""A calibration at a Θ̂ above every label's training is refused before anything is written: it left an
empty calibration (best NULL) that `clparse report` listed as an empty table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clparse import api
from clparse.errors import ClparseError
from tests.conftest import read_rows


def test_an_unusable_theta_writes_no_calibration(trained_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.sqlite"
    shutil.copyfile(trained_db, db)
    before = read_rows(db, "SELECT count(*) FROM calibrations")
    with pytest.raises(ClparseError, match="above every label's first"):
        api.calibrate(db, thetas=[1e9])
    assert read_rows(db, "SELECT count(*) FROM calibrations") == before
    with pytest.raises(ClparseError, match="no calibration yet"):  # not an empty table
        api.report(db)
