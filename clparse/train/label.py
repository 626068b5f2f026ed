"""Train one label: resume its committed state, iterate, commit every iteration, stop cleanly."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.store.training import TrainingStore
from clparse.train.stopping import StopRule


def pid_alive(pid: int | None) -> bool:
    """Is some process with this id running? (It may not be the one that recorded the id.)"""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_started(pid: int) -> float | None:
    """When process ``pid`` started (Unix time), from /proc; None where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22; the name in (...) may hold spaces
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def trainer_alive(pid: int | None, since: str | None) -> bool:
    """Is the trainer that recorded ``pid`` at time ``since`` (ISO stamp, whole seconds) still running?

    A pid alone is not enough: after a reboot or in a container the number is reused by unrelated
    processes. The trainer started before it wrote ``since``, so a live process with that pid that
    started later is another process, and the trainer is dead. (Stamps are whole seconds: 1 s slack.)
    """
    if not pid_alive(pid):
        return False
    assert pid is not None
    started = process_started(pid)
    if started is None or since is None:
        return True  # cannot tell: assume the claim holds (refusing is the safe side)
    try:
        stamp = datetime.fromisoformat(since).timestamp()
    except ValueError:
        return True
    return started <= stamp + 1.0


def train_label(db: str | Path, label: str, settings: BoostSettings, rule: StopRule,
                should_stop: Callable[[], bool] = lambda: False,
                on_iteration: Callable[[str, IterationResult], object] | None = None) -> str:
    """Boost ``label`` until ``rule`` says stop, it converges, or ``should_stop()`` turns true.

    ``should_stop`` is checked between iterations only: an iteration in flight always finishes and
    commits. Returns the final state (``stopped``, ``converged``, ``paused``). Any error after the
    label is claimed marks it ``failed`` (with the message) before it propagates.
    """
    store = TrainingStore(db)
    state = store.state(label, settings)  # refuses changed settings before the (slow) load
    if state.state == "converged":
        return "converged"
    reason = rule.reached(state.iteration, state.theta, store.splits(label))
    if reason is not None:
        if state.state is not None:
            store.finish(label, "stopped", reason)
        return "stopped"
    store.claim(label, settings, trainer_alive)  # atomic: a second trainer of the same label is refused here
    try:
        problem = store.load_problem(label)
        state = store.state(label, settings)
        booster = Booster(problem.indptr, problem.indices, problem.n_features, problem.y, problem.multiplicity,
                          settings, margins=state.margins, iteration=state.iteration, theta=state.theta)
        del problem
        store.record_loss(label, booster.loss())
        splits = store.splits(label)
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
    except (KeyboardInterrupt, SystemExit):
        store.finish(label, "paused", "interrupted; run `clparse train` again to resume")
        raise
    except BaseException as exc:
        from clparse.store.database import is_damage

        if not is_damage(exc):  # never write into a damaged file (the write could spread the damage)
            store.finish(label, "failed", f"{type(exc).__name__}: {exc}")
        raise
