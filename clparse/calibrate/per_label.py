"""Per-label Θ̂ (issue #11): coordinate ascent over each label's Θ̂ on the dev set, checkpointed.

Starts from a finished global calibration: every label at its best Θ̂, with its dev F1. Labels are
visited in order of their gold brackets on the dev set (most first). A label is moved one step
down the calibration's Θ̂ grid (more trees) while that raises dev F1; if the first step down does
not, it is moved up instead, the same way. A pass visits every label; passes repeat until one
changes nothing (or ``passes`` is reached). Every trial (label, Θ̂, F1, accepted) is one committed
row of ``label_theta_steps``; a stopped run replays them and goes on with the next trial, so the
result is the same as an uninterrupted one. The authors' calibration scripts searched per-label
thresholds on dev the same way (randomised there, deterministic here).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from clparse.calibrate.run import CalibrationSettings, _calibration_id, _digest, dev_trees, parse_dev
from clparse.errors import ConfigurationError
from clparse.evaluate import EvalbParams, evaluate
from clparse.rebuild.model import load_model
from clparse.store import schema
from clparse.store.database import open_engine
from clparse.store.stamps import now
from clparse.store.tagger import load_tagger


@dataclass
class PerLabelResult:
    calibration_id: int
    start_theta: float
    start_f1: float
    thetas: dict[str, float]
    f1: float
    trials: int = 0  # trials run now (not replayed)
    replayed: int = 0
    stopped: bool = False
    history: list[tuple[str, float, float, bool]] = field(default_factory=list)  # (label, Θ̂, F1, accepted)


def _trials(order: list[str], grid: list[float], thetas: dict[str, float], passes: int,
            outcome: Callable[[str, float], bool]) -> Iterator[None]:
    """Drive the ascent: ``outcome(label, theta)`` evaluates one trial and says whether it was accepted."""
    for _ in range(passes):
        changed = False
        for label in order:
            for direction in (+1, -1):  # +1: down the grid (smaller Θ̂, more trees); -1: up
                moved = False
                while True:
                    at = grid.index(thetas[label]) + direction
                    if not 0 <= at < len(grid) or not outcome(label, grid[at]):
                        break
                    thetas[label] = grid[at]
                    moved = changed = True
                    yield
                if moved:
                    break  # improved going one way: do not try the other
        if not changed:
            return


def calibrate_per_label(db: str | Path, settings: CalibrationSettings = CalibrationSettings(), passes: int = 2,
                        on_trial: Callable[[str, float, float, bool], object] | None = None,
                        should_stop: Callable[[], bool] = lambda: False) -> PerLabelResult:
    """Per-label Θ̂ on the stored dev set, from the finished global calibration with these settings."""
    if passes < 1:
        raise ConfigurationError(f"passes must be at least 1, got {passes}")
    gold = dev_trees(db)
    engine = open_engine(db)
    digest = _digest(settings, gold)
    cp, cl, steps = schema.calibration_points, schema.calibration_labels, schema.label_theta_steps
    with engine.begin() as connection:
        calibration_id = _calibration_id(connection, digest, settings, "database")
        best = connection.execute(sa.select(schema.calibrations.c.best_theta).where(
            schema.calibrations.c.id == calibration_id)).scalar()
        if best is None:
            raise ConfigurationError(f"{db}: no global calibration with these settings yet; run `clparse calibrate "
                                     f"--db {db}` with the same --beam/--max-pops/--aggregator/--tags first")
        grid = sorted((float(t) for t in connection.execute(sa.select(cp.c.theta).where(
            cp.c.calibration_id == calibration_id)).scalars()), reverse=True)
        start_f1 = float(connection.execute(sa.select(cp.c.f1).where(
            cp.c.calibration_id == calibration_id, cp.c.theta == best)).scalar_one())
        brackets = connection.execute(sa.select(cl.c.label, cl.c.gold).where(
            cl.c.calibration_id == calibration_id, cl.c.theta == best)).all()
        labels = list(connection.execute(sa.select(schema.labels.c.name).order_by(schema.labels.c.name)).scalars())
        done = connection.execute(sa.select(steps.c.label, steps.c.theta, steps.c.f1, steps.c.accepted).where(
            steps.c.calibration_id == calibration_id).order_by(steps.c.step)).all()
    gold_count = dict(brackets)
    order = sorted((label for label in labels if gold_count.get(label, 0) > 0), key=lambda x: (-gold_count[x], x))
    thetas = {label: float(best) for label in labels}
    result = PerLabelResult(calibration_id, float(best), start_f1, thetas, start_f1)
    tagger = load_tagger(db) if settings.tags == "tagger" else None
    params = EvalbParams()

    def outcome(label: str, theta: float) -> bool:
        index = result.replayed + result.trials
        if index < len(done):  # replay a committed trial
            stored_label, stored_theta, f1, accepted = done[index]
            if (stored_label, stored_theta) != (label, theta):
                raise ConfigurationError(f"{db}: the stored per-label trials do not follow from this calibration "
                                         f"(trial {index}: {stored_label} at {stored_theta:g}, expected {label} at "
                                         f"{theta:g}); delete them to start again")
            result.replayed += 1
        else:
            if should_stop():
                raise _Stopped
            start = time.perf_counter()
            trial = {**thetas, label: theta}
            parsed = parse_dev(db, load_model(db, trial), gold, settings, tagger, should_stop=should_stop)
            if parsed is None:
                raise _Stopped
            f1 = evaluate(gold, parsed[0], params).all.f1
            accepted = f1 > result.f1
            with engine.begin() as connection:
                connection.execute(steps.insert().values(
                    calibration_id=calibration_id, step=index, label=label, theta=theta, f1=f1, accepted=accepted,
                    seconds=time.perf_counter() - start, finished_at=now()))
                connection.execute(schema.calibrations.update().where(schema.calibrations.c.id == calibration_id)
                                   .values(updated_at=now()))  # `--theta best` reads the latest calibration
            result.trials += 1
            if on_trial is not None:
                on_trial(label, theta, f1, accepted)
        result.history.append((label, theta, f1, accepted))
        if accepted:
            result.f1 = f1
        return bool(accepted)

    try:
        for _ in _trials(order, grid, thetas, passes, outcome):
            pass
    except _Stopped:
        result.stopped = True
    engine.dispose()
    return result


class _Stopped(Exception):
    """Ctrl-C between trials (or inside one: that trial is dropped and run again on resume)."""


def per_label_thetas(connection: sa.Connection, calibration_id: int) -> dict[str, float] | None:
    """The per-label assignment of a calibration (its global best moved by every accepted trial), or None."""
    steps = schema.label_theta_steps
    accepted = connection.execute(sa.select(steps.c.label, steps.c.theta).where(
        steps.c.calibration_id == calibration_id, steps.c.accepted).order_by(steps.c.step)).all()
    if not accepted:
        return None
    best = connection.execute(sa.select(schema.calibrations.c.best_theta).where(
        schema.calibrations.c.id == calibration_id)).scalar_one()
    thetas = {label: float(best) for label in connection.execute(sa.select(schema.labels.c.name)).scalars()}
    for label, theta in accepted:
        thetas[label] = float(theta)
    return thetas
