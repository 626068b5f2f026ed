"""Issue 30, item 4: the rough edges a new user met, each as the user met it.

Commands run as a user runs them: the real ``clparse`` in a subprocess (on a pseudo-terminal where
progress matters), or click's test runner for quick option checks.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from tests.terminal import run_on_terminal

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def clparse(*args: str | Path, stdin: str | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "clparse"), *map(str, args)], input=stdin, capture_output=True,
                          text=True, env=ENV, timeout=timeout)


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def progress_lines(shown: str) -> list[str]:
    """The training progress lines a terminal showed (each redraw is one)."""
    return [line.strip() for line in re.split(r"[\r\n]", shown) if line.strip().startswith("training: ")]


# --------------------------------------------------------------------- train's progress after a resume


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_resumed_train_counts_only_labels_finished_to_the_stop_rule(db_copy: Path, jobs: str) -> None:
    """After a pause, the progress line counted paused labels as done (with --jobs N), or forgot the labels
    finished before the pause (one process). ADJP is finished to Θ < 2.5, ADVP paused above it: the resumed
    run starts at 1/2 and ends at 2/2."""
    api.train(db_copy, ["ADJP"], until_theta=2.5)
    asked = iter([False])  # the run starts ADVP, which then pauses before its first tree
    api.train(db_copy, ["ADVP"], until_theta=2.5, should_stop=lambda: next(asked, True))
    assert {r.label: r.state for r in api.status(db_copy, ["ADJP", "ADVP"])} == {"ADJP": "stopped",
                                                                                 "ADVP": "paused"}
    status, _, shown = run_on_terminal([str(BIN / "clparse"), "train", "--db", str(db_copy), "--labels",
                                        "ADJP,ADVP", "--until-theta", "2.5", "--jobs", jobs], "", ENV)
    assert status == 0, shown
    lines = progress_lines(shown)
    assert lines and all(line.startswith(("training: 1/2 labels", "training: 2/2 labels"))
                         for line in lines), lines
    assert lines[0].startswith("training: 1/2 labels") and lines[-1].startswith("training: 2/2 labels"), lines


def test_training_progress_counts_labels_finished_before_the_run_but_not_in_the_rate() -> None:
    from clparse.progress import TrainingProgress

    bar = TrainingProgress(5, io.StringIO(), enabled=True, count=lambda: 3)
    assert bar.done == 3 and bar.initial == 3
    assert bar.line().startswith("training: 3/5 labels (60 %)  0/s")  # no rate, no ETA from old labels

