"""The run's stored POS tagger: its model as data (never code) and how it measured on dev."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from clparse.store import schema
from clparse.store.database import Database
from clparse.store.stamps import now


class Taggers:
    def __init__(self, db: Database | str | Path, *, readonly: bool = True) -> None:
        self.db = Database.of(db, readonly=readonly)

    def accuracy(self) -> tuple[bool, float | None]:
        """(a tagger is stored, its dev accuracy or None)."""
        with self.db.reading() as connection:
            row = connection.execute(sa.select(schema.taggers.c.dev_accuracy)).first()
        return (False, None) if row is None else (True, row[0])

    def model(self) -> str | None:
        """The stored model (JSON text), or None if the run has no tagger."""
        with self.db.reading() as connection:
            return connection.execute(sa.select(schema.taggers.c.model_json)).scalar()

    def store(self, model: str, train_sentences: int, dev_accuracy: float | None, seconds: float) -> None:
        with self.db.transaction() as connection:
            run_id = connection.execute(sa.select(schema.runs.c.id)).scalar_one()
            connection.execute(schema.taggers.insert().values(
                run_id=run_id, model_json=model, train_sentences=train_sentences, dev_accuracy=dev_accuracy,
                seconds=seconds, created_at=now()))
