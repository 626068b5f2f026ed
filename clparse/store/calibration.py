"""Calibration results: each calibration's points (one per Θ̂ parsed), per-label scores, the best
Θ̂, and the per-label Θ̂ trials. Every finished point or trial is one committed transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from clparse.store import schema
from clparse.store.database import Database
from clparse.store.stamps import now


class Calibrations:
    def __init__(self, db: Database | str | Path, *, readonly: bool = True) -> None:
        self.db = Database.of(db, readonly=readonly)

    # ------------------------------------------------------------------ calibrations and points

    def find_or_create(self, digest: str, settings_json: str) -> int:
        """The calibration with this settings digest, created if new."""
        c = schema.calibrations
        # immediate: two calibrations started together must not both miss the row and both insert it
        with self.db.transaction(immediate=True) as connection:
            found = connection.execute(sa.select(c.c.id).where(c.c.settings_digest == digest)).scalar()
            if found is not None:
                return int(found)
            run_id = connection.execute(sa.select(schema.runs.c.id)).scalar_one()
            stamp = now()
            return int(connection.execute(c.insert().values(
                run_id=run_id, settings_digest=digest, settings_json=settings_json, best_theta=None,
                created_at=stamp, updated_at=stamp)).inserted_primary_key[0])  # type: ignore[index]

    def point(self, calibration_id: int, theta: float) -> dict[str, Any] | None:
        cp = schema.calibration_points
        with self.db.reading() as connection:
            row = connection.execute(sa.select(cp).where(cp.c.calibration_id == calibration_id,
                                                         cp.c.theta == theta)).mappings().first()
        return None if row is None else dict(row)

    def add_point(self, calibration_id: int, point: Mapping[str, Any],
                  labels: Sequence[Mapping[str, Any]]) -> None:
        """One finished Θ̂: its totals, its per-label rows, and the best Θ̂ updated, in one transaction."""
        with self.db.transaction() as connection:
            connection.execute(schema.calibration_points.insert().values(
                calibration_id=calibration_id, finished_at=now(), **point))
            if labels:  # none where no dev sentence has a bracket (an empty insert is a NOT NULL error)
                connection.execute(schema.calibration_labels.insert(), [
                    {"calibration_id": calibration_id, "theta": point["theta"], **row} for row in labels])
            self._mark_best(connection, calibration_id)

    def mark_best(self, calibration_id: int) -> float | None:
        with self.db.transaction() as connection:
            return self._mark_best(connection, calibration_id)

    @staticmethod
    def _mark_best(connection: sa.Connection, calibration_id: int) -> float | None:
        """Best Θ̂: highest F1, on a tie the larger Θ̂ (fewer splits)."""
        cp, c = schema.calibration_points, schema.calibrations
        best = connection.execute(sa.select(cp.c.theta).where(cp.c.calibration_id == calibration_id)
                                  .order_by(cp.c.f1.desc(), cp.c.theta.desc()).limit(1)).scalar()
        connection.execute(c.update().where(c.c.id == calibration_id)
                           .values(best_theta=best, updated_at=now()))
        return None if best is None else float(best)

    def latest_best(self, aggregator: str | None = None) -> tuple[int, float] | None:
        """(id, best Θ̂) of the most recently updated calibration that has a best Θ̂ (and, given an
        ``aggregator``, whose dev set was parsed with it)."""
        c = schema.calibrations
        query = sa.select(c.c.id, c.c.best_theta).where(c.c.best_theta.is_not(None))
        if aggregator is not None:  # the settings are a JSON object (settings_json); bound, never pasted
            query = query.where(sa.func.json_extract(c.c.settings_json, "$.aggregator") == aggregator)
        with self.db.reading() as connection:
            row = connection.execute(query.order_by(c.c.updated_at.desc(), c.c.id.desc()).limit(1)).first()
        return None if row is None else (int(row[0]), float(row[1]))

    def read_by_theta_best(self, aggregator: str | None = None) -> tuple[int, float] | None:
        """(id, best Θ̂) of the calibration ``--theta best`` reads for a parser scoring with ``aggregator``:
        the latest made with it, else (or with None) the latest of any."""
        return (aggregator is not None and self.latest_best(aggregator)) or self.latest_best()

    def best_theta(self, calibration_id: int) -> float | None:
        c = schema.calibrations
        with self.db.reading() as connection:
            value = connection.execute(sa.select(c.c.best_theta).where(c.c.id == calibration_id)).scalar()
        return None if value is None else float(value)

    def calibrations(self) -> list[tuple[dict[str, Any], list[Any]]]:
        """Every calibration row with its points (Θ̂ falling)."""
        c, cp = schema.calibrations, schema.calibration_points
        out = []
        with self.db.reading() as connection:
            for row in connection.execute(sa.select(c).order_by(c.c.id)).mappings():
                points = connection.execute(sa.select(cp).where(cp.c.calibration_id == row["id"])
                                            .order_by(cp.c.theta.desc())).all()
                out.append((dict(row), list(points)))
        return out

    def label_scores(self, calibration_id: int, theta: float) -> list[dict[str, Any]]:
        """Per-label rows (gold, test, matched, recall, precision, F1) at Θ̂, most gold brackets first."""
        cl = schema.calibration_labels
        with self.db.reading() as connection:
            return [dict(r) for r in connection.execute(sa.select(cl).where(
                cl.c.calibration_id == calibration_id, cl.c.theta == theta)
                .order_by(cl.c.gold.desc())).mappings()]

    # ------------------------------------------------------------------ per-label Θ̂ trials

    def trials(self, calibration_id: int) -> list[tuple[str, float, float, bool]]:
        """(label, Θ̂, F1, accepted) of every committed trial, in order."""
        steps = schema.label_theta_steps
        with self.db.reading() as connection:
            return [(str(label), float(theta), float(f1), bool(accepted)) for label, theta, f1, accepted in
                    connection.execute(sa.select(steps.c.label, steps.c.theta, steps.c.f1, steps.c.accepted)
                                       .where(steps.c.calibration_id == calibration_id)
                                       .order_by(steps.c.step))]

    def per_label_thetas(self, calibration_id: int) -> dict[str, float] | None:
        """The per-label Θ̂ of a calibration (its best Θ̂ for every label, moved by each accepted trial),
        or None if no trial was accepted."""
        accepted = [(label, theta) for label, theta, _, ok in self.trials(calibration_id) if ok]
        best = self.best_theta(calibration_id)
        if not accepted or best is None:
            return None
        with self.db.reading() as connection:
            thetas = {str(label): best
                      for label in connection.execute(sa.select(schema.labels.c.name)).scalars()}
        thetas.update(accepted)
        return thetas

    def add_trial(self, calibration_id: int, step: int, label: str, theta: float, f1: float, accepted: bool,
                  seconds: float) -> None:
        with self.db.transaction() as connection:
            connection.execute(schema.label_theta_steps.insert().values(
                calibration_id=calibration_id, step=step, label=label, theta=theta, f1=f1, accepted=accepted,
                seconds=seconds, finished_at=now()))
            connection.execute(schema.calibrations.update().where(schema.calibrations.c.id == calibration_id)
                               .values(updated_at=now()))  # `--theta best` reads the latest calibration
