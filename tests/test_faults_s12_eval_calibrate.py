"""Faults a user met in eval, compare, calibrate, report and explain (session 12, helper C); each test failed
before its fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clparse.calibrate.run import CalibrationSettings, calibrate, dev_trees
from clparse.data import sample_path
from clparse.errors import ParameterError
from clparse.evaluate import EvalbParams, evaluate_sentence
from clparse.preprocess.pipeline import sentence_length
from clparse.read import parse_tree, read_trees
from clparse.read.ptb import format_tree
from tests.conftest import invoke_cli, read_rows

RAN = "(S (NP (PRP I)) (VP (VBD ran) (ADVP (RB fast))))"


def _counts(gold: str, test: str, params: EvalbParams = EvalbParams()) -> tuple[str, int, int, int]:
    r = evaluate_sentence(1, parse_tree(gold), parse_tree(test), params)
    return r.status, r.matched, r.gold_brackets, r.test_brackets


# ----------------------------------------------------------------------------- the bare ( (S ...)) wrapper


def test_bare_wrapper_is_not_counted_by_default() -> None:
    """A gold file in the Penn Treebank's layout, ``( (S ...))``, against clparse's ``(ROOT (S ...))``: the
    bare wrapper was a gold bracket no test bracket could match, so recall lost one bracket per sentence
    (exit status 0), while the ROOT and TOP wrappers, the same thing, are not counted."""
    bare, root, top = f"( {RAN})", f"(ROOT {RAN})", f"(TOP {RAN})"
    for gold in (bare, root, top):
        for test in (bare, root, top):
            assert _counts(gold, test) == ("ok", 4, 4, 4), (gold, test)
    collins = EvalbParams.collins()  # EVALB's COLLINS.prm exactly, as before: the bare wrapper counts
    assert _counts(bare, bare, collins) == ("ok", 5, 5, 5)
    assert _counts(bare, root, collins) == ("ok", 4, 5, 5)


def test_calibration_scores_a_bare_wrapped_dev_file_as_a_root_wrapped_one(
        copy_trained_db: Callable[[], Path], tmp_path: Path) -> None:
    """`calibrate --dev` on the same sentences in PTB layout gave a lower F1 and 0 % exact match."""
    db = copy_trained_db()
    gold = dev_trees(db)
    assert all(tree.label == "ROOT" for tree in gold)
    root, bare = tmp_path / "root.ptb", tmp_path / "bare.ptb"
    root.write_text("".join(format_tree(t) + "\n" for t in gold))
    bare.write_text("".join("( " + format_tree(t)[len("(ROOT "):] + "\n" for t in gold))
    assert all(tree.label == "" for tree in read_trees(bare))
    settings = CalibrationSettings(beam=1)
    by_root = calibrate(db, [root], thetas=[8.0], settings=settings).points[0]
    by_bare = calibrate(db, [bare], thetas=[8.0], settings=settings).points[0]
    assert (by_bare.recall, by_bare.precision, by_bare.f1, by_bare.exact) == \
        (by_root.recall, by_root.precision, by_root.f1, by_root.exact)
    assert by_root.exact > 0


# ----------------------------------------------------------------------------- calibrate refusals


def _calibrations(db: Path) -> int:
    return int(read_rows(db, "SELECT count(*) FROM calibrations")[0][0])


def test_dev_files_with_no_tree_within_the_length_limit(copy_trained_db: Callable[[], Path],
                                                        tmp_path: Path) -> None:
    """Dev files whose trees are all longer than the run's limit: SQLAlchemy warnings, "database error: NOT
    NULL constraint failed", and an empty calibration left in the database for `report` to list."""
    db = copy_trained_db()
    long = tmp_path / "long.ptb"
    trees = [t for t in read_trees(sample_path("dev")) if sentence_length(t) > 15]
    long.write_text("".join(format_tree(t) + "\n" for t in trees))
    before = _calibrations(db)
    with pytest.raises(ParameterError, match=f"none of the {len(trees)} trees has at most 15 words"):
        calibrate(db, [long], thetas=[8.0], settings=CalibrationSettings(beam=1))
    assert _calibrations(db) == before
    result = invoke_cli(["calibrate", "--db", db, "--dev", long, "--beam", "1", "--thetas", "8"])
    assert result.exit_code == 2 and "none of the" in result.stderr and "Traceback" not in result.stderr
    assert "SAWarning" not in result.stderr and _calibrations(db) == before


