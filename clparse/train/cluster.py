"""``clparse train --dask``: the labels are boosted on Dask workers, the database is written here only.

This process (the coordinator) owns the database, as a local trainer does: it claims a label, loads
its problem and resume state (margins replayed from the last checkpoint; in a loader thread, one label
at a time, so commits go on meanwhile), and scatters them to one worker as a
:class:`~clparse.train.remote.LabelJob`. It then asks that worker for batches of iterations
(:func:`~clparse.train.remote.advance`; the next batch is requested before the current one is committed, so
the worker is not idle while the coordinator writes) and commits every returned iteration in its own
transaction, the same rows and checkpoints a local run writes, applying the stop rule itself. Workers never
see the database or its path.

A worker lost mid-label (killed, its machine gone) cancels the label's futures; the label is then
started again from its last committed iteration, on any worker, and ends bit-identical to a local
run. A coordinator killed outright leaves its claims to a dead pid: the next ``clparse train``
takes them over, as after any kill. Dask is imported only here (``pip install 'clparse[dask]'``).
"""

from __future__ import annotations

import concurrent.futures
import pickle
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from clparse.dask_address import check_scheduler, close_quietly, dask_connect, require_dask
from clparse.errors import ClparseError, DatabaseError, LabelClaimedError

if TYPE_CHECKING:  # the trainer is imported on first use: --dask's address is checked without it
    from clparse.boost.booster import BoostSettings
    from clparse.store.training import TrainingStore
    from clparse.train.summary import TrainSummary
    from clparse.train.remote import Batch
    from clparse.train.stopping import StopRule

#: How often a label's worker may be lost before the label is marked failed (a label that kills every
#: worker it meets, e.g. out of memory, must not go round the cluster for ever).
MAX_LOSSES = 3
CONNECT_TIMEOUT = 60.0  # seconds to reach the scheduler before giving up
NO_MARGINS = np.zeros(0, dtype=np.float64)  # what ``commit`` is given between checkpoints (it ignores it)


def shipped_bytes(value: object) -> int:
    """Bytes of ``value`` as Dask sends it (pickle protocol 5, arrays as out-of-band buffers), uncopied."""
    buffers: list[pickle.PickleBuffer] = []
    header = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    return len(header) + sum(buffer.raw().nbytes for buffer in buffers)


@dataclass
class ClusterStats:
    """What crossed the network and where the coordinator's time went (for docs and benchmarks)."""

    address: str = ""
    workers: int = 0
    labels_shipped: int = 0  # label starts, resubmissions included
    bytes_to_workers: int = 0  # the scattered LabelJobs
    bytes_from_workers: int = 0  # the batches (rows, checkpoint and final margins)
    margin_bytes: int = 0  # of which margin vectors (checkpoints, a label's final margins)
    batches: int = 0
    iterations: int = 0
    resubmitted: int = 0
    load_seconds: float = 0.0  # loading problems and replaying margins here
    ship_seconds: float = 0.0  # scattering them
    commit_seconds: float = 0.0
    worker_seconds: float = 0.0  # time the workers spent in batches
    per_label: dict[str, int] = field(default_factory=dict)  # label -> bytes of its (last) LabelJob

    def describe(self) -> str:
        rows = self.bytes_from_workers - self.margin_bytes
        per_iteration = rows / self.iterations if self.iterations else 0.0
        return (f"dask: {self.labels_shipped} label job(s) shipped ({self.bytes_to_workers / 1e6:,.1f} MB), "
                f"{self.iterations} iterations received in {self.batches} batches "
                f"({self.bytes_from_workers / 1e3:,.1f} kB: {per_iteration:,.0f} bytes of rows per "
                f"iteration, {self.margin_bytes / 1e3:,.1f} kB of margins), {self.resubmitted} resubmitted")


@dataclass
class Running:
    """A label being loaded for a worker or computed on it: its futures and what is committed of it."""

    label: str
    worker: str
    loading: concurrent.futures.Future[Shipped] | None = None  # loading and scattering, in the loader thread
    job: Any = None  # the scattered LabelJob's future
    batch: Any | None = None  # the batch in flight
    committed: int = 0  # last committed iteration
    stored: int = 0  # the iteration whose margins label_training holds
    splits: int = 0
    batches: int = 0


