"""Train many labels, one after another or in parallel processes (``jobs``).

Each label is trained in its own process when ``jobs > 1`` (spawned, so no SQLite handle or numba
state crosses a fork). A label that crashes is marked ``failed`` and the others go on. Stopping
(Ctrl-C, SIGTERM) is forwarded to every worker, each of which finishes and commits its current
iteration first. Progress comes from the database itself, like ``clparse status``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from clparse.boost.booster import BoostSettings, IterationResult
from clparse.errors import ClparseError, DatabaseError, LabelClaimedError, ParameterError
from clparse.store.database import (
    DAMAGED,
    checkpoint_wal,
    describe,
    is_damage,
    is_full,
    quick_check,
    sqlite_error,
)
from clparse.store.training import TrainingStore
from clparse.train.label import checked_state, train_label
from clparse.train.settings import RunSettings, per_label
from clparse.train.stopping import StopRule, default_theta_floor
from clparse.train.summary import TrainSummary
from clparse.worker_exit import worker_exit

#: What :func:`clparse.store.database.describe` says of a full disk (a worker reports its error as text).
FULL = ": the disk is full; "


def resolve(db: str | Path, labels: Sequence[str] | None, rule: StopRule,
            settings: BoostSettings | RunSettings | None = None) -> tuple[list[str], StopRule]:
    """The labels to train (all by default, validated) and the stop rule (the default Θ floor if empty).

    With ``settings``, a label whose first iteration used other settings (with :class:`RunSettings`: other
    than the options given) is refused here, before any label starts.
    """
    store = TrainingStore(db)
    known = store.labels()
    # a label named twice once: two workers for it would refuse each other (exit status 1)
    chosen = list(known) if not labels else list(dict.fromkeys(labels))
    unknown = [label for label in chosen if label not in known]
    if unknown:
        raise ParameterError("labels", unknown_labels(unknown, list(known)))
    if rule.empty:
        rule = StopRule(until_theta=default_theta_floor(store.mean_candidates()))
    if isinstance(settings, RunSettings):
        per_label(chosen, settings)  # built from each started label's stored settings
    elif settings is not None:
        for label in chosen:
            checked_state(store, label, settings)
    store.close()
    return chosen, rule


def unknown_labels(unknown: Sequence[str], known: Sequence[str]) -> str:
    """What is wrong with label names the run does not have, in a line: a near miss is named (``NNP`` → NP),
    the run's labels are listed only when few (a treebank has dozens)."""
    from difflib import get_close_matches

    names = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
    # labels are case-sensitive: `np` for NP is the likeliest slip, and difflib's ratio for it is 0
    folded = {name.casefold(): name for name in known}
    near = [folded[unknown[0].casefold()]] if len(unknown) == 1 and unknown[0].casefold() in folded else \
        get_close_matches(unknown[0], known, n=1, cutoff=0.5) if len(unknown) == 1 else []
    if near:
        return f"no label {names} in this run; did you mean {near[0]}?"
    listed = ", ".join(known)
    listed = f"its labels: {listed}" if len(listed) <= 110 else "`clparse status` lists its labels"
    return f"no label{'s' if len(unknown) > 1 else ''} {names} in this run ({listed})"


def started_settings(db: str | Path) -> dict[str, BoostSettings]:
    """The settings each started label was started with (they may differ from label to label)."""
    store = TrainingStore(db, readonly=True)
    try:  # the settings alone: reading each label's state read and verified its margins too, so damage in
        # one label's refused training the others (each label's own are verified when it is claimed)
        started = store.started_settings()
        return {label: BoostSettings.from_dict(settings) for label, settings in started.items()}
    finally:
        store.close()


def train(db: str | Path, labels: Sequence[str] | None = None,
          settings: BoostSettings | RunSettings = BoostSettings(),
          rule: StopRule = StopRule(), jobs: int = 1, should_stop: Callable[[], bool] = lambda: False,
          on_iteration: Callable[[str, IterationResult], object] | None = None,
          on_poll: Callable[[], object] | None = None, dask: str | None = None,
          batch_iterations: int = 50, batch_seconds: float = 1.0) -> TrainSummary:
    """Train ``labels`` (default: all) until ``rule`` (default: the Θ floor); resumable at any point.

    A label another live trainer holds is left to it (``summary.refused``); the others are trained
    here, so two trainers started side by side share the work. A damaged file is refused before
    anything is written. ``settings``: every label's, or per label (:class:`RunSettings`, what
    :func:`clparse.api.train` gives: a started label keeps its own). With ``dask`` (``local:N`` or a
    scheduler address) the labels are computed on Dask workers and committed here
    (:mod:`clparse.train.cluster`), in batches of at most ``batch_iterations`` iterations or
    ``batch_seconds`` seconds of work.
    """
    if dask is not None:
        from clparse.dask_address import check_address, require_dask

        check_address(dask)
        require_dask()  # one line on how to install it, before the database is touched
    quick_check(db)
    chosen, rule = resolve(db, labels, rule, settings)
    each = per_label(chosen, settings)
    summary = TrainSummary(rule)
    if jobs < 1:
        raise ParameterError("jobs", f"must be at least 1, got {jobs}")
    if dask is not None:
        from clparse.train.cluster import train_on_cluster

        pending = _settle_finished(db, chosen, each, rule, should_stop, summary)
        if pending:
            summary.cluster = train_on_cluster(db, pending, each, rule, dask, should_stop, on_poll,
                                               summary, batch_iterations, batch_seconds)
        checkpoint_wal(db)
        return summary
    if jobs == 1:
        for label in chosen:
            if should_stop():
                break
            _train_here(db, label, each[label], rule, should_stop, on_iteration, summary)
        checkpoint_wal(db)
        return summary
    _train_parallel(db, chosen, each, rule, jobs, should_stop, on_poll, summary)
    checkpoint_wal(db)
    return summary


