"""Faults a demanding user met in eval, compare, calibrate, report, export, status and sql (review helper);
each test failed before its fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clparse.calibrate.run import CalibrationSettings, calibrate, dev_trees
from clparse.evaluate import EvalbParams
from clparse.evaluate.evalb import score_view
from clparse.read.ptb import format_tree
from tests.conftest import invoke_cli, read_rows


invoke = invoke_cli


# ----------------------------------------------------------------------------- calibrate --tags tagger


def test_tagger_calibration_scores_every_sentence(copy_trained_db: Callable[[], Path],
                                                   tmp_path: Path) -> None:
    """A token gold tags as a non-punctuation tag but the tagger as punctuation made the sentence an EVALB
    length error: left out of the point's F1 in silence, and past MAX_ERROR the calibration stopped."""
    db = copy_trained_db()
    gold = dev_trees(db)
    for tree in gold:  # "." is punctuation to EVALB; NFP is not, and the tagger says "."
        for leaf in tree.preterminals():
            if leaf.word == ".":
                leaf.label = "NFP"
    dev = tmp_path / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in gold) * 2)
    retagged = sum(any(leaf.label == "NFP" for leaf in tree.preterminals()) for tree in dev_trees(db, [dev]))
    assert retagged > EvalbParams().max_errors + 1  # enough to have stopped the calibration
    result = calibrate(db, [dev], thetas=[8.0], settings=CalibrationSettings(beam=1, tags="tagger"))
    assert [p.theta for p in result.points] == [8.0]
    stored = read_rows(db, "SELECT sum(gold) FROM calibration_labels")[0][0]
    expected = sum(len(score_view(t, EvalbParams()).brackets) for t in dev_trees(db, [dev]))
    assert stored == expected  # every sentence's gold brackets counted


# ----------------------------------------------------------------------------- calibrate after --per-label


def test_new_theta_refused_in_a_calibration_tuned_per_label(copy_trained_db: Callable[[], Path]) -> None:
    """A new global Θ̂ in a calibration already tuned per label could move its best Θ̂: the report then said
    the per-label F1 was had with every other label at the new best, and `--theta best` parsed with that
    mix, which nobody had scored (exit status 0)."""
    from clparse.calibrate.per_label import calibrate_per_label
    from clparse.errors import ConfigurationError
    from clparse.rebuild.model import best_theta

    db = copy_trained_db()
    settings = CalibrationSettings(beam=1)
    calibrate(db, thetas=[20.0, 8.0, 4.0], settings=settings)
    calibrate_per_label(db, settings, passes=1)
    before = best_theta(db), read_rows(db, "SELECT * FROM calibration_points ORDER BY theta")
    with pytest.raises(ConfigurationError, match="tuned per label"):
        calibrate(db, thetas=[6.0], settings=settings)
    result = invoke(["calibrate", "--db", db, "--beam", 1, "--thetas", "6"])
    assert result.exit_code == 1 and "tuned per label" in result.stderr
    assert "DELETE FROM label_theta_steps" in result.stderr and len(result.stderr.strip().splitlines()) == 2
    assert (best_theta(db), read_rows(db, "SELECT * FROM calibration_points ORDER BY theta")) == before
    # every Θ̂ already there is read back as before; other settings are another calibration
    assert [p.resumed for p in calibrate(db, thetas=[8.0, 4.0], settings=settings).points] == [True, True]
    other = calibrate(db, thetas=[6.0], settings=CalibrationSettings(beam=2))
    assert [p.theta for p in other.points] == [6.0]


# ----------------------------------------------------------------------------- compare


GOLD = ("(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
        "(ROOT (S (NP (PRP He)) (VP (VBD ran) (ADVP (RB away))) (. .)))\n")
SWAPPED = "\n".join(reversed(GOLD.splitlines())) + "\n"