@dataclass
class Shipped:
    """A label's job on its worker, and the committed state it starts from."""

    job: Any
    committed: int
    stored: int
    splits: int
    size: int
    load_seconds: float
    ship_seconds: float
    reason: str | None = None  # the stop rule held already under the claim: nothing was shipped (job None)
    margins: np.ndarray | None = None  # then: Q after ``committed``, if label_training lacks them


class ShipError(Exception):
    """Scattering a label's job failed: its worker (or the scheduler) went away meanwhile."""


def connect(address: str) -> tuple[Any, Callable[[bool], None]]:
    """:func:`~clparse.dask_address.dask_connect` for training: a Client for ``address``, and its close."""
    return dask_connect(address, CONNECT_TIMEOUT, "train")


def train_on_cluster(db: str | Path, labels: list[str], settings: Mapping[str, BoostSettings], rule: StopRule,
                     address: str, should_stop: Callable[[], bool], on_poll: Callable[[], object] | None,
                     summary: TrainSummary,
                     batch_iterations: int = 50, batch_seconds: float = 1.0) -> ClusterStats:
    """Train ``labels`` (unfinished ones; see :func:`clparse.train.parallel.train`) on the cluster at
    ``address``, each with its own ``settings``; outcomes go into ``summary``."""
    require_dask()
    client, close = connect(address)
    try:
        return Coordinator(db, settings, rule, client, summary, batch_iterations, batch_seconds).run(
            labels, should_stop, on_poll, address)
    finally:
        close_quietly(client, close, False)  # local workers are waited for, as ever


