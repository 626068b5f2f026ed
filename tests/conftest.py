"""Shared fixtures: one database prepared from the bundled sample and trained to Θ 3, built once per session.

Tests that only read use ``trained_db`` directly (it must never be written: no calibration, no
training). Tests that write (calibrate, delete checkpoints) get their own copy through ``db_copy``
or ``copy_trained_db``. Copies go through SQLite's online backup API, which reads committed pages
including any still in the WAL, so a copy is always a consistent database (a plain file copy could
miss the WAL).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest


def read_rows(db: Path, query: str, *bindings: object) -> list[tuple]:
    """Rows of a read-only query (APSW: Python's sqlite3 must never be loaded beside it)."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    connection.set_busy_timeout(10_000)
    try:
        return [tuple(row) for row in connection.execute(query, bindings)]
    finally:
        connection.close()


def backup_database(source: Path, target: Path) -> Path:
    """Copy ``source`` to ``target`` with SQLite's backup API (both plain paths)."""
    reader = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    writer = apsw.Connection(str(target))
    try:
        backup = writer.backup("main", reader, "main")
        try:
            while not backup.done:
                backup.step()
        finally:
            backup.finish()
    finally:
        writer.close()
        reader.close()
    return target


@pytest.fixture(scope="session")
def trained_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample, prepared (examples and tagger) and every label trained until Θ < 3."""
    from clparse.data import sample_path
    from clparse.examples.prepare import prepare
    from clparse.store.database import init_database
    from clparse.train import StopRule, train

    path = tmp_path_factory.mktemp("trained") / "trained.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")])
    summary = train(path, rule=StopRule(until_theta=3.0))
    assert not summary.failures, summary.failures
    return path


@pytest.fixture(scope="session")
def copy_trained_db(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A function returning a fresh, writable copy of ``trained_db`` in its own directory."""

    def make() -> Path:
        return backup_database(trained_db, tmp_path_factory.mktemp("copy") / "copy.sqlite")

    return make


@pytest.fixture
def db_copy(copy_trained_db: Callable[[], Path]) -> Path:
    """A writable copy of ``trained_db`` for one test."""
    return copy_trained_db()