def _train_here(db: str | Path, label: str, settings: BoostSettings, rule: StopRule,
                should_stop: Callable[[], bool],
                on_iteration: Callable[[str, IterationResult], object] | None, summary: TrainSummary) -> None:
    """One label in this process; its outcome goes into ``summary`` (the other labels go on)."""
    try:
        summary.states[label] = train_label(db, label, settings, rule, should_stop, on_iteration)
    except LabelClaimedError as exc:
        summary.states[label], summary.refused[label] = "refused", str(exc)
    except Exception as exc:  # a crash is recorded in the database; the other labels go on
        # A damaged file or a full disk stops every label alike: one error, not one per label (and the
        # other labels must not write into a damaged file either).
        if is_damage(exc):
            raise (exc if isinstance(exc, DatabaseError) else sqlite_error(exc, db)) from exc
        if is_full(exc):
            raise
        summary.states[label], summary.failures[label] = "failed", \
            str(exc) if isinstance(exc, ClparseError) else describe(exc, db)


def _finished(store: TrainingStore, label: str, rule: StopRule) -> bool:
    """Has the label nothing left to do under ``rule``? (Then no worker process is started for it.)"""
    state = store.state(label)
    return state.state == "converged" or (
        state.state is not None
        and rule.reached(state.iteration, state.theta, store.splits(label)) is not None)


def _settle_finished(db: str | Path, labels: list[str], settings: dict[str, BoostSettings], rule: StopRule,
                     should_stop: Callable[[], bool], summary: TrainSummary) -> list[str]:
    """Settle here the labels already done (a worker would start for nothing); the others, in order."""
    store = TrainingStore(db)
    pending = []
    for label in labels:
        if _finished(store, label, rule):
            _train_here(db, label, settings[label], rule, should_stop, None, summary)
        else:
            pending.append(label)
    store.close()
    return pending


def _train_parallel(db: str | Path, labels: list[str], settings: dict[str, BoostSettings], rule: StopRule,
                    jobs: int,
                    should_stop: Callable[[], bool], on_poll: Callable[[], object] | None,
                    summary: TrainSummary) -> None:
    from clparse.train.worker import run

    pending = _settle_finished(db, labels, settings, rule, should_stop, summary)
    store = TrainingStore(db)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    running: dict[Any, tuple[str, Any]] = {}  # sentinel -> (label, process)
    forwarded = False
    # The rule goes as plain values: unpickling a StopRule would import the trainer before the
    # worker has made sure its parent is alive (clparse.train.worker).
    rule_values = (rule.until_theta, rule.max_iterations, rule.max_splits)

    fatal: list[str] = []  # a damaged file or a full disk: every label would meet it, so all stop

    def collect(label: str, state: str, error: str | None) -> None:
        summary.states[label] = state
        if state == "refused":
            summary.refused[label] = error or ""
        elif error:
            summary.failures[label] = error
            # A full disk gave one warning per label (each started, loaded and failed in turn) where
            # `--jobs 1` stops at the first with one error line.
            if DAMAGED in error or FULL in error:
                fatal.append(error)

    while pending or running:
        stopping = should_stop() or bool(fatal)  # the other workers must stop writing too
        if stopping and not forwarded:
            for _, process in running.values():
                process.terminate()  # SIGTERM: the worker finishes its iteration, commits, and pauses
            forwarded = True
        while pending and len(running) < jobs and not stopping:
            label = pending.pop(0)
            process = context.Process(target=run, args=(os.getpid(), str(db), label,
                                                        settings[label].to_dict(), rule_values, results),
                                      name=f"clparse-train-{label}", daemon=False)
            process.start()
            running[process.sentinel] = (label, process)
        for sentinel in wait(list(running), timeout=1.0):
            label, process = running.pop(sentinel)
            process.join()
            if process.exitcode not in (0, None) and label not in summary.states:
                if forwarded and process.exitcode == -signal.SIGTERM:
                    # Our SIGTERM came before the worker had installed its handler (it was still starting):
                    # it claimed nothing and trained nothing, so the label is simply left for the resume.
                    summary.states[label] = "paused"
                    continue
                why = f"worker {worker_exit(process.exitcode)}"
                summary.states[label], summary.failures[label] = "failed", why
                store.release_dead(label, process.pid, why)  # it could not record that itself
        while not results.empty():
            collect(*results.get())
        if on_poll is not None:
            on_poll()
        if stopping and not running:
            break
    deadline = time.monotonic() + 2.0  # a worker's last message can trail its exit a little
    while len(summary.states) < len(labels) and time.monotonic() < deadline:
        try:
            collect(*results.get(timeout=0.2))
        except Exception:  # queue.Empty
            continue
    store.close()
    if fatal:
        raise DatabaseError(fatal[0])
