"""A prepare killed while it writes leaves the database as it was before the command (issue #13)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clparse.data import sample_path
from clparse.store.database import init_database
from tests.conftest import read_rows

CLPARSE = str(Path(sys.executable).with_name("clparse"))


def _size(path: Path) -> int:
    """The file's size, 0 if it is not there: SQLite removes the write-ahead log when the last connection
    closes, which can happen between a check that it exists and a look at its size."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_kill_during_prepare_leaves_the_database_as_before(tmp_path: Path) -> None:
    db = tmp_path / "kill.sqlite"
    init_database(db)
    wal = Path(f"{db}-wal")
    process = subprocess.Popen([CLPARSE, "prepare", "--db", str(db), "--train", str(sample_path("train")),
                                "--dev", str(sample_path("dev")), "--max-words", "0",
                                "--tagger-iterations", "20"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    killed_mid_write = False
    while time.monotonic() < deadline and process.poll() is None:
        # Mid-transaction: the write-ahead log has grown, and a reader still sees no committed run.
        if (_size(wal) > 2_000_000
                and read_rows(db, "SELECT count(*) FROM runs") == [(0,)]):
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            killed_mid_write = True
            break
        time.sleep(0.02)
    assert killed_mid_write, "prepare finished before it could be killed while writing"
    for table in ("runs", "sentences", "features", "feature_rows", "labels", "label_examples", "taggers"):
        assert read_rows(db, f"SELECT count(*) FROM {table}") == [(0,)], table
    assert read_rows(db, "PRAGMA integrity_check") == [("ok",)]
    # and the same command then runs to the end
    result = subprocess.run([CLPARSE, "prepare", "--db", str(db), "--train", str(sample_path("train")),
                             "--dev", str(sample_path("dev")), "--max-words", "0",
                             "--tagger-iterations", "20"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert read_rows(db, "SELECT count(*) FROM runs") == [(1,)]
