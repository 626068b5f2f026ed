"""The worker side of ``clparse train --dask``: boost one label in memory, hand back the rows to commit.

Nothing here touches storage (``clparse.store`` is never imported on a worker, and no database path
is ever shipped): the coordinator loads a label's problem and resume state, scatters them to one
worker as a :class:`LabelJob`, and asks for batches of iterations with :func:`advance`. The booster
lives on the job object in the worker's memory, so later batches ship only a few integers; the
coordinator commits each returned iteration exactly as a local trainer would.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from clparse.boost.booster import Booster, BoostSettings

if TYPE_CHECKING:
    from clparse.boost.booster import IterationResult


class StateLost(Exception):
    """The worker does not hold the label's state at the expected iteration (it was restarted or the
    job's data were moved): the coordinator resubmits the label from its last committed iteration."""


def iteration_rows(result: IterationResult) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``iterations`` row and ``tree_nodes`` rows of a finished iteration."""
    tree = result.tree
    iteration = {
        "iteration": result.iteration, "theta": tree.theta, "root_gain": tree.root_gain,
        "loss_before": result.loss_before, "loss_after": result.loss_after, "z": result.z,
        "splits": tree.splits, "leaves": len(tree.nodes) - tree.splits, "depth": tree.depth,
        "weight_positive": result.weight_positive,
        "weight_negative": result.weight_negative, "weight_max": result.weight_max, "seconds": result.seconds,
        "search_seconds": result.search_seconds}
    nodes = [{"node": n.node, "parent": n.parent, "depth": n.depth,
              "feature_id": None if n.is_leaf else n.feature,
              "gain": None if n.is_leaf else n.best_gain, "best_gain": n.best_gain,
              "w_positive": n.w_positive,
              "w_negative": n.w_negative, "examples": n.examples, "candidates": n.candidates,
              "confidence": n.confidence, "true_child": n.true_child, "false_child": n.false_child}
             for n in tree.nodes]
    return iteration, nodes


def examples_per_second(examples: int, result: IterationResult) -> float | None:
    return examples / result.search_seconds if result.search_seconds > 0 else None


@dataclass
class LabelJob:
    """One label's problem and committed state, as shipped to a worker (plain arrays and values only)."""

    label: str
    indptr: np.ndarray
    indices: np.ndarray
    n_features: int
    y: np.ndarray
    multiplicity: np.ndarray
    settings: dict[str, Any]
    rule: tuple[float | None, int | None, int | None]  # StopRule's fields
    iteration: int
    theta: float
    splits: int
    margins: np.ndarray  # Q after ``iteration`` trees (already replayed by the coordinator)
    booster: Booster | None = field(default=None, repr=False)  # built on the worker by the first batch

    def __getstate__(self) -> dict[str, Any]:
        # Pickled only when shipped (no booster yet) or spilled to disk by a worker short of memory: the
        # booster is not kept then, and the next batch finds the job behind and asks for a resubmission.
        return {**self.__dict__, "booster": None}

    def start(self) -> Booster:
        if self.booster is None:
            self.booster = Booster(
                self.indptr, self.indices, self.n_features, self.y, self.multiplicity,
                BoostSettings.from_dict(self.settings), margins=self.margins, iteration=self.iteration,
                theta=self.theta)
        return self.booster


@dataclass
class Record:
    """One finished iteration: the rows the coordinator commits, and the margins at a checkpoint."""

    iteration: dict[str, Any]
    nodes: list[dict[str, Any]]
    examples_per_second: float | None
    margins: np.ndarray | None  # Q after this iteration, at checkpoints only


@dataclass
class Batch:
    label: str
    start_loss: float | None  # the loss of the starting margins (first batch only)
    records: list[Record]
    end: str | None  # "stopped" (the stop rule), "converged", or None: more to come
    reason: str | None
    # when the label ended: Q after ``margins_iteration`` (stored with its final state)
    margins: np.ndarray | None
    margins_iteration: int
    seconds: float  # time the worker spent in this batch


def advance(job: LabelJob, expected: int, max_iterations: int, max_seconds: float) -> Batch:
    """Run up to ``max_iterations`` iterations (fewer once ``max_seconds`` have passed, the stop rule is
    reached or nothing splits) from committed iteration ``expected``.

    The stop rule is checked here too, with the coordinator's own values, only so no iteration is
    computed past it; the coordinator still decides on what it commits.
    """
    from clparse.train.stopping import StopRule

    started = time.perf_counter()
    first = job.booster is None
    if first and job.iteration != expected:
        raise StateLost(f"label {job.label}: the worker holds iteration {job.iteration}, not {expected}")
    booster = job.start()
    if booster.iteration != expected:
        raise StateLost(f"label {job.label}: the worker is at iteration {booster.iteration}, not {expected}")
    rule = StopRule(*job.rule)
    every = booster.settings.checkpoint_every
    start_loss = booster.loss() if first else None
    records: list[Record] = []
    end = reason = None
    while True:
        result = booster.step()
        if result is None:
            end, reason = "converged", "no split reduces the loss any more"
            break
        iteration, nodes = iteration_rows(result)
        checkpoint = result.iteration % every == 0
        records.append(Record(iteration, nodes, examples_per_second(len(booster.y), result),
                              booster.margins.copy() if checkpoint else None))
        job.splits += result.tree.splits
        reason = rule.reached(booster.iteration, booster.theta, job.splits)
        if reason is not None:
            end = "stopped"
            break
        if len(records) >= max_iterations or time.perf_counter() - started >= max_seconds:
            break
    margins = booster.margins.copy() if end is not None else None
    if end is not None:
        job.booster = None  # the label is done: free the worker's copy of the margins now
    return Batch(job.label, start_loss, records, end, reason, margins, booster.iteration,
                 time.perf_counter() - started)
