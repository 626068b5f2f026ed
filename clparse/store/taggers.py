"""The run's stored POS tagger: its model as data (never code) and how it measured on dev."""

from __future__ import annotations

from dataclasses import dataclass
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

    def model(self) -> tuple[str, str | bytes] | None:
        """(kind, model) of the stored tagger: ``perceptron`` with JSON text, ``crf`` with bytes; None if
        none."""
        tg = schema.taggers
        with self.db.reading() as connection:
            row = connection.execute(sa.select(tg.c.kind, tg.c.model_json, tg.c.model_blob)).first()
        if row is None:
            return None
        kind, text, blob = row
        return str(kind), (bytes(blob) if blob is not None else str(text))

    def store(self, kind: str, model: str | bytes, train_sentences: int, dev_accuracy: float | None,
              seconds: float) -> None:
        """Keep the run's tagger: text in ``model_json``, bytes in ``model_blob``."""
        with self.db.transaction() as connection:
            run_id = connection.execute(sa.select(schema.runs.c.id)).scalar_one()
            connection.execute(schema.taggers.insert().values(
                run_id=run_id, kind=kind, model_json=model if isinstance(model, str) else None,
                model_blob=model if isinstance(model, bytes) else None, train_sentences=train_sentences,
                dev_accuracy=dev_accuracy, seconds=seconds, created_at=now()))

    def net(self) -> tuple[bytes, float] | None:
        """(the tagger net's bytes, the CRF's weight beside it), or None if the run has no net."""
        tn = schema.tagger_nets
        with self.db.reading() as connection:
            row = connection.execute(sa.select(tn.c.model_blob, tn.c.crf_weight)).first()
        return None if row is None else (bytes(row[0]), float(row[1]))

    def store_net(self, net: StoredNet) -> None:
        """Keep the run's tagger net, replacing the one stored before (one transaction: a reader sees the
        old net or the new one)."""
        with self.db.transaction() as connection:
            run_id = connection.execute(sa.select(schema.runs.c.id)).scalar_one()
            connection.execute(schema.tagger_nets.delete())
            connection.execute(schema.tagger_nets.insert().values(
                run_id=run_id, model_blob=net.model, crf_weight=net.crf_weight,
                train_sentences=net.train_sentences, epochs=net.epochs, kept_epoch=net.kept_epoch,
                seed=net.seed, net_dev_accuracy=net.net_dev_accuracy, dev_accuracy=net.dev_accuracy,
                seconds=net.seconds, clparse_version=net.clparse_version, created_at=now()))


@dataclass(frozen=True)
class StoredNet:
    model: bytes
    crf_weight: float
    train_sentences: int
    epochs: int
    kept_epoch: int
    seed: int
    net_dev_accuracy: float | None
    dev_accuracy: float | None
    seconds: float
    clparse_version: str