def test_a_grid_with_no_trained_theta_is_an_error(copy_trained_db: Callable[[], Path]) -> None:
    """Every Θ̂ of the grid below what the labels are trained to: each was skipped with a warning, an empty
    table printed, exit status 0, and an empty calibration stored (listed by `report`)."""
    db = copy_trained_db()
    before = _calibrations(db)
    nothing = calibrate(db, thetas=[0.5, 0.25], settings=CalibrationSettings(beam=3))
    assert (nothing.calibration_id, nothing.points, sorted(nothing.skipped)) == (0, [], [0.25, 0.5])
    result = invoke_cli(["calibrate", "--db", db, "--beam", "3", "--thetas", "0.5,0.25"])
    assert result.exit_code == 1 and "no Θ̂ of the grid can be calibrated" in result.stderr
    assert "past 0.5" in result.stderr and "Θ̂ = " not in result.stdout
    assert _calibrations(db) == before
    # one trained Θ̂ among them: calibrated, the other skipped with a warning, as before
    found = calibrate(db, thetas=[0.5, 8.0], settings=CalibrationSettings(beam=3))
    assert [p.theta for p in found.points] == [8.0] and list(found.skipped) == [0.5]


# ----------------------------------------------------------------------------- files of different lengths


def test_a_tree_count_mismatch_names_the_files(tmp_path: Path) -> None:
    """"test file has more trees: the other ends before sentence 3" named no file; in `compare` it did not
    say whether A or B was the longer."""
    gold, short, long = tmp_path / "gold.ptb", tmp_path / "short.ptb", tmp_path / "long.ptb"
    gold.write_text(f"(ROOT {RAN})\n" * 2)
    short.write_text(f"(ROOT {RAN})\n")
    long.write_text(f"(ROOT {RAN})\n" * 3)
    result = invoke_cli(["eval", gold, short])
    assert result.exit_code == 1
    assert f"{gold}: gold file has more trees than {short}, which ends after 1 tree(s)" in result.stderr
    result = invoke_cli(["eval", gold, long])
    assert f"{long}: test file has more trees than {gold}, which ends after 2 tree(s)" in result.stderr
    result = invoke_cli(["compare", gold, gold, long, "--trials", "10"])
    assert result.exit_code == 1 and f"{long}: test file has more trees" in result.stderr


# ----------------------------------------------------------------------------- calibrate --per-label --passes


def test_fewer_passes_than_stored_replays_every_stored_trial(copy_trained_db: Callable[[], Path]) -> None:
    """`--per-label --passes 1` after a run with more passes printed the Θ̂ and F1 of the first pass alone,
    while `--theta best` parses with every stored trial's (another parser than the one printed)."""
    from clparse.calibrate.per_label import calibrate_per_label
    from clparse.store.calibration import Calibrations

    db = copy_trained_db()
    settings = CalibrationSettings(beam=1)
    calibrate(db, thetas=[20.0, 8.0, 4.0], settings=settings)
    first = calibrate_per_label(db, settings, passes=1)
    more = calibrate_per_label(db, settings, passes=3)
    assert more.trials > 0 and more.replayed == first.trials  # the later passes ran
    again = calibrate_per_label(db, settings, passes=1)
    store = Calibrations(db)
    stored = store.trials(again.calibration_id)
    assert (again.trials, again.replayed) == (0, len(stored))
    assert again.f1 == more.f1 and again.thetas == more.thetas
    assert again.thetas == (store.per_label_thetas(again.calibration_id) or again.thetas)


# ----------------------------------------------------------------------------- parameter files


