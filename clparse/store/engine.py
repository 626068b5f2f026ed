"""SQLAlchemy engines whose every connection is an APSW connection (see :mod:`clparse.store.dbapi`),
and how a read-only command opens a file so that it writes nothing anywhere.

Read-only opening (:func:`read_only_mode` decides, from the file's state when it is opened):

* ``query_only``: a WAL-mode file we may write. A connection opened ``SQLITE_OPEN_READONLY`` would
  create ``-wal`` and ``-shm`` and, closing last, could not remove them (only a connection that may
  write checkpoints and deletes them). So the connection is opened read-write, never switches the
  journal mode, and runs ``PRAGMA query_only``: SQLite refuses every write through it, and when it
  closes last SQLite removes the two files. On a file nobody else has open that checkpoint has
  nothing to copy, so the database file's bytes and mtime stay as they were; while others have it
  open, they are the last to close. (Only a log that a crashed writer left behind, committed data
  the next opener of any kind folds in, is copied into the file by our close.) All connections of
  a read-only engine open this way, so nested readers never leave the files behind each other.
* ``readonly``: ``SQLITE_OPEN_READONLY`` on a file that uses a rollback journal (a read-only
  connection then makes no file at all), or on a file we may not write that has a ``-wal`` or
  ``-journal`` beside it (a log that must be read: SQLite uses the files that are there).
* ``immutable``: a file we may not write (its mode, its directory's, a read-only mount) with no
  ``-wal`` and no ``-journal`` beside it: ``?immutable=1``, so SQLite creates no ``-shm`` or
  ``-wal`` (it could not) and takes no locks; a backup on read-only media is read as it is. Nobody
  can be writing it through a log either (a writer's ``-wal`` would be there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote

import apsw

from clparse.store import dbapi

if TYPE_CHECKING:
    import sqlalchemy

#: ``PRAGMA application_id`` of every clparse database ("clpa"): tells a clparse file from any other
#: SQLite file. (Here rather than in :mod:`clparse.store.schema` so that opening a file to read it
#: does not import SQLAlchemy; the schema module names it too.)
APPLICATION_ID = 0x636C7061
# generous: parallel trainers and readers share the file (MLflow settled on 20 s too)
BUSY_TIMEOUT_MS = 20_000

ReadOnlyMode = Literal["query_only", "readonly", "immutable"]


def read_only_mode(*, writable: bool, wal_mode: bool, wal_exists: bool, journal_exists: bool) -> ReadOnlyMode:
    """How to open a file read-only so that nothing is written anywhere (see the module docstring).

    ``writable``: this process may write the file and create files beside it; ``wal_mode``: the
    file's header says WAL; ``wal_exists`` / ``journal_exists``: ``-wal`` / ``-journal`` are there.
    """
    if not writable:
        return "readonly" if wal_exists or journal_exists else "immutable"
    return "query_only" if wal_mode else "readonly"


def writable(path: str | Path) -> bool:
    """May this process write ``path`` and create files in its directory (``-wal``, ``-shm``)?

    ``os.access`` also says no on a read-only mount; as root it says yes to any file mode, and
    then SQLite can indeed write.
    """
    path = Path(os.path.abspath(path))
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def mode_of(path: str | Path) -> ReadOnlyMode:
    """:func:`read_only_mode` for the file at ``path`` as it is now."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        header = b""
    return read_only_mode(writable=writable(path), wal_mode=header[18:20] == b"\x02\x02",
                          wal_exists=Path(f"{path}-wal").exists(),
                          journal_exists=Path(f"{path}-journal").exists())


def open_read_only(path: str | Path, mode: ReadOnlyMode | None = None) -> apsw.Connection:
    """An APSW connection that reads ``path`` and writes nothing anywhere (``mode``: as decided by
    :func:`mode_of` unless given)."""
    mode = mode_of(path) if mode is None else mode
    filename = os.path.abspath(path)
    if mode == "immutable":
        connection = apsw.Connection(f"file:{quote(filename)}?immutable=1",
                                     flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    elif mode == "query_only":
        connection = apsw.Connection(filename, flags=apsw.SQLITE_OPEN_READWRITE)
    else:
        connection = apsw.Connection(filename, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)
        if mode == "query_only":
            connection.execute("PRAGMA query_only = ON")
    except BaseException:
        connection.close()
        raise
    return connection


def make_engine(path: str | Path, *, readonly: bool = False) -> sqlalchemy.Engine:
    """An engine for the database file at ``path``; ``sqlite3`` is never imported.

    A read-only engine decides once, now, how its connections open the file (:func:`mode_of`).
    """
    from sqlalchemy.pool import NullPool

    mode = mode_of(path) if readonly else None
    # NullPool: a connection per use, so nothing lingers holding locks between transactions.
    return dbapi.create_engine(path, readonly=readonly, busy_timeout_ms=BUSY_TIMEOUT_MS, poolclass=NullPool,
                               immutable=mode == "immutable", query_only=mode == "query_only")