def test_compare_says_what_it_leaves_out_and_refuses_nothing_to_compare(tmp_path: Path) -> None:
    """A file whose trees are not over the gold's words was left out of the test in silence ("not parsed by
    both"), and with no sentence left, p = 1.0 with exit status 0, as if A and B did not differ."""
    gold, same, swapped, half = (tmp_path / f"{n}.ptb" for n in ("gold", "same", "swapped", "half"))
    gold.write_text(GOLD)
    same.write_text(GOLD)
    swapped.write_text(SWAPPED)
    half.write_text(GOLD.splitlines()[0] + "\n()\n")
    result = invoke(["compare", gold, swapped, same])
    assert result.exit_code == 1 and "nothing to compare" in result.stderr
    assert "warning: A: sentence 1: word mismatch" in result.stderr and "Traceback" not in result.stderr
    result = invoke(["compare", gold, same, half, "--trials", 50])
    assert result.exit_code == 0, result.output
    assert "warning: B: 1 empty parse(s) skipped" in result.stderr
    assert "1 sentences (1 left out: not scored for both)" in result.stdout


# ----------------------------------------------------------------------------- eval --one-per-line


def test_one_per_line_errors_name_the_line_once(tmp_path: Path) -> None:
    """A test file that is not UTF-8 ended in a traceback with --one-per-line; a bad tree on line 2 was
    placed at "test.ptb:2:1:39" (the line twice)."""
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.ptb"
    gold.write_text(GOLD)
    test.write_bytes(GOLD.splitlines()[0].encode() + b"\n(ROOT (S (NP (NN caf\xe9))))\n")
    result = invoke(["eval", gold, test, "--one-per-line"])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {test}:2:21: not UTF-8 text (binary file?)"
    test.write_text(GOLD.splitlines()[0] + "\n(ROOT (S (NP (NN a)))\n")
    result = invoke(["eval", gold, test, "--one-per-line"])
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {test}:2:1: unbalanced '('")
    test.write_text(GOLD.replace("\n", "\r"))  # classic Mac line ends: still one parse a line
    assert invoke(["eval", gold, test, "--one-per-line", "--json"]).exit_code == 0


# ----------------------------------------------------------------------------- eval --prm


def test_prm_file_read_as_evalb_reads_it(tmp_path: Path) -> None:
    """A parameter file with a byte that is not UTF-8 ended in a traceback; a tab between keyword and value,
    which EVALB reads (isspace), was refused as an unknown keyword."""
    prm = tmp_path / "tab.prm"
    prm.write_text("DELETE_LABEL\tTOP\nDELETE_LABEL\t.\nEQ_LABEL\tADVP  PRT\nMAX_ERROR\t3\n")
    params = EvalbParams.from_prm_file(prm)
    assert params.delete_labels == ("TOP", ".") and params.equivalent_labels == (("ADVP", "PRT"),)
    assert params.max_errors == 3
    bad = tmp_path / "bad.prm"
    bad.write_bytes(b"DELETE_LABEL TOP\nDELETE_LABEL caf\xe9\n")
    gold = tmp_path / "gold.ptb"
    gold.write_text(GOLD)
    result = invoke(["eval", gold, gold, "--prm", bad])
    assert result.exit_code == 1 and result.stderr.strip() == f"Error: {bad}:2: byte 17 is not UTF-8 text"


def test_theta_zero_is_a_bad_option(trained_db: Path) -> None:
    """`--thetas 0` passed the option check (">= 0"), then, after "calibrating at 1 Θ̂ value(s): 0", failed
    with exit status 1: a bad option gets the usage line and exit status 2 before anything starts."""
    result = invoke(["calibrate", "--db", trained_db, "--thetas", "4,0", "--beam", 1])
    assert result.exit_code == 2 and "Invalid value for '--thetas'" in result.stderr
    assert "calibrating" not in result.stderr


# ----------------------------------------------------------------------------- sql on an export


def test_weights_of_an_export_are_an_error(trained_db: Path, tmp_path: Path) -> None:
    """`clparse_weights` on a parser database (`clparse export`) gave no rows with exit status 0, as if the
    label had no examples: the export left them out."""
    from clparse.store.export import export_parser

    parser = tmp_path / "parser.sqlite"
    export_parser(trained_db, parser)
    result = invoke(["sql", "--db", parser, "SELECT count(*) FROM clparse_weights('NP', 2)"])
    assert result.exit_code == 1 and "without training examples" in result.stderr
    result = invoke(["sql", "--db", trained_db, "SELECT count(*) AS n FROM clparse_weights('NP', 2)",
                     "--json"])
    assert result.exit_code == 0 and '"n": 0' not in result.stdout
