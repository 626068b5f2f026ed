"""Worker-side hooks of tests/test_dask.py, in a module that imports nothing of clparse: unpickling
them on a worker must not load the storage layer the hooks watch for."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import distributed

FORBIDDEN = ("clparse.store", "apsw", "sqlalchemy", "sqlite3")
RECORDS: list[str] = []  # in a worker process: what the audit hook saw


class Watch(distributed.WorkerPlugin):
    """Records storage imports and opens of the database's file on a worker; optionally kills the worker
    (SIGKILL, once: a marker file says it happened) when it starts a batch of ``label`` past iteration
    ``after``."""

    def __init__(self, db_name: str, marker: str | None = None, label: str = "", after: int = 0) -> None:
        self.db_name, self.marker, self.label, self.after = db_name, marker, label, after

    def setup(self, worker: Any) -> None:
        db_name = self.db_name

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event == "import" and str(args[0]).startswith(FORBIDDEN):
                RECORDS.append(f"import {args[0]}")
            elif event in ("open", "sqlite3.connect") and args and db_name in str(args[0]):
                RECORDS.append(f"{event} {args[0]}")

        sys.addaudithook(hook)

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if self.marker is None or finish != "executing" or not str(key).startswith(f"clparse-{self.label}-"):
            return
        expected = int(str(key).split("-")[2])
        if expected >= self.after and not os.path.exists(self.marker):
            Path(self.marker).write_text(f"{key}\n")
            os.kill(os.getpid(), signal.SIGKILL)  # a worker lost in the middle of the label


def worker_report() -> list[str]:
    """Run on each worker: the hook's records and any storage module loaded by other means."""
    return RECORDS + [f"loaded {m}" for m in sys.modules if m.startswith(FORBIDDEN)]


def assert_no_storage_on(client: Any) -> None:
    reports = client.run(worker_report)
    assert reports and all(report == [] for report in reports.values()), reports
