"""Faults a reviewer found in `clparse report` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.store.calibration import Calibrations
from tests.conftest import invoke_cli


@pytest.fixture(scope="module")
def calibrated(copy_trained_db: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the trained sample with one greedy calibration of two points (never written again)."""
    from clparse import api

    db = copy_trained_db()  # type: ignore[operator]
    api.calibrate(db, thetas=[40.0, 10.0], settings=api.calibration_settings(db, beam=1))
    return Path(db)


def test_plot_without_a_suffix_is_written_where_it_says(calibrated: Path, tmp_path: Path) -> None:
    # matplotlib wrote FILE.png for --plot FILE while the command said "figure written to FILE"
    figure = tmp_path / "figure"
    result = invoke_cli(["report", "--db", calibrated, "--plot", figure])
    assert result.exit_code == 0, result.output
    assert f"figure written to {figure}" in result.stdout
    assert figure.read_bytes().startswith(b"\x89PNG")
    assert not (tmp_path / "figure.png").exists()


@pytest.mark.parametrize("name", ["figure.txt", "copy.sqlite"])
def test_plot_of_an_unknown_format_is_one_line(calibrated: Path, tmp_path: Path, name: str) -> None:
    # matplotlib's ValueError "Format 'txt' is not supported" came out as a traceback
    result = invoke_cli(["report", "--db", calibrated, "--plot", tmp_path / name])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "--plot" in result.stderr and "png" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / name).exists()


def test_plot_on_a_full_disk_fails(calibrated: Path) -> None:
    # the figure's bytes were written with no check that they reached the file: exit status 0 on a full disk
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    result = invoke_cli(["report", "--db", calibrated, "--plot", "/dev/full"])
    assert result.exit_code == 1, result.output
    assert "/dev/full" in result.stderr and "space" in result.stderr
    assert "figure written" not in result.stdout


def test_plot_over_the_database_is_refused(tmp_path: Path, calibrated: Path) -> None:
    from tests.conftest import backup_database

    db = backup_database(calibrated, tmp_path / "run.png")
    before = db.read_bytes()
    result = invoke_cli(["report", "--db", db, "--plot", db])
    assert result.exit_code == 2, result.output
    assert db.read_bytes() == before


def test_best_theta_line_names_the_calibration_that_theta_best_uses(copy_trained_db: object) -> None:
    # two calibrations each said "parse with --theta best, or this number in full"; --theta best reads only
    # the most recently updated one
    from clparse import api

    db = copy_trained_db()  # type: ignore[operator]
    api.calibrate(db, thetas=[40.0, 10.0], settings=api.calibration_settings(db, beam=1))
    api.calibrate(db, thetas=[20.0], settings=api.calibration_settings(db, beam=2))
    text = api.report(db)
    first, second = text.split("calibration 2:")
    assert "parse with --theta best" not in first and "--theta best reads calibration 2" in first
    assert "parse with --theta best" in second


def test_best_theta_line_after_a_per_label_calibration(copy_trained_db: object) -> None:
    # after calibrate --per-label, --theta best parses with the per-label Θ̂, not with the number the line gave
    from clparse import api

    db = copy_trained_db()  # type: ignore[operator]
    api.calibrate(db, thetas=[40.0, 10.0], settings=api.calibration_settings(db, beam=1))
    store = Calibrations(db, readonly=False)
    store.add_trial(1, 0, "NP", 40.0, 99.0, True, 0.1)  # as calibrate --per-label stores an accepted trial
    text = api.report(db)
    assert "or this number in full" not in text
    assert "per-label" in text.split("best Θ̂ =")[1].splitlines()[0]
