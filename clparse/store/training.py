"""Boosting state in the database: load a label's examples, resume its state, commit iterations.

One iteration is one transaction: the iteration row, its tree nodes and the label's new counters. The
margin vector (8 bytes per distinct example) is written only every ``checkpoint_every`` iterations,
as a kept margin checkpoint and as the label's stored margins, and when the label stops, pauses or
converges (:meth:`TrainingStore.finish`); ``label_training.margins_iteration`` says which iteration
the stored margins belong to. The trainer (``clparse.train``) rebuilds the margins of the last
committed iteration by adding the trees after that one, bit-identically. A process killed at any
instant therefore loses at most the iteration it was computing, and its resume replays at most
``checkpoint_every - 1`` trees.

Every tree and margin vector is committed with its SHA-256 (``clparse.store.verify``), and what training
reads is checked before the booster's compiled code sees it: a label's claim verifies the checksums of
the feature rows, its examples, its stored margins and the trees its resume replays before writing
anything; loading the examples checks lengths and index ranges as it assembles the label's matrix.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa

from clparse.errors import ConfigurationError, DatabaseError, LabelClaimedError
from clparse.store import blobs, reading, schema
from clparse.store.database import DAMAGED, Database
from clparse.store.export import refuse_exported
from clparse.store.models import Models, NodeRow
from clparse.store.runs import Runs
from clparse.store.stamps import now
from clparse.store.verify import node_values, tree_checksum, verify_label

#: States a label's training can be in (``label_training.state``).
STATES = ("training", "paused", "stopped", "converged", "failed")


@dataclass
class LabelProblem:
    """A label's deduplicated examples as a CSR matrix with sorted indices, ready for the booster."""

    label: str
    label_id: int
    indptr: np.ndarray
    indices: np.ndarray
    n_features: int
    y: np.ndarray
    multiplicity: np.ndarray
    rows: np.ndarray  # each example's row in the shared feature_rows (for SQL's clparse_row_features)

    @property
    def nonzeros(self) -> int:
        return int(self.indptr[-1])


@dataclass
class StoredState:
    """A label's committed boosting state; ``settings`` as stored (None: never trained).

    ``margins`` is Q after ``margins_iteration`` trees, which may be behind ``iteration`` (the last
    committed one): trees margins_iteration+1..iteration are still to be added to it.
    """

    iteration: int
    theta: float
    margins: np.ndarray
    state: str | None  # None: never trained
    settings: dict[str, Any] | None
    margins_iteration: int


