"""`api.report(db, plot=...)` into a folder that does not exist: the CLI's one-line error, not matplotlib's
raw FileNotFoundError."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from clparse.errors import ClparseError


def test_a_plot_into_a_missing_folder_is_one_clear_error(db_copy: Path, tmp_path: Path) -> None:
    api.calibrate(db_copy, thetas=[8], settings=api.calibration_settings(db_copy, beam=1))
    calibrated_db = db_copy
    target = tmp_path / "missing" / "x.png"
    with pytest.raises(ClparseError) as caught:
        api.report(calibrated_db, plot=target)
    assert str(caught.value) == f"{target}: No such file or directory"
    result = CliRunner().invoke(main, ["report", "--db", str(calibrated_db), "--plot", str(target)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {caught.value}\n"
