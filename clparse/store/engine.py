"""SQLAlchemy engines whose every connection is an APSW connection (see :mod:`clparse.store.dbapi`)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy
from sqlalchemy.pool import NullPool

from clparse.store import dbapi

# generous: parallel trainers and readers share the file (MLflow settled on 20 s too)
BUSY_TIMEOUT_MS = 20_000


def make_engine(path: str | Path, *, readonly: bool = False) -> sqlalchemy.Engine:
    """An engine for the database file at ``path``; ``sqlite3`` is never imported."""
    # NullPool: a connection per use, so nothing lingers holding locks between transactions.
    return dbapi.create_engine(path, readonly=readonly, busy_timeout_ms=BUSY_TIMEOUT_MS, poolclass=NullPool)