def test_quote_label_is_named_as_unsupported_not_unknown(tmp_path: Path) -> None:
    """A parameter file of a later EVALB (benepar's nk.prm) was refused with "unknown keyword", which it is
    not: the message now says what QUOTE_LABEL is and what to do."""
    from clparse.errors import ConfigurationError

    prm = tmp_path / "nk.prm"
    prm.write_text("DELETE_LABEL TOP\nQUOTE_LABEL POS\n")
    with pytest.raises(ConfigurationError, match=r"nk.prm:2: QUOTE_LABEL .* is not supported; remove"):
        EvalbParams.from_prm_file(prm)


# ----------------------------------------------------------------------------- two calibrations at once


def test_a_point_stored_meanwhile_by_another_calibration_is_kept(copy_trained_db: Callable[[], Path]) -> None:
    """Two `calibrate` commands of the same settings on one database: the one finishing a Θ̂ second failed
    with "database error: UNIQUE constraint failed" (exit 1), as if the file were damaged."""
    db = copy_trained_db()
    settings = CalibrationSettings(beam=1)
    other: list[float] = []

    def meanwhile(theta: float, done: int, total: int) -> None:
        if not other:  # while this one parses its first sentence, another calibration finishes the Θ̂
            other.append(calibrate(db, thetas=[theta], settings=settings).points[0].f1)

    result = calibrate(db, thetas=[8.0], settings=settings, on_sentence=meanwhile)
    [point] = result.points
    assert other == [point.f1] and point.resumed and result.best_theta == 8.0
    assert read_rows(db, "SELECT count(*) FROM calibration_points") == [(1,)]


def test_a_trial_stored_meanwhile_by_another_per_label_run_is_kept(
        copy_trained_db: Callable[[], Path]) -> None:
    """The same for two `calibrate --per-label` commands: the second to finish a trial failed with "database
    error: UNIQUE constraint failed"."""
    from clparse.calibrate.per_label import calibrate_per_label

    db = copy_trained_db()
    settings = CalibrationSettings(beam=1)
    calibrate(db, thetas=[20.0, 8.0, 4.0], settings=settings)
    other = []

    def meanwhile(label: str, theta: float, done: int, total: int) -> None:
        if not other:
            other.append(calibrate_per_label(db, settings, passes=1))

    result = calibrate_per_label(db, settings, passes=1, on_sentence=meanwhile)
    assert other[0].trials > 0 and result.history == other[0].history
    assert result.thetas == other[0].thetas and result.f1 == other[0].f1


def test_dev_trees_over_the_length_limit_are_said_to_be_left_out(copy_trained_db: Callable[[], Path]) -> None:
    """`calibrate --dev` of the sample's 75 dev trees scored 20 of them (those within the run's limit of 15
    words) and said nothing: the F1 read as the whole file's."""
    db = copy_trained_db()
    dev = sample_path("dev")
    result = invoke_cli(["calibrate", "--db", db, "--dev", dev, "--beam", "1", "--thetas", "8"])
    within = sum(sentence_length(t) <= 15 for t in read_trees(sample_path("dev")))
    assert result.exit_code == 0 and within < 75
    assert f"dev: {within} of the 75 trees, those of at most 15 words" in result.stderr
    result = invoke_cli(["calibrate", "--db", db, "--beam", "1", "--thetas", "8"])  # the stored dev set
    assert result.exit_code == 0 and "dev:" not in result.stderr


def test_options_calibrate_would_ignore_are_refused(db_copy: Path) -> None:
    """`--passes` without `--per-label`, and `--points` with `--thetas` or `--per-label`, were ignored in
    silence (the calibration ran as if they had not been given)."""
    for args, said in ((["--passes", "3"], "--passes counts the passes of --per-label"),
                       (["--points", "3", "--thetas", "8"], "the default grid: not with --thetas"),
                       (["--points", "3", "--per-label"], "not with --per-label")):
        result = invoke_cli(["calibrate", "--db", db_copy, "--beam", "1", *args])
        assert result.exit_code == 2 and said in result.stderr, (args, result.stderr)
    assert read_rows(db_copy, "SELECT count(*) FROM calibrations") == [(0,)]  # nothing written
