"""Calibration: points stored as they finish, the best Θ̂, reports, resuming after a stop or a kill.

Every test calibrates its own copy of the session's trained database (every label trained until
Θ < 3), greedily (beam 1) on the 20 stored dev sentences, so one Θ̂ takes about two seconds.
"""

from __future__ import annotations

import dataclasses
import inspect
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clparse.cli import main
from clparse.calibrate.report import format_report
from clparse.calibrate.run import CalibrationResult, CalibrationSettings, calibrate, dev_trees
from tests.conftest import read_rows

CLPARSE = Path(sys.executable).with_name("clparse")
THETAS = [20.0, 8.0, 4.0]
SETTINGS = CalibrationSettings(beam=1)
POINT_COLUMNS = ("calibration_id", "theta", "trees", "splits", "sentences", "fallbacks", "recall",
                 "precision", "f1", "exact", "seconds", "finished_at", "completions")
TIMEOUT = 180.0  # seconds any clparse process may take before the test fails instead of hanging


def invoke(args: list[str], stdin: str | None = None) -> Result:
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    else:
        runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def stored_points(db: Path) -> dict[float, tuple]:
    """Θ̂ -> the whole calibration_points row (finished_at and the measured seconds included)."""
    rows = read_rows(db, f"SELECT {', '.join(POINT_COLUMNS)} FROM calibration_points ORDER BY theta DESC")
    return {row[1]: row for row in rows}


@pytest.fixture(scope="module")
def calibrated(copy_trained_db: Callable[[], Path]) -> tuple[Path, CalibrationResult]:
    db = copy_trained_db()
    return db, calibrate(db, thetas=THETAS, settings=SETTINGS)


def test_points_and_best_theta(calibrated: tuple[Path, CalibrationResult]) -> None:
    _, result = calibrated
    assert sorted(p.theta for p in result.points) == sorted(THETAS)
    assert not result.skipped
    for p in result.points:
        assert 0 <= p.recall <= 100 and 0 <= p.precision <= 100 and 0 <= p.f1 <= 100
        assert p.sentences == 20 and not p.resumed
        assert 0 <= p.fallbacks <= p.sentences and p.trees > 0 and p.splits > 0
    best = max(result.points, key=lambda p: (p.f1, p.theta))  # ties: the larger Θ̂ (fewer splits)
    assert result.best_theta == best.theta
    by_theta = sorted(result.points, key=lambda p: -p.theta)  # training proceeds: more trees as Θ̂ falls
    assert [p.trees for p in by_theta] == sorted(p.trees for p in by_theta)
    assert [p.splits for p in by_theta] == sorted(p.splits for p in by_theta)


def test_rows_are_stored(calibrated: tuple[Path, CalibrationResult]) -> None:
    db, result = calibrated
    [(calibration_id, best, settings)] = read_rows(
        db, "SELECT id, best_theta, settings_json FROM calibrations")
    assert calibration_id == result.calibration_id and best == result.best_theta
    assert '"beam": 1' in settings
    points = stored_points(db)
    assert sorted(points) == sorted(THETAS)
    for p in result.points:
        row = points[p.theta]
        assert row[0] == calibration_id
        assert row[2:11] == (p.trees, p.splits, p.sentences, p.fallbacks, p.recall, p.precision, p.f1,
                             p.exact, p.seconds)
        assert row[11]  # finished_at
        assert row[12] == p.completions == 0  # beam 1 never reaches the pop cap
    labels = read_rows(db, "SELECT theta, label, gold, test, matched, f1 FROM calibration_labels")
    assert {row[0] for row in labels} == set(THETAS)
    assert {"NP", "VP", "S"} <= {row[1] for row in labels}
    for theta in THETAS:  # per-label brackets add up to the totals
        rows = [row for row in labels if row[0] == theta]
        gold, test, matched = (sum(row[i] for row in rows) for i in (2, 3, 4))
        assert 0 <= matched <= min(gold, test)
        point = next(p for p in result.points if p.theta == theta)
        assert point.recall == pytest.approx(100.0 * matched / gold)
        assert point.precision == pytest.approx(100.0 * matched / test)
        assert all(0 <= row[5] <= 100 for row in rows)


