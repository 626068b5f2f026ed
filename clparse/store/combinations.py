"""Parser combinations (``clparse combine``): the fitted parameters and the members, one row each.

A combination database is a clparse database holding combinations and no run; ``parse --db`` on it parses
with the latest combination. Reads use plain SQL (the parse path loads no SQLAlchemy).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from clparse.store import reading, schema
from clparse.store.database import Database
from clparse.store.stamps import now


@dataclass(frozen=True)
class StoredMember:
    kind: str  # clparse or ptb
    source: str  # absolute path of the member's database or PTB file
    theta: str | None  # a clparse member's Θ̂ ("best" or a number); None for ptb
    weight: float  # λ
    dev_f1: float


@dataclass(frozen=True)
class StoredCombination:
    k: int
    beam: int
    threshold: float
    temperature: float
    dev_f1: float
    dev_sentences: int
    dev: dict[str, Any]
    evaluations: int
    seconds: float
    clparse_version: str
    members: tuple[StoredMember, ...]
    id: int | None = None
    created_at: str = field(default="", compare=False)

    @property
    def aggregator(self) -> str:
        """What the clparse members' k-best lists were ranked and scored by, and so what τ fits: dev_json's
        ``aggregator`` (kept since the summed loss became parse's default); before it, always maxmin."""
        return str(self.dev.get("aggregator", "maxmin"))


def write(db: Database | str | Path, combination: StoredCombination) -> int:
    """Store a combination and its members in one transaction; its id."""
    database = Database.of(db)
    c, m = schema.combinations, schema.combination_members
    with database.transaction() as connection:
        key = connection.execute(sa.insert(c).values(
            k=combination.k, beam=combination.beam, threshold=combination.threshold,
            temperature=combination.temperature, dev_f1=combination.dev_f1,
            dev_sentences=combination.dev_sentences, dev_json=json.dumps(combination.dev, sort_keys=True),
            evaluations=combination.evaluations, seconds=combination.seconds,
            clparse_version=combination.clparse_version, created_at=now())).inserted_primary_key
        assert key is not None
        new_id = int(key[0])
        connection.execute(sa.insert(m), [
            {"combination_id": new_id, "position": i, "kind": member.kind, "source": member.source,
             "theta": member.theta, "weight": member.weight, "dev_f1": member.dev_f1}
            for i, member in enumerate(combination.members)])
    return int(new_id)


def latest(db: Database | str | Path) -> StoredCombination | None:
    """The newest combination of the database, or None if it holds none."""
    database = Database.of(db, readonly=True)
    with database.raw() as connection:
        row = connection.execute(
            "SELECT id, k, beam, threshold, temperature, dev_f1, dev_sentences, dev_json, evaluations, "
            "seconds, clparse_version, created_at FROM combinations ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return None
        members = tuple(StoredMember(str(kind), str(source), None if theta is None else str(theta),
                                     float(weight), float(f1))  # type: ignore[arg-type]
                        for kind, source, theta, weight, f1 in connection.execute(
                            "SELECT kind, source, theta, weight, dev_f1 FROM combination_members "
                            "WHERE combination_id = ? ORDER BY position", (row[0],)))
    (id_, k, beam, threshold, temperature, dev_f1, sentences, dev_json, evaluations, seconds, version,
     created) = row
    return StoredCombination(int(k), int(beam), float(threshold), float(temperature),  # type: ignore[arg-type]
                             float(dev_f1), int(sentences), json.loads(str(dev_json)),  # type: ignore[arg-type]
                             int(evaluations), float(seconds), str(version), members,  # type: ignore[arg-type]
                             int(id_), str(created))  # type: ignore[arg-type]


def has_run(db: Database | str | Path) -> bool:
    with Database.of(db, readonly=True).raw() as connection:
        return connection.execute("SELECT 1 FROM runs LIMIT 1").fetchone() is not None


def is_combination(db: Database | str | Path) -> bool:
    """Does the database hold a combination and no run (a database of ``clparse combine``)?"""
    with Database.of(db, readonly=True).raw() as connection:
        return reading.is_combination(connection)