class Coordinator:
    def __init__(self, db: str | Path, settings: Mapping[str, BoostSettings], rule: StopRule, client: Any,
                 summary: TrainSummary, batch_iterations: int, batch_seconds: float) -> None:
        from clparse.store.training import TrainingStore

        self.db, self.settings, self.rule, self.client, self.summary = db, settings, rule, client, summary
        self.batch = (batch_iterations, batch_seconds)
        self.store: TrainingStore = TrainingStore(db)
        self.stats = ClusterStats()
        self.running: dict[str, Running] = {}
        self.losses: dict[str, int] = {}
        self.workers: dict[str, int] = {}  # address -> threads
        self.seen = 0.0  # when the worker list was last fetched
        # Labels are loaded and shipped one at a time (the coordinator's memory holds one label's arrays),
        # in a thread, so the labels already on workers go on committing meanwhile (minutes on a large run).
        self.loader = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="clparse-load")
        self.damaged = False

    # ------------------------------------------------------------------ the loop

    def run(self, labels: list[str], should_stop: Callable[[], bool], on_poll: Callable[[], object] | None,
            address: str) -> ClusterStats:
        distributed = require_dask()
        self.stats.address = address
        pending = list(labels)
        try:
            while pending or self.running:
                if should_stop():
                    break
                self.refresh_workers()
                for run in [r for r in self.running.values() if r.worker not in self.workers]:
                    self.lost(run, pending, f"worker {run.worker} left the cluster")
                while pending and (worker := self.free_worker()) is not None:
                    self.start(pending.pop(0), worker)
                futures = [r.batch for r in self.running.values() if r.batch is not None]
                loading = [r.loading for r in self.running.values() if r.loading is not None]
                if futures:
                    try:
                        distributed.wait(futures, timeout=0.5, return_when="FIRST_COMPLETED")
                    except Exception:  # a timeout, or futures cancelled by a lost worker: looked at below
                        pass
                elif loading:
                    concurrent.futures.wait(loading, timeout=0.5)
                else:
                    time.sleep(0.5)  # waiting for workers to join
                for run in list(self.running.values()):
                    if run.loading is not None and run.loading.done():
                        self.shipped(run, pending)
                    elif run.batch is not None and run.batch.done():
                        self.receive(run, pending)
                if on_poll is not None:
                    on_poll()
        finally:
            # Stopping (Ctrl-C, SIGTERM, an error here): batches in flight are dropped, every label keeps
            # its committed iterations and pauses; the resume replays the trees after its stored margins.
            for run in list(self.running.values()):
                self.drop(run)
                if not self.damaged:
                    try:
                        # run.job None: loading
                        where = "" if run.job is None else f" after iteration {run.committed}"
                        self.finish(run.label, "paused",
                                    f"interrupted{where}; run `clparse train` again to resume")
                    except Exception:  # e.g. a full disk: the claim then reads as dead, and resumes
                        pass
            self.loader.shutdown(wait=False, cancel_futures=True)
            self.store.close()
        self.stats.workers = len(self.workers)
        return self.stats

    def refresh_workers(self) -> None:
        if time.monotonic() - self.seen < 0.5:
            return
        self.seen = time.monotonic()
        self.check_scheduler()
        info = self.client.scheduler_info().get("workers")
        if info is None:  # the client closed meanwhile (it gives up reconnecting after its timeout)
            self.check_scheduler(closed=True)
        self.workers = {address: int(worker.get("nthreads", 1)) for address, worker in info.items()}

    def check_scheduler(self, closed: bool = False) -> None:
        """Stop the run with one line once the client has lost its scheduler: it was a KeyError traceback
        after a minute of reconnecting, and meanwhile every label's cancelled batch counted as a lost
        worker (a label so lost 3 times is marked failed, for a fault of the scheduler)."""
        check_scheduler(self.client, self.stats.address, closed=closed,
                        advice=": every label keeps its committed iterations; run the same command again to "
                               "resume")

    def free_worker(self) -> str | None:
        """The worker with the most free threads (one label per thread), None if all are busy."""
        busy: dict[str, int] = {}
        for run in self.running.values():
            busy[run.worker] = busy.get(run.worker, 0) + 1
        free = [(threads - busy.get(address, 0), address)
                for address, threads in sorted(self.workers.items())]
        best = max(free, default=(0, ""), key=lambda pair: pair[0])
        return best[1] if best[0] > 0 else None

    # ------------------------------------------------------------------ one label

    def start(self, label: str, worker: str) -> None:
        """Claim ``label`` for ``worker`` and have the loader thread load and ship it (:meth:`ship`)."""
        from clparse.train.label import checked_state
        from clparse.train.process import claim_note, trainer_alive

        store = self.store
        try:
            state = checked_state(store, label, self.settings[label])
            if state.state == "converged":
                self.summary.states[label] = "converged"
                return
            store.claim(label, self.settings[label].to_dict(), trainer_alive, claim_note(worker))
        except LabelClaimedError as exc:
            self.summary.states[label], self.summary.refused[label] = "refused", str(exc)
            return
        except ClparseError as exc:
            from clparse.train.label import damage_error

            if damage_error(exc, self.db) is not None:
                self.fail(label, exc)  # raises: nothing more is written
            self.summary.states[label], self.summary.failures[label] = "failed", str(exc)
            return
        run = Running(label, worker)
        run.loading = self.loader.submit(self.ship, label, worker)
        self.running[label] = run

    def ship(self, label: str, worker: str) -> Shipped:
        """In the loader thread: the label's problem and resume state, scattered to ``worker``."""
        from clparse.store.training import TrainingStore
        from clparse.train.label import checked_state
        from clparse.train.remote import LabelJob
        from clparse.train.weights import current_margins

        started = time.perf_counter()
        store = TrainingStore(self.db)  # its own handle: the main thread's commits go on meanwhile
        try:
            # Read under the claim, which holds until the label ends: no other trainer commits from here
            # on, so the stop rule is decided on this state (a label another trainer finished before the
            # claim is not given one tree too many).
            state = checked_state(store, label, self.settings[label])
            splits = store.splits(label)
            reason = self.rule.reached(state.iteration, state.theta, splits)
            if reason is not None and state.margins_iteration == state.iteration:
                return Shipped(None, state.iteration, state.margins_iteration, splits, 0,
                               time.perf_counter() - started, 0.0, reason)
            problem = store.load_problem(label)
            margins = current_margins(store, label, state, problem)
        finally:
            store.close()
        if reason is not None:  # stopped at its start: only its margins are to be stored
            return Shipped(None, state.iteration, state.margins_iteration, splits, 0,
                           time.perf_counter() - started, 0.0, reason, margins)
        job = LabelJob(label, problem.indptr, problem.indices, problem.n_features, problem.y,
                       problem.multiplicity, self.settings[label].to_dict(),
                       (self.rule.until_theta, self.rule.max_iterations, self.rule.max_splits),
                       state.iteration, state.theta, splits, margins)
        del problem, margins
        size = shipped_bytes(job)
        loaded = time.perf_counter()
        try:
            future = self.client.scatter(job, workers=[worker], hash=False)
        except Exception as exc:
            raise ShipError(f"shipping to worker {worker} failed ({exc!r})") from exc
        return Shipped(future, state.iteration, state.margins_iteration, splits, size, loaded - started,
                       time.perf_counter() - loaded)

    def shipped(self, run: Running, pending: list[str]) -> None:
        """A label's load ended: ask its worker for a first batch, or handle the failure."""
        assert run.loading is not None
        loading, run.loading = run.loading, None
        try:
            done = loading.result()
        except ShipError as exc:  # the worker (or the scheduler) went away meanwhile
            self.running.pop(run.label, None)
            self.workers.pop(run.worker, None)  # not chosen again before the scheduler is asked anew
            self.seen = 0.0
            self.requeue(run.label, pending, str(exc))
            return
        except Exception as exc:
            self.running.pop(run.label, None)
            self.fail(run.label, exc)
            return
        if done.reason is not None:  # the stop rule held already: the label ends here, nothing computed
            self.running.pop(run.label, None)
            try:
                if done.margins is None:
                    self.finish(run.label, "stopped", done.reason)
                else:
                    self.finish(run.label, "stopped", done.reason, margins=done.margins,
                                margins_iteration=done.committed)
            except Exception as exc:
                self.fail(run.label, exc)
            return
        run.job, run.committed, run.stored, run.splits = done.job, done.committed, done.stored, done.splits
        self.stats.load_seconds += done.load_seconds
        self.stats.ship_seconds += done.ship_seconds
        self.stats.labels_shipped += 1
        self.stats.bytes_to_workers += done.size
        self.stats.per_label[run.label] = done.size
        self.submit(run, run.committed)

    def submit(self, run: Running, expected: int) -> None:
        """Ask the label's worker for the iterations after ``expected``."""
        from clparse.train.remote import advance

        run.batches += 1
        run.batch = self.client.submit(advance, run.job, expected, *self.batch, workers=[run.worker],
                                       allow_other_workers=False, pure=False,
                                       key=f"clparse-{run.label}-{expected}-{uuid.uuid4().hex[:8]}")

    def receive(self, run: Running, pending: list[str]) -> None:
        """Commit a finished batch (having asked for the next one first), or handle its failure."""
        future = run.batch
        assert future is not None
        run.batch = None
        if future.status != "finished":
            exc = future.exception() if future.status == "error" else None
            if exc is None or self.is_lost(exc):
                self.lost(run, pending, f"worker {run.worker} lost ({exc or 'its tasks were cancelled'})")
            else:
                self.drop(run)
                self.fail(run.label, exc)
            return
        batch: Batch = future.result()
        self.stats.batches += 1
        self.stats.bytes_from_workers += shipped_bytes(batch)
        self.stats.margin_bytes += sum(m.nbytes for m in [r.margins for r in batch.records] + [batch.margins]
                                       if m is not None)
        self.stats.worker_seconds += batch.seconds
        if batch.end is None and batch.records:
            # the worker goes on while we write
            self.submit(run, int(batch.records[-1].iteration["iteration"]))
        try:
            self.commit(run, batch)
        except Exception as exc:
            self.drop(run)
            self.fail(run.label, exc)

    def commit(self, run: Running, batch: Batch) -> None:
        started = time.perf_counter()
        store, label, every = self.store, run.label, self.settings[run.label].checkpoint_every
        if batch.start_loss is not None:
            store.record_loss(label, batch.start_loss)
        reason = None
        for record in batch.records:
            t = int(record.iteration["iteration"])
            if t != run.committed + 1:
                raise DatabaseError(f"label {label}: the worker sent iteration {t} after {run.committed}")
            checkpoint = t % every == 0
            if checkpoint and record.margins is None:
                raise DatabaseError(f"label {label}: the worker sent no margins for checkpoint {t}")
            store.commit(label, record.iteration, record.nodes,
                         record.margins if record.margins is not None else NO_MARGINS,
                         checkpoint=checkpoint, examples_per_second=record.examples_per_second)
            run.committed, run.splits = t, run.splits + int(record.iteration["splits"])
            if checkpoint:
                run.stored = t
            self.stats.iterations += 1
            reason = self.rule.reached(t, float(record.iteration["theta"]), run.splits)
            if reason is not None:
                break
        self.stats.commit_seconds += time.perf_counter() - started
        if reason is not None:
            self.end(run, batch, "stopped", reason)
        elif batch.end == "converged":
            self.end(run, batch, "converged", batch.reason or "")
        elif batch.end is not None:  # the worker saw a stop the coordinator did not: trust the database
            raise DatabaseError(f"label {label}: the worker stopped ({batch.reason}) at iteration "
                                f"{run.committed}, where the stop rule does not")

    def end(self, run: Running, batch: Batch, final: str, message: str) -> None:
        """The label is done: its final state, with the margins unless a checkpoint holds them already."""
        self.drop(run)
        if run.stored == run.committed or batch.margins is None or batch.margins_iteration != run.committed:
            self.finish(run.label, final, message)
        else:
            self.finish(run.label, final, message, margins=batch.margins, margins_iteration=run.committed)

    # ------------------------------------------------------------------ endings

    def finish(self, label: str, final: str, message: str, **margins: Any) -> None:
        self.store.finish(label, final, message, **margins)
        self.summary.states[label] = final

    def drop(self, run: Running) -> None:
        """Forget the label's futures (the worker frees its data) and its place in the running set."""
        self.running.pop(run.label, None)
        if run.loading is not None:
            run.loading.cancel()  # a load under way finishes; its scattered job is then dropped
        futures = [f for f in (run.batch, run.job) if f is not None]
        run.batch = None
        try:
            self.client.cancel(futures)
        except Exception:  # the scheduler is gone: nothing is held there any more
            pass

    def lost(self, run: Running, pending: list[str], why: str) -> None:
        """The label's worker is gone: start it again from its last committed iteration, on any worker."""
        self.check_scheduler()  # or the scheduler is gone: nothing to count against the label (it pauses)
        self.drop(run)
        self.workers.pop(run.worker, None)
        self.seen = 0.0
        self.requeue(run.label, pending, why)

    def requeue(self, label: str, pending: list[str], why: str) -> None:
        self.losses[label] = self.losses.get(label, 0) + 1
        if self.losses[label] > MAX_LOSSES:
            self.fail(label, ClparseError(f"{why}; the label's worker was lost {self.losses[label]} times "
                                          "(out of memory? see the worker logs)"))
            return
        self.stats.resubmitted += 1
        pending.insert(0, label)

    @staticmethod
    def is_lost(exc: BaseException) -> bool:
        """Did ``exc`` come from losing a worker (rather than from the label's own computation)?"""
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError

        from clparse.train.remote import StateLost

        return isinstance(exc, (StateLost, KilledWorker, CommClosedError)) \
            or type(exc).__name__ in ("CancelledError", "FutureCancelledError")

    def fail(self, label: str, exc: BaseException) -> None:
        """Mark the label failed with one line (as a local trainer does); damage and a full disk stop all."""
        from clparse.store.database import describe, is_full
        from clparse.train.label import damage_error

        damage = damage_error(exc, self.db)
        if damage is not None or is_full(exc):
            self.damaged = True  # nothing more is written, not even the pauses
            if damage is None or damage is exc:
                raise exc
            raise damage from exc
        message = str(exc) if isinstance(exc, ClparseError) else describe(exc, self.db)
        try:
            self.store.finish(label, "failed", message)
        except Exception:
            pass
        self.summary.states[label], self.summary.failures[label] = "failed", message