def test_report_and_plot(calibrated: tuple[Path, CalibrationResult], tmp_path: Path) -> None:
    db, result = calibrated
    plot = tmp_path / "figure.png"
    report = invoke(["report", "--db", db, "--plot", plot, "--labels"])
    assert report.exit_code == 0, report.stderr
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "<- best" in report.stdout
    assert f"per label at Θ̂ = {result.best_theta:g}" in report.stdout
    assert f"figure written to {plot}" in report.stdout


def test_report_before_calibration_fails(trained_db: Path) -> None:
    report = invoke(["report", "--db", trained_db])
    assert report.exit_code == 1
    assert "no calibration yet" in report.stderr


def test_parse_theta_best_uses_calibrated_theta(calibrated: tuple[Path, CalibrationResult]) -> None:
    db, result = calibrated
    assert result.best_theta is not None
    parsed = invoke(["parse", "--db", db, "--theta", "best", "--beam", "1"], "The dog barked .\n")
    assert parsed.exit_code == 0, parsed.stderr
    assert f"parser at Θ̂ = {result.best_theta:g}:" in parsed.stderr
    assert parsed.stdout.count("\n") == 1


def test_stop_then_resume_without_recomputing(db_copy: Path) -> None:
    finished: list[float] = []

    def on_sentence(theta: float, done: int, total: int) -> None:
        if done == total:
            finished.append(theta)

    first = calibrate(db_copy, thetas=THETAS, settings=SETTINGS, on_sentence=on_sentence,
                      should_stop=lambda: len(finished) >= 1)
    assert finished == [20.0]
    assert [p.theta for p in first.points] == [20.0] and not first.points[0].resumed
    before = stored_points(db_copy)
    assert list(before) == [20.0]
    assert first.best_theta == 20.0

    seen: set[float] = set()
    second = calibrate(db_copy, thetas=THETAS, settings=SETTINGS,
                       on_sentence=lambda theta, done, total: seen.add(theta))
    assert second.calibration_id == first.calibration_id
    assert seen == {8.0, 4.0}  # only the missing Θ̂ were parsed
    assert {p.theta: p.resumed for p in second.points} == {20.0: True, 8.0: False, 4.0: False}
    resumed = next(p for p in second.points if p.theta == 20.0)
    assert resumed == dataclasses.replace(first.points[0], resumed=True)  # read back exactly
    after = stored_points(db_copy)
    assert sorted(after) == sorted(THETAS)
    assert after[20.0] == before[20.0]  # finished_at and everything else unchanged
    assert second.best_theta == max(second.points, key=lambda p: (p.f1, p.theta)).theta

    third = calibrate(db_copy, thetas=THETAS, settings=SETTINGS, on_sentence=lambda *_: pytest.fail("parsed"))
    assert all(p.resumed for p in third.points) and stored_points(db_copy) == after


def test_other_settings_start_another_calibration(db_copy: Path) -> None:
    first = calibrate(db_copy, thetas=[20.0], settings=SETTINGS)
    other = calibrate(db_copy, thetas=[20.0], settings=CalibrationSettings(beam=2))
    assert other.calibration_id != first.calibration_id
    assert not other.points[0].resumed
    assert len(read_rows(db_copy, "SELECT * FROM calibrations")) == 2


