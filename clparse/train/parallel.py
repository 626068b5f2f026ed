"""Train many labels, one after another or in parallel processes (``jobs``).

Each label is trained in its own process when ``jobs > 1`` (spawned, so no SQLite handle or numba
state crosses a fork). A label that crashes is marked ``failed`` and the others go on. Stopping
(Ctrl-C, SIGTERM) is forwarded to every worker, each of which finishes and commits its current
iteration first. Progress comes from the database itself, like ``clparse status``.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from clparse.boost.booster import BoostSettings, IterationResult
from clparse.errors import ClparseError, ConfigurationError
from clparse.store.training import TrainingStore
from clparse.train.label import train_label
from clparse.train.stopping import StopRule, default_theta_floor


@dataclass
class TrainSummary:
    rule: StopRule
    states: dict[str, str] = field(default_factory=dict)  # label -> final state
    failures: dict[str, str] = field(default_factory=dict)  # label -> error

    @property
    def interrupted(self) -> bool:
        return any(state == "paused" for state in self.states.values())


def resolve(db: str | Path, labels: Sequence[str] | None, rule: StopRule,
            settings: BoostSettings | None = None) -> tuple[list[str], StopRule]:
    """The labels to train (all by default, validated) and the stop rule (the default Θ floor if empty).

    With ``settings``, a label whose first iteration used other settings is refused here, before any
    label starts.
    """
    store = TrainingStore(db)
    known = store.labels()
    chosen = list(known) if not labels else list(labels)
    unknown = [label for label in chosen if label not in known]
    if unknown:
        raise ConfigurationError(f"unknown label(s) {', '.join(unknown)}; the database has {', '.join(known)}")
    if rule.empty:
        with store.engine.connect() as connection:
            rule = StopRule(until_theta=default_theta_floor(connection))
    if settings is not None:
        for label in chosen:
            store.state(label, settings)
    store.engine.dispose()
    return chosen, rule


def train(db: str | Path, labels: Sequence[str] | None = None, settings: BoostSettings = BoostSettings(),
          rule: StopRule = StopRule(), jobs: int = 1, should_stop: Callable[[], bool] = lambda: False,
          on_iteration: Callable[[str, IterationResult], object] | None = None,
          on_poll: Callable[[], object] | None = None) -> TrainSummary:
    """Train ``labels`` (default: all) until ``rule`` (default: the Θ floor); resumable at any point."""
    chosen, rule = resolve(db, labels, rule, settings)
    summary = TrainSummary(rule)
    if jobs < 1:
        raise ConfigurationError(f"--jobs must be at least 1, got {jobs}")
    if jobs == 1:
        for label in chosen:
            if should_stop():
                break
            try:
                summary.states[label] = train_label(db, label, settings, rule, should_stop, on_iteration)
            except ClparseError as exc:  # refused (e.g. being trained elsewhere): the other labels go on
                summary.states[label], summary.failures[label] = "failed", str(exc)
            except Exception as exc:  # a crash is recorded in the database; the other labels go on
                summary.states[label], summary.failures[label] = "failed", f"{type(exc).__name__}: {exc}"
        _checkpoint_wal(db)
        return summary
    _train_parallel(db, chosen, settings, rule, jobs, should_stop, on_poll, summary)
    _checkpoint_wal(db)
    return summary


def _checkpoint_wal(db: str | Path) -> None:
    """Fold the write-ahead log into the database file, so a plain copy of the file is complete."""
    import apsw

    try:
        connection = apsw.Connection(str(db))
        connection.set_busy_timeout(2_000)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        connection.close()
    except apsw.Error:
        pass  # best effort: readers may hold the log; it is folded in later anyway


def _worker(db: str, label: str, settings: dict[str, Any], rule: StopRule, results: Any) -> None:
    """Entry point of a worker process: stop flags on SIGINT/SIGTERM, one label, result on a queue."""
    stop = {"requested": False}

    def request(_signum: int, _frame: object) -> None:
        stop["requested"] = True

    signal.signal(signal.SIGINT, request)
    signal.signal(signal.SIGTERM, request)
    _die_with_parent()
    try:
        state = train_label(db, label, BoostSettings.from_dict(settings), rule, lambda: stop["requested"])
        results.put((label, state, None))
    except BaseException as exc:  # reported to the parent; train_label already marked the label failed
        results.put((label, "failed", f"{type(exc).__name__}: {exc}"))


def _die_with_parent() -> None:
    """Ask Linux to send this worker SIGTERM if the parent dies (it then pauses cleanly)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: a killed parent leaves workers to finish their label
        pass


def _train_parallel(db: str | Path, labels: list[str], settings: BoostSettings, rule: StopRule, jobs: int,
                    should_stop: Callable[[], bool], on_poll: Callable[[], object] | None,
                    summary: TrainSummary) -> None:
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    pending = list(labels)
    running: dict[Any, tuple[str, Any]] = {}  # sentinel -> (label, process)
    forwarded = False
    while pending or running:
        stopping = should_stop()
        if stopping and not forwarded:
            for _, process in running.values():
                process.terminate()  # SIGTERM: the worker finishes its iteration, commits, and pauses
            forwarded = True
        while pending and len(running) < jobs and not stopping:
            label = pending.pop(0)
            process = context.Process(target=_worker, args=(str(db), label, settings.to_dict(), rule, results),
                                      name=f"clparse-train-{label}", daemon=False)
            process.start()
            running[process.sentinel] = (label, process)
        for sentinel in wait(list(running), timeout=1.0):
            label, process = running.pop(sentinel)
            process.join()
            if process.exitcode not in (0, None) and label not in summary.states:
                summary.states[label] = "failed"
                summary.failures[label] = f"worker exited with status {process.exitcode}"
        while not results.empty():
            label, state, error = results.get()
            summary.states[label] = state
            if error:
                summary.failures[label] = error
        if on_poll is not None:
            on_poll()
        if stopping and not running:
            break
    deadline = time.monotonic() + 2.0  # a worker's last message can trail its exit a little
    while len(summary.states) < len(labels) and time.monotonic() < deadline:
        try:
            label, state, error = results.get(timeout=0.2)
        except Exception:  # queue.Empty
            continue
        summary.states[label] = state
        if error:
            summary.failures[label] = error