class TrainingStore:
    """Reads examples and reads/writes boosting state of one database (plain rows and arrays)."""

    def __init__(self, db: Database | str | Path, *, readonly: bool = False) -> None:
        self.db = Database.of(db, readonly=readonly)
        self.path = self.db.path
        with self.db.reading() as connection:
            run = connection.execute(sa.select(schema.runs.c.id)).scalar()
        if run is None:
            with self.db.raw() as raw:  # a combination: "run `clparse prepare`" is no advice for it
                combined = reading.combination_error(raw, self.path)
            if combined is not None:
                raise combined
            raise DatabaseError(f"{self.path}: nothing to train; run `clparse prepare --db {self.path} ...` "
                                "first")
        if not self.db.readonly:  # every training write opens a writable store: a parser has no examples
            refuse_exported(self.db, "train")
        self.run_id: int = run

    def close(self) -> None:
        self.db.close()

    def labels(self) -> dict[str, int]:
        """Label name -> id, in name order."""
        lb = schema.labels
        with self.db.reading() as connection:
            return dict(connection.execute(sa.select(lb.c.name, lb.c.id).where(lb.c.run_id == self.run_id)
                                           .order_by(lb.c.name)).all())

    def mean_candidates(self) -> float:
        return Runs(self.db).mean_candidates()

    def label_id(self, label: str) -> int:
        labels = self.labels()
        if label not in labels:
            raise ConfigurationError(f"{self.path}: no label {label!r}; labels are {', '.join(labels)}")
        return labels[label]

    def load_problem(self, label: str) -> LabelProblem:
        """The label's examples; feature rows are streamed chunk by chunk so the shared matrix is never
        whole. Every chunk is checked (checksum, lengths, feature ids below the feature count) and every
        example's row id must be a stored row, so the matrix handed to compiled code is in bounds."""
        runs = Runs(self.db)
        label_id, rows32, y, multiplicity = runs.label_examples(label)
        rows = rows32.astype(np.int64)
        n_features = runs.feature_count()
        lengths: list[np.ndarray] = []
        pieces: list[np.ndarray] = []
        cursor = 0  # rows are sorted by id (deduplication sorts them), so one merge pass suffices
        for first, count, indptr, indices in runs.feature_row_chunks(n_features):
            stop = int(np.searchsorted(rows, first + count, side="left"))
            wanted = rows[cursor:stop] - first
            cursor = stop
            if not len(wanted):
                continue
            starts, ends = indptr[wanted], indptr[wanted + 1]
            lengths.append(ends - starts)
            take = (np.repeat(ends - np.cumsum(ends - starts), ends - starts)
                    + np.arange(int((ends - starts).sum())))
            pieces.append(indices[take])
        if cursor != len(rows):
            raise DatabaseError(f"{self.path}: label {label} refers to feature rows that are not stored; "
                                f"{DAMAGED}")
        out_indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        if lengths:
            np.cumsum(np.concatenate(lengths), out=out_indptr[1:])
        out_indices = np.concatenate(pieces).astype(np.int32) if pieces else np.zeros(0, dtype=np.int32)
        return LabelProblem(label, label_id, out_indptr, out_indices, n_features, y, multiplicity, rows)

    # ------------------------------------------------------------------ state

    def state(self, label: str, n_examples: int | None = None) -> StoredState:
        """The label's committed state (a label never trained: iteration 0, ``n_examples`` zero margins);
        its margins may be those of an earlier iteration (``StoredState.margins_iteration``)."""
        label_id = self.label_id(label)
        lt = schema.label_training
        with self.db.reading() as connection:
            row = connection.execute(sa.select(lt).where(lt.c.label_id == label_id)).mappings().first()
        if row is None:
            return StoredState(0, math.inf, np.zeros(n_examples or 0, dtype=np.float64), None, None, 0)
        where = f"{self.path}: the stored margins of {label} (label_training)"
        blobs.verified("label_training", row, where)
        margins = blobs.decode("margins_float64", row["margins_float64"], writable=True, where=where)
        theta = math.inf if row["theta"] is None else float(row["theta"])
        return StoredState(int(row["iteration"]), theta, margins, row["state"],
                           json.loads(row["settings_json"]), int(row["margins_iteration"]))

    def started_settings(self) -> dict[str, dict[str, Any]]:
        """Per label that has begun training, the settings it was started with, by name; its margins are
        not read (:meth:`state` reads and verifies them: 450 MB of a 6 GB run)."""
        lb, lt = schema.labels, schema.label_training
        with self.db.reading() as connection:
            rows = connection.execute(sa.select(lb.c.name, lt.c.settings_json)
                                      .select_from(lt.join(lb, lb.c.id == lt.c.label_id))
                                      .order_by(lb.c.name)).all()
        return {str(name): json.loads(text) for name, text in rows}

    def claim(self, label: str, settings: dict[str, Any],
              alive: Callable[[int | None, str | None, str | None], bool], note: str | None = None) -> None:
        """Mark the label as trained by this process, atomically (``BEGIN IMMEDIATE``).

        Refused if another live process holds it (``alive(pid, updated_at, message)``: the pid, the
        time its trainer last wrote, so a reused pid is told apart, and the claim's ``note`` naming
        its host); a new label gets its state row here. Before anything is written, the checksums of what
        its training will read are verified (a damaged file is refused, not written into).
        """
        label_id = self.label_id(label)
        lt = schema.label_training
        with self.db.reading() as connection:
            replayed_after = connection.execute(sa.select(lt.c.margins_iteration)
                                                .where(lt.c.label_id == label_id)).scalar()
        verify_label(self.db, label_id, replayed_after or 0)
        stamp = now()
        with self.db.transaction(immediate=True) as connection:  # check and write under one lock
            row = connection.execute(sa.select(lt.c.state, lt.c.pid, lt.c.updated_at, lt.c.message)
                                     .where(lt.c.label_id == label_id)).first()
            if row is not None and row.state == "training" and row.pid != os.getpid() \
                    and alive(row.pid, row.updated_at, row.message):
                # Quote the claim's own note (host, pid), not a message left by an earlier stop.
                where = f" ({row.message})" if (row.message or "").startswith("training on ") else ""
                raise LabelClaimedError(f"label {label} is being trained by process {row.pid}{where}; stop "
                                        "it first (or wait for it)")
            if row is None:  # the state before iteration 1: all margins zero, one per distinct example
                examples = connection.execute(sa.select(schema.labels.c.examples).where(
                    schema.labels.c.id == label_id)).scalar_one()
                connection.execute(lt.insert().values(
                    label_id=label_id, settings_json=json.dumps(settings, sort_keys=True),
                    state="training", iteration=0, theta=None, loss=0.0, splits=0, pid=os.getpid(),
                    message=note, started_at=stamp, updated_at=stamp,
                    **_stored_margins(label_id, 0, np.zeros(examples))))
            else:
                connection.execute(lt.update().where(lt.c.label_id == label_id).values(
                    state="training", pid=os.getpid(), message=note, updated_at=stamp))

    def record_loss(self, label: str, loss: float) -> None:
        """The loss of the starting margins, shown until the first iteration commits."""
        lt = schema.label_training
        with self.db.transaction() as connection:
            connection.execute(lt.update().where(lt.c.label_id == self.label_id(label), lt.c.iteration == 0)
                               .values(loss=loss))

    def splits(self, label: str) -> int:
        lt = schema.label_training
        with self.db.reading() as connection:
            value = connection.execute(sa.select(lt.c.splits)
                                       .where(lt.c.label_id == self.label_id(label))).scalar()
        return int(value or 0)

    def commit(self, label: str, iteration: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]],
               margins: np.ndarray, *, checkpoint: bool, examples_per_second: float | None) -> None:
        """Store one finished iteration (its ``iterations`` row, its ``tree_nodes`` rows) and the label's
        new state, in one transaction.

        ``margins`` (Q after this iteration) are written only with ``checkpoint``: kept in
        ``margin_checkpoints`` and as the label's stored margins (``margins_iteration`` = this
        iteration). Other iterations leave the stored margins as they are, behind the iteration.
        The iteration row carries the tree's checksum (``clparse.store.verify.tree_checksum``), the
        margin rows theirs.
        """
        label_id = self.label_id(label)
        stamp = now()
        it, tn, lt = schema.iterations, schema.tree_nodes, schema.label_training
        t = int(iteration["iteration"])
        nodes = sorted(nodes, key=lambda node: int(node["node"]))
        sha256 = tree_checksum(label_id, t, iteration["theta"], map(node_values, nodes))
        state: dict[str, Any] = {
            "iteration": t, "theta": iteration["theta"], "loss": iteration["loss_after"],
            "splits": lt.c.splits + iteration["splits"], "examples_per_second": examples_per_second,
            "updated_at": stamp}
        with self.db.transaction() as connection:
            connection.execute(it.insert().values(label_id=label_id, finished_at=stamp, sha256=sha256,
                                                  **iteration))
            connection.execute(tn.insert(),
                               [{"label_id": label_id, "iteration": t, **node} for node in nodes])
            if checkpoint:
                stored = _stored_margins(label_id, t, margins)
                kept = {"label_id": label_id, "iteration": t, "margins_float64": stored["margins_float64"]}
                connection.execute(schema.margin_checkpoints.insert().values(
                    **kept, sha256=blobs.row_checksum("margin_checkpoints", kept)))
                state.update(stored)
            connection.execute(lt.update().where(lt.c.label_id == label_id).values(**state))

    def checkpoint_before(self, label: str, iteration: int) -> tuple[int, np.ndarray] | None:
        """(c, margins after c trees) of the latest kept checkpoint c <= ``iteration``, if any."""
        mc = schema.margin_checkpoints
        with self.db.reading() as connection:
            found = connection.execute(sa.select(mc).where(
                mc.c.label_id == self.label_id(label), mc.c.iteration <= iteration
            ).order_by(mc.c.iteration.desc()).limit(1)).mappings().first()
        if found is None:
            return None
        where = f"{self.path}: the margin checkpoint of iteration {found['iteration']} of {label} " \
                "(margin_checkpoints)"
        blobs.verified("margin_checkpoints", found, where)
        return int(found["iteration"]), blobs.decode("margins_float64", found["margins_float64"],
                                                     writable=True, where=where)

    def release_dead(self, label: str, pid: int, message: str) -> bool:
        """Mark ``failed`` a label still claimed by process ``pid``, which died without saying so
        (SIGKILL, out of memory). Returns whether it was still claimed by that process."""
        lt = schema.label_training
        with self.db.transaction() as connection:
            result = connection.execute(lt.update().where(
                lt.c.label_id == self.label_id(label), lt.c.state == "training", lt.c.pid == pid
            ).values(state="failed", message=message, pid=None, updated_at=now()))
        return bool(result.rowcount)

    def finish(self, label: str, state: str, message: str | None = None, *, margins: np.ndarray | None = None,
               margins_iteration: int | None = None) -> None:
        """Record why the label stopped (``paused``, ``stopped``, ``converged``, ``failed``).

        With ``margins`` (Q after ``margins_iteration``, which must be the last committed iteration)
        they become the label's stored margins in the same transaction, so reading or resuming the
        label replays no tree. No ``margin_checkpoints`` row is added: checkpoints stay at multiples of
        ``checkpoint_every`` (a pause would otherwise leave one more kept vector each time), and the
        stored margins serve this iteration until the next checkpoint replaces them.
        """
        if state not in STATES:
            raise ValueError(state)
        if (margins is None) != (margins_iteration is None):
            raise ValueError("margins and margins_iteration go together")
        label_id = self.label_id(label)
        lt = schema.label_training
        values: dict[str, Any] = {"state": state, "message": message, "pid": None, "updated_at": now()}
        with self.db.transaction() as connection:
            if margins is not None:
                committed = connection.execute(sa.select(lt.c.iteration)
                                               .where(lt.c.label_id == label_id)).scalar()
                if committed is None or committed != margins_iteration:
                    raise DatabaseError(f"{self.path}: label {label} has committed iteration {committed}, "
                                        f"not {margins_iteration}; its margins are not stored")
                values.update(_stored_margins(label_id, int(committed), margins))
                changes = lt.c.label_id == label_id
            else:  # a label found already so (train run again on a finished run) keeps its last update
                changes = (lt.c.label_id == label_id) & sa.or_(
                    lt.c.state != state, lt.c.message.is_distinct_from(message), lt.c.pid.is_not(None))
            connection.execute(lt.update().where(changes).values(**values))

    def trees(self, label: str, up_to: int | None = None, after: int = 0) -> list[list[NodeRow]]:
        """The stored trees after+1..up_to of a label as node rows (see :meth:`Models.trees`)."""
        self.label_id(label)  # an unknown label is refused with the labels named
        return Models(self.db).trees(label, up_to, after)

    def status_rows(self) -> list[tuple[Any, ...]]:
        """Per label, in name order: (name, iteration, theta, splits, loss, examples/s, state, updated_at,
        message, pid); a label never trained has None from ``iteration`` on."""
        lb, lt = schema.labels, schema.label_training
        query = sa.select(lb.c.name, lt.c.iteration, lt.c.theta, lt.c.splits, lt.c.loss,
                          lt.c.examples_per_second, lt.c.state, lt.c.updated_at, lt.c.message, lt.c.pid
                          ).select_from(lb.outerjoin(lt, lt.c.label_id == lb.c.id)).order_by(lb.c.name)
        with self.db.reading() as connection:
            return [tuple(row) for row in connection.execute(query)]


def _stored_margins(label_id: int, iteration: int, margins: np.ndarray) -> dict[str, Any]:
    """The ``label_training`` values that store ``margins`` as Q after ``iteration``, with their checksum."""
    row = {"margins_iteration": iteration, "margins_float64": blobs.encode("margins_float64", margins)}
    return {**row, "margins_sha256": blobs.row_checksum("label_training", {"label_id": label_id, **row})}