def test_kill_then_resume(db_copy: Path, tmp_path: Path) -> None:
    args = [str(CLPARSE), "calibrate", "--db", str(db_copy), "--thetas", "20,8,4", "--beam", "1"]
    with open(tmp_path / "first.out", "wb") as out, open(tmp_path / "first.err", "wb") as err:
        process = subprocess.Popen(args, stdout=out, stderr=err)
        try:
            deadline = time.monotonic() + TIMEOUT
            count = 0
            while count < 1:
                assert process.poll() is None, "calibrate ended before a point was stored"
                assert time.monotonic() < deadline, "no calibration point stored in time"
                time.sleep(0.02)
                count = read_rows(db_copy, "SELECT count(*) FROM calibration_points")[0][0]
            process.send_signal(signal.SIGKILL)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert read_rows(db_copy, "PRAGMA integrity_check") == [("ok",)]
    before = stored_points(db_copy)
    assert 1 <= len(before) < 3, f"killed too late: {len(before)} points already stored"
    assert 20.0 in before

    done = subprocess.run(args, check=False, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()
    after = stored_points(db_copy)
    assert sorted(after) == sorted(THETAS)
    for theta, row in before.items():
        assert after[theta] == row  # not parsed again: finished_at (and its measured seconds) unchanged
    assert read_rows(db_copy, "PRAGMA integrity_check") == [("ok",)]
    assert "<- best" in done.stdout.decode()


def test_theta_below_training_is_skipped(db_copy: Path) -> None:
    result = calibrate(db_copy, thetas=[0.01], settings=SETTINGS)
    assert result.points == [] and result.best_theta is None
    assert list(result.skipped) == [0.01]
    assert "NP: trained only down to" in result.skipped[0.01]
    assert read_rows(db_copy, "SELECT count(*) FROM calibration_points") == [(0,)]
    assert read_rows(db_copy, "SELECT count(*) FROM calibration_labels") == [(0,)]


def test_pop_cap_completions_are_counted(db_copy: Path) -> None:
    # One pop per sentence: every sentence of more than one inference is finished greedily, none is flat.
    result = calibrate(db_copy, thetas=[8.0], settings=CalibrationSettings(beam=1000, max_pops=1))
    [point] = result.points
    assert point.fallbacks == 0 and 0 < point.completions <= point.sentences
    assert stored_points(db_copy)[8.0][12] == point.completions
    assert "capped" in format_report(db_copy)


@pytest.mark.slow
def test_per_label_thetas_never_lower_dev_f1_and_resume_exactly(copy_trained_db: Callable[[], Path]) -> None:
    from clparse.calibrate.per_label import calibrate_per_label
    from clparse.evaluate import EvalbParams, evaluate
    from clparse.parser import Parser
    from clparse.rebuild.model import best_theta, load_model

    straight, stopped = copy_trained_db(), copy_trained_db()
    for db in (straight, stopped):
        calibrate(db, thetas=THETAS, settings=SETTINGS)
    whole = calibrate_per_label(straight, SETTINGS, passes=2)
    assert whole.f1 >= whole.start_f1 and whole.trials == len(whole.history) > 0
    # stop after two trials, then resume: the same trials, the same answer
    calls = iter(range(10_000))
    first = calibrate_per_label(stopped, SETTINGS, passes=2, should_stop=lambda: next(calls) >= 2 * 21)
    assert first.stopped
    rest = calibrate_per_label(stopped, SETTINGS, passes=2)
    assert rest.replayed >= 1 and rest.history == whole.history and rest.thetas == whole.thetas
    assert read_rows(stopped, "SELECT label, theta, f1, accepted FROM label_theta_steps ORDER BY step") == \
        read_rows(straight, "SELECT label, theta, f1, accepted FROM label_theta_steps ORDER BY step")
    # --theta best is the per-label assignment when a trial was kept, and gives the F1 it promised
    best = best_theta(straight)
    if whole.f1 > whole.start_f1:
        assert best == whole.thetas
    parser = Parser.from_db(straight, theta="best", beam=SETTINGS.beam)
    gold = dev_trees(straight)
    test = [parser.parse_tagged([(w, t) for w, t in g.tagged_words() if t != "-NONE-"]).tree for g in gold]
    assert evaluate(gold, test, EvalbParams()).all.f1 == whole.f1
    # one Θ̂ for every label, given as a mapping, is the same model as the number
    same = load_model(straight, {label: 8.0 for label in load_model(straight, 8.0).labels})
    plain = load_model(straight, 8.0)
    assert {k: e.trees for k, e in same.ensembles.items()} == {k: e.trees for k, e in plain.ensembles.items()}


def test_per_label_needs_a_global_calibration(db_copy: Path) -> None:
    result = invoke(["calibrate", "--db", str(db_copy), "--per-label", "--beam", "1"])
    assert result.exit_code == 1
    assert "no global calibration with these settings yet" in result.stderr


def test_report_shows_per_label_thetas(db_copy: Path) -> None:
    from clparse.calibrate.per_label import calibrate_per_label

    calibrate(db_copy, thetas=THETAS, settings=SETTINGS)
    result = calibrate_per_label(db_copy, SETTINGS, passes=1)
    report = format_report(db_copy)
    assert f"per-label Θ̂: {result.trials} trial(s)" in report
    for label, theta in result.thetas.items():
        if theta != result.start_theta:
            assert f"  {label:<8} {theta:.4g}" in report


def test_the_best_theta_is_printed_in_full_below_the_table() -> None:
    # the table rounds to 4 digits; a Θ̂ typed back from it can fall just above a tree's Θ and drop it
    from types import SimpleNamespace

    from clparse.calibrate.report import format_points

    best = 4.364987123456789
    point = SimpleNamespace(theta=best, trees=180, splits=400, recall=80.0, precision=81.0, f1=80.5,
                            exact=20.0, fallbacks=0, completions=0, seconds=1.0)
    text = format_points([point], best)
    assert "     4.365" in text and "<- best" in text
    assert text.splitlines()[-1] == f"best Θ̂ = {best!r} (parse with --theta best, or this number in full)"
    assert float(text.splitlines()[-1].split()[3]) == best
    assert "best Θ̂ =" not in format_points([point], None)


def test_calibrate_given_thetas_says_when_the_best_is_not_among_them(db_copy: Path) -> None:
    """`calibrate --thetas X` prints X's row and the calibration's best Θ̂: when that is another Θ̂, parsed by
    an earlier command, the line says so (it named a Θ̂ absent from the table, unexplained)."""
    whole = invoke(["calibrate", "--db", db_copy, "--thetas", "20,8,4", "--beam", "1"])
    assert whole.exit_code == 0, whole.stderr
    best = calibrate(db_copy, thetas=THETAS, settings=SETTINGS).best_theta
    assert whole.stdout.splitlines()[-1].startswith(f"best Θ̂ = {best!r} (") and "earlier" not in whole.stdout
    other = next(t for t in THETAS if t != best)
    one = invoke(["calibrate", "--db", db_copy, "--thetas", f"{other:g}", "--beam", "1"])
    assert one.exit_code == 0, one.stderr
    table = [line for line in one.stdout.splitlines()[2:] if not line.startswith("best")]
    assert len(table) == 1 and "<- best" not in table[0]
    assert one.stdout.splitlines()[-1].startswith(f"best Θ̂ = {best!r} (")
    assert "parsed earlier in this calibration, not in the table above" in one.stdout


@pytest.mark.parametrize("finishes, said", [(True, "stopping after the current Θ̂ (it is committed first)"),
                                            (False, "stopping now (the Θ̂ in flight is dropped and done again "
                                                    "on resume)")])
def test_the_stop_message_says_whether_the_work_in_flight_is_kept(finishes: bool, said: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from clparse.cli.options import stop_request

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        flag = stop_request("Θ̂", "clparse calibrate", finishes=finishes)
        flag.handle(signal.SIGINT, None)
    finally:
        for s, handler in handlers.items():
            signal.signal(s, handler)
    assert flag.requested
    assert said + "; run `clparse calibrate` again to resume" in capsys.readouterr().err
