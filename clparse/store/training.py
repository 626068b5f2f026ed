"""Boosting state in the database: load a label's examples, resume its state, commit iterations.

One iteration is one transaction: the iteration row, its tree nodes, the label's new state with its
margin vector, and (every ``checkpoint_every`` iterations) a kept margin checkpoint. A process
killed at any instant therefore loses at most the iteration it was computing.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa

from clparse.boost.booster import BoostSettings, IterationResult
from clparse.errors import ConfigurationError, DatabaseError, LabelClaimedError
from clparse.store import schema
from clparse.store.database import open_engine
from clparse.store.stamps import now

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
class LabelState:
    iteration: int
    theta: float
    margins: np.ndarray
    state: str | None  # None: never trained
    settings: BoostSettings


class TrainingStore:
    """Reads examples and reads/writes boosting state of one database."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.engine = open_engine(self.path, readonly=readonly)
        with self.engine.connect() as connection:
            run = connection.execute(sa.select(schema.runs.c.id)).scalar()
        if run is None:
            raise DatabaseError(f"{self.path}: nothing to train; run `clparse prepare --db {self.path} ...` first")
        self.run_id: int = run

    def labels(self) -> dict[str, int]:
        """Label name -> id, in name order."""
        lb = schema.labels
        with self.engine.connect() as connection:
            return dict(connection.execute(sa.select(lb.c.name, lb.c.id).where(lb.c.run_id == self.run_id)
                                           .order_by(lb.c.name)).all())

    def label_id(self, label: str) -> int:
        labels = self.labels()
        if label not in labels:
            raise ConfigurationError(f"{self.path}: no label {label!r}; labels are {', '.join(labels)}")
        return labels[label]

    def load_problem(self, label: str) -> LabelProblem:
        """The label's examples; feature rows are streamed chunk by chunk so the shared matrix is never whole."""
        label_id = self.label_id(label)
        le, fr = schema.label_examples, schema.feature_rows
        with self.engine.connect() as connection:
            chunks = connection.execute(sa.select(le.c.row_int32, le.c.y_int8, le.c.multiplicity_int32)
                                        .where(le.c.label_id == label_id).order_by(le.c.chunk)).all()
            n_features = int(connection.execute(sa.select(sa.func.count()).select_from(schema.features)
                                                .where(schema.features.c.run_id == self.run_id)).scalar_one())
            rows = np.concatenate([np.frombuffer(c[0], dtype="<i4") for c in chunks]).astype(np.int64)
            y = np.concatenate([np.frombuffer(c[1], dtype="i1") for c in chunks])
            multiplicity = np.concatenate([np.frombuffer(c[2], dtype="<i4") for c in chunks])
            lengths: list[np.ndarray] = []
            pieces: list[np.ndarray] = []
            cursor = 0  # rows are sorted by id (deduplication sorts them), so one merge pass suffices
            result = connection.execute(sa.select(fr.c.first_row, fr.c.row_count, fr.c.indptr_int64,
                                                  fr.c.indices_int32).where(fr.c.run_id == self.run_id)
                                        .order_by(fr.c.chunk))
            for first, count, indptr_blob, indices_blob in result:
                stop = int(np.searchsorted(rows, first + count, side="left"))
                wanted = rows[cursor:stop] - first
                cursor = stop
                if not len(wanted):
                    continue
                indptr = np.frombuffer(indptr_blob, dtype="<i8")
                indices = np.frombuffer(indices_blob, dtype="<i4")
                starts, ends = indptr[wanted], indptr[wanted + 1]
                lengths.append(ends - starts)
                take = np.repeat(ends - np.cumsum(ends - starts), ends - starts) + np.arange(int((ends - starts).sum()))
                pieces.append(indices[take])
        if cursor != len(rows):
            raise DatabaseError(f"{self.path}: label {label} refers to feature rows that are not stored")
        out_indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        if lengths:
            np.cumsum(np.concatenate(lengths), out=out_indptr[1:])
        out_indices = np.concatenate(pieces).astype(np.int32) if pieces else np.zeros(0, dtype=np.int32)
        return LabelProblem(label, label_id, out_indptr, out_indices, n_features, y, multiplicity, rows)

    # ------------------------------------------------------------------ state

    def state(self, label: str, settings: BoostSettings | None = None, n_examples: int | None = None) -> LabelState:
        """The label's committed state; a label never trained gets ``settings`` (default if None)."""
        label_id = self.label_id(label)
        lt = schema.label_training
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(lt).where(lt.c.label_id == label_id)).mappings().first()
        if row is None:
            margins = np.zeros(n_examples or 0, dtype=np.float64)
            return LabelState(0, math.inf, margins, None, settings or BoostSettings())
        stored = BoostSettings.from_dict(json.loads(row["settings_json"]))
        if settings is not None and settings != stored:
            raise ConfigurationError(
                f"label {label} was trained with {stored.to_dict()}, not {settings.to_dict()}; settings cannot "
                "change midway (use a new database for other settings)")
        margins = np.frombuffer(row["margins_float64"], dtype="<f8").copy()
        theta = math.inf if row["theta"] is None else float(row["theta"])
        return LabelState(int(row["iteration"]), theta, margins, row["state"], stored)

    def claim(self, label: str, settings: BoostSettings, alive: Callable[[int | None, str | None, str | None], bool],
              note: str | None = None) -> None:
        """Mark the label as trained by this process, atomically (``BEGIN IMMEDIATE``).

        Refused if another live process holds it (``alive(pid, updated_at, message)``: the pid, the
        time its trainer last wrote, so a reused pid is told apart, and the claim's ``note`` naming
        its host); a new label gets its state row here.
        """
        label_id = self.label_id(label)
        lt = schema.label_training
        stamp = now()
        with self.engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            raw.apsw.execute("BEGIN IMMEDIATE")  # type: ignore[union-attr]  # check and write under one lock
            try:
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
                        label_id=label_id, settings_json=json.dumps(settings.to_dict(), sort_keys=True),
                        state="training", iteration=0, theta=None, loss=0.0, splits=0, pid=os.getpid(),
                        message=note, started_at=stamp, updated_at=stamp,
                        margins_float64=np.zeros(examples, dtype="<f8").tobytes()))
                else:
                    connection.execute(lt.update().where(lt.c.label_id == label_id).values(
                        state="training", pid=os.getpid(), message=note, updated_at=stamp))
                connection.commit()
            except BaseException:
                connection.rollback()
                raise

    def record_loss(self, label: str, loss: float) -> None:
        """The loss of the starting margins, shown until the first iteration commits."""
        lt = schema.label_training
        with self.engine.begin() as connection:
            connection.execute(lt.update().where(lt.c.label_id == self.label_id(label), lt.c.iteration == 0)
                               .values(loss=loss))

    def splits(self, label: str) -> int:
        lt = schema.label_training
        with self.engine.connect() as connection:
            value = connection.execute(sa.select(lt.c.splits).where(lt.c.label_id == self.label_id(label))).scalar()
        return int(value or 0)

    def commit(self, label: str, result: IterationResult, margins: np.ndarray, settings: BoostSettings,
               n_examples: int) -> None:
        """Store one finished iteration and the new state, in one transaction."""
        label_id = self.label_id(label)
        tree = result.tree
        stamp = now()
        it, nodes, lt = schema.iterations, schema.tree_nodes, schema.label_training
        with self.engine.begin() as connection:
            connection.execute(it.insert().values(
                label_id=label_id, iteration=result.iteration, theta=tree.theta, root_gain=tree.root_gain,
                loss_before=result.loss_before, loss_after=result.loss_after, z=result.z, splits=tree.splits,
                leaves=len(tree.nodes) - tree.splits, depth=tree.depth, weight_positive=result.weight_positive,
                weight_negative=result.weight_negative, weight_max=result.weight_max, seconds=result.seconds,
                search_seconds=result.search_seconds, finished_at=stamp))
            connection.execute(nodes.insert(), [
                {"label_id": label_id, "iteration": result.iteration, "node": n.node, "parent": n.parent,
                 "depth": n.depth, "feature_id": None if n.is_leaf else n.feature,
                 "gain": None if n.is_leaf else n.best_gain, "best_gain": n.best_gain,
                 "w_positive": n.w_positive, "w_negative": n.w_negative, "examples": n.examples,
                 "candidates": n.candidates, "confidence": n.confidence, "true_child": n.true_child,
                 "false_child": n.false_child} for n in tree.nodes])
            blob = np.ascontiguousarray(margins, dtype="<f8").tobytes()
            if result.iteration % settings.checkpoint_every == 0:
                connection.execute(schema.margin_checkpoints.insert().values(
                    label_id=label_id, iteration=result.iteration, margins_float64=blob))
            connection.execute(lt.update().where(lt.c.label_id == label_id).values(
                iteration=result.iteration, theta=tree.theta, loss=result.loss_after,
                splits=lt.c.splits + tree.splits,
                examples_per_second=n_examples / result.search_seconds if result.search_seconds > 0 else None,
                updated_at=stamp, margins_float64=blob))

    def release_dead(self, label: str, pid: int, message: str) -> bool:
        """Mark ``failed`` a label still claimed by process ``pid``, which died without saying so
        (SIGKILL, out of memory). Returns whether it was still claimed by that process."""
        lt = schema.label_training
        with self.engine.begin() as connection:
            result = connection.execute(lt.update().where(
                lt.c.label_id == self.label_id(label), lt.c.state == "training", lt.c.pid == pid
            ).values(state="failed", message=message, pid=None, updated_at=now()))
        return bool(result.rowcount)

    def finish(self, label: str, state: str, message: str | None = None) -> None:
        """Record why the label stopped (``paused``, ``stopped``, ``converged``, ``failed``)."""
        if state not in STATES:
            raise ValueError(state)
        lt = schema.label_training
        with self.engine.begin() as connection:
            connection.execute(lt.update().where(lt.c.label_id == self.label_id(label)).values(
                state=state, message=message, pid=None, updated_at=now()))

    def trees(self, label: str, up_to: int | None = None) -> list[list[dict[str, Any]]]:
        """The stored trees 1..up_to of a label as node rows (node order), for rebuilding and replay."""
        label_id = self.label_id(label)
        tn = schema.tree_nodes
        query = sa.select(tn.c.iteration, tn.c.node, tn.c.feature_id, tn.c.true_child, tn.c.false_child,
                          tn.c.confidence).where(tn.c.label_id == label_id)
        if up_to is not None:
            query = query.where(tn.c.iteration <= up_to)
        out: dict[int, list[dict[str, Any]]] = {}
        with self.engine.connect() as connection:
            for row in connection.execute(query.order_by(tn.c.iteration, tn.c.node)).mappings():
                out.setdefault(int(row["iteration"]), []).append(dict(row))
        return [out[k] for k in sorted(out)]
