"""Tag choosers (``clparse calibrate-tags``): one row per fit; parse reads them through
:func:`clparse.store.reading.tag_chooser` (plain SQL, as the rest of the parse path)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from clparse.store import schema
from clparse.store.chooser_rows import WEIGHT_NAMES, chooser_weights
from clparse.store.database import Database
from clparse.store.stamps import now


@dataclass(frozen=True)
class StoredChooser:
    theta_key: str
    beam: int
    max_pops: int
    aggregator: str
    tagger: str  # crf, or crf+net:<net digest> (clparse.store.reading.tagger_name)
    alternatives: int
    weights: dict[str, float]  # by input name, in the chooser's order
    sentences: int
    pairs: int
    f1_best: float
    f1_rule: float
    f1_chooser: float
    f1_two_fold: float
    seconds: float
    clparse_version: str


def write(db: Database | str | Path, chooser: StoredChooser) -> int:
    """Store a fitted chooser in one transaction; its id."""
    database = Database.of(db)
    with database.transaction() as connection:
        run_id = connection.execute(sa.select(schema.runs.c.id)).scalar_one()
        key = connection.execute(sa.insert(schema.tag_choosers).values(
            run_id=run_id, theta=chooser.theta_key, beam=chooser.beam, max_pops=chooser.max_pops,
            aggregator=chooser.aggregator, tagger=chooser.tagger, alternatives=chooser.alternatives,
            weights_json=json.dumps(chooser.weights),
            sentences=chooser.sentences, pairs=chooser.pairs, f1_best=chooser.f1_best,
            f1_rule=chooser.f1_rule, f1_chooser=chooser.f1_chooser, f1_two_fold=chooser.f1_two_fold,
            seconds=chooser.seconds,
            clparse_version=chooser.clparse_version, created_at=now())).inserted_primary_key
    assert key is not None
    return int(key[0])


def fits(db: Database | str | Path) -> list[dict[str, object]]:
    """Every stored chooser, oldest first, as a row of ``tag_choosers`` (weights as a dict, or None if
    the row's are damaged)."""
    t = schema.tag_choosers
    with Database.of(db, readonly=True).reading() as connection:
        rows = [dict(row) for row in connection.execute(sa.select(t).order_by(t.c.id)).mappings()]
    for row in rows:  # a damaged row's weights are None (`clparse check` names it); the rest still shows
        values = chooser_weights(row.pop("weights_json"))
        row["weights"] = None if values is None else dict(zip(WEIGHT_NAMES, values))
    return rows
