"""Faults a demanding user met in eval, compare, calibrate, report, export, status and sql (review helper);
each test failed before its fix."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result

from clparse.calibrate.run import CalibrationSettings, calibrate, dev_trees
from clparse.cli import main
from clparse.evaluate import EvalbParams
from clparse.evaluate.evalb import score_view
from clparse.read.ptb import format_tree
from tests.conftest import read_rows


def invoke(args: list[object], stdin: str | None = None) -> Result:
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    else:
        runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], input=stdin)


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

