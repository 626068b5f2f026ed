"""Train one label: resume its committed state, iterate, commit every iteration, stop cleanly."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.errors import ClparseError
from clparse.store.training import TrainingStore
from clparse.train.stopping import StopRule


def pid_alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def train_label(db: str | Path, label: str, settings: BoostSettings, rule: StopRule,
                should_stop: Callable[[], bool] = lambda: False,
                on_iteration: Callable[[str, IterationResult], object] | None = None) -> str:
    """Boost ``label`` until ``rule`` says stop, it converges, or ``should_stop()`` turns true.

    ``should_stop`` is checked between iterations only: an iteration in flight always finishes and
    commits. Returns the final state (``stopped``, ``converged``, ``paused``).
    """
    store = TrainingStore(db)
    state = store.state(label, settings)  # refuses changed settings before the (slow) load
    if state.state == "training" and pid_alive(_training_pid(store, label)) and _training_pid(store, label) != os.getpid():
        raise ClparseError(f"label {label} is being trained by process {_training_pid(store, label)}; "
                           "stop it first (or wait)")
    if state.state == "converged":
        return "converged"
    splits = _splits(store, label)
    reason = rule.reached(state.iteration, state.theta, splits)
    if reason is not None:
        if state.state is not None:
            store.finish(label, "stopped", reason)
        return "stopped"
    problem = store.load_problem(label)
    state = store.state(label, settings, len(problem.y))
    booster = Booster(problem.indptr, problem.indices, problem.n_features, problem.y, problem.multiplicity,
                      settings, margins=state.margins, iteration=state.iteration, theta=state.theta)
    del problem
    store.begin(label, settings, len(booster.y), booster.loss())
    try:
        while True:
            if should_stop():
                store.finish(label, "paused", f"interrupted after iteration {booster.iteration}; "
                                              "run `clparse train` again to resume")
                return "paused"
            result = booster.step()
            if result is None:
                store.finish(label, "converged", "no split reduces the loss any more")
                return "converged"
            store.commit(label, result, booster.margins, settings, len(booster.y))
            splits += result.tree.splits
            if on_iteration is not None:
                on_iteration(label, result)
            reason = rule.reached(booster.iteration, booster.theta, splits)
            if reason is not None:
                store.finish(label, "stopped", reason)
                return "stopped"
    except BaseException as exc:
        if not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            store.finish(label, "failed", f"{type(exc).__name__}: {exc}")
        else:
            store.finish(label, "paused", "interrupted; run `clparse train` again to resume")
        raise


def _training_pid(store: TrainingStore, label: str) -> int | None:
    import sqlalchemy as sa

    from clparse.store import schema

    lt = schema.label_training
    with store.engine.connect() as connection:
        return connection.execute(sa.select(lt.c.pid).where(lt.c.label_id == store.label_id(label))).scalar()


def _splits(store: TrainingStore, label: str) -> int:
    import sqlalchemy as sa

    from clparse.store import schema

    lt = schema.label_training
    with store.engine.connect() as connection:
        value = connection.execute(sa.select(lt.c.splits).where(lt.c.label_id == store.label_id(label))).scalar()
    return int(value or 0)
