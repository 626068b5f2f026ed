"""Per-label Θ̂ (an accuracy lever beside the paper's single Θ̂): coordinate ascent over each label's Θ̂ on
the dev set, checkpointed.

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

from clparse.calibrate.run import CalibrationSettings, calibration_id, dev_trees, parse_dev
from clparse.errors import ConfigurationError
from clparse.evaluate import EvalbParams, evaluate
from clparse.rebuild.model import load_model
from clparse.store.calibration import Calibrations
from clparse.store.database import Database
from clparse.store.runs import Runs
from clparse.tag.stored import load_tagger


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
            outcome: Callable[[str, float], bool], replaying: Callable[[], bool] = lambda: False
            ) -> Iterator[None]:
    """Drive the ascent: ``outcome(label, theta)`` evaluates one trial and says whether it was accepted.
    Passes go on past ``passes`` while ``replaying()``: stored trials of an earlier run with more passes are
    what `--theta best` uses, so a run asking for fewer printed per-label Θ̂ and an F1 that were not those."""
    done = 0
    while done < passes or replaying():
        done += 1
        changed = False
        for label in order:
            for direction in (+1, -1):  # +1: down the grid (smaller Θ̂, more trees); -1: up
                moved = False
                while True:
                    if done > passes and not replaying():
                        return  # the stored trials are replayed; this run asked for no more
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


def calibrate_per_label(db: str | Path, settings: CalibrationSettings = CalibrationSettings(),
                        passes: int = 2, on_trial: Callable[[str, float, float, bool], object] | None = None,
                        should_stop: Callable[[], bool] = lambda: False,
                        on_sentence: Callable[[str, float, int, int], object] | None = None
                        ) -> PerLabelResult:
    """Per-label Θ̂ on the stored dev set, from the finished global calibration with these settings.
    ``on_sentence(label, theta, done, total)`` follows each trial's parsing of the dev set."""
    if passes < 1:
        raise ConfigurationError(f"passes must be at least 1, got {passes}")
    database = Database(db)
    store = Calibrations(database)
    gold = dev_trees(database)
    calibration = calibration_id(database, settings, gold, "database")
    best = store.best_theta(calibration)
    if best is None:
        raise ConfigurationError(f"{db}: no global calibration with these settings yet; run `clparse "
                                 f"calibrate --db {db}` with the same --beam/--max-pops/--aggregator/--tags "
                                 "first")
    points = {float(p.theta): p
              for p in dict((row["id"], pts) for row, pts in store.calibrations())[calibration]}
    grid = sorted(points, reverse=True)
    start_f1 = float(points[best].f1)
    brackets = [(row["label"], row["gold"]) for row in store.label_scores(calibration, best)]
    labels = Runs(database).labels()
    done = store.trials(calibration)
    gold_count = dict(brackets)
    order = sorted((label for label in labels if gold_count.get(label, 0) > 0),
                   key=lambda x: (-gold_count[x], x))
    thetas = {label: float(best) for label in labels}
    result = PerLabelResult(calibration, float(best), start_f1, thetas, start_f1)
    tagger = load_tagger(database) if settings.tags == "tagger" else None
    params = EvalbParams()

    def outcome(label: str, theta: float) -> bool:
        index = result.replayed + result.trials
        if index < len(done):  # replay a committed trial
            stored_label, stored_theta, f1, accepted = done[index]
            if (stored_label, stored_theta) != (label, theta):
                raise ConfigurationError(f"{db}: the stored per-label trials do not follow from this "
                                         f"calibration (trial {index}: {stored_label} at {stored_theta:g}, "
                                         f"expected {label} at {theta:g}); delete them to start again")
            result.replayed += 1
        else:
            if should_stop():
                raise _Stopped
            start = time.perf_counter()
            trial = {**thetas, label: theta}
            follow = None if on_sentence is None else lambda n: on_sentence(label, theta, n, len(gold))
            parsed = parse_dev(database, load_model(database, trial), gold, settings, tagger, follow,
                               should_stop=should_stop)
            if parsed is None:
                raise _Stopped
            f1 = evaluate(gold, parsed[0], params).all.f1
            accepted = f1 > result.f1
            try:
                store.add_trial(calibration, index, label, theta, f1, accepted, time.perf_counter() - start)
            except Exception:
                # Another `--per-label` of this calibration stored this trial first (the same trial: the
                # ascent is deterministic); it is kept, where the insert failed as "UNIQUE constraint failed".
                stored = store.trials(calibration)
                if len(stored) <= index or stored[index][:2] != (label, theta):
                    raise
                f1, accepted = stored[index][2:]
            result.trials += 1
            if on_trial is not None:
                on_trial(label, theta, f1, accepted)
        result.history.append((label, theta, f1, accepted))
        if accepted:
            result.f1 = f1
        return bool(accepted)

    try:
        for _ in _trials(order, grid, thetas, passes, outcome,
                         lambda: result.replayed + result.trials < len(done)):
            pass
    except _Stopped:
        result.stopped = True
    database.close()
    return result


class _Stopped(Exception):
    """Ctrl-C between trials (or inside one: that trial is dropped and run again on resume)."""
