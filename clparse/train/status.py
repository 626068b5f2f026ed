"""Where every label's training stands, read from the database (works while training runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clparse.store.database import Database
from clparse.store.training import TrainingStore
from clparse.train.stopping import StopRule


@dataclass
class LabelStatus:
    label: str
    iteration: int
    theta: float | None
    splits: int
    loss: float | None
    examples_per_second: float | None
    state: str  # pending (never trained) or a label_training state; "training?" when its process is gone
    updated_at: str | None
    message: str | None
    worker: str | None = None  # the dask worker computing the label (``train --dask``), while it trains


def label_status(db: str | Path) -> list[LabelStatus]:
    from clparse.train.process import claim_worker, trainer_alive

    with Database(db, readonly=True) as database:
        rows = TrainingStore(database).status_rows()
    out = []
    for name, iteration, theta, splits, loss, eps, state, updated, message, pid in rows:
        if state is None:
            state = "pending"
        elif state == "training" and not trainer_alive(pid, updated, message):
            state, message = "interrupted", "its process is gone (killed?); run `clparse train` to resume"
        worker = claim_worker(message) if state == "training" else None
        out.append(LabelStatus(name, iteration or 0, theta, splits or 0, loss, eps, state, updated, message,
                               worker))
    return out


def finished(row: LabelStatus, rule: StopRule | None) -> bool:
    """Has the label nothing left to do under ``rule`` (what a run's progress counts as done)? Converged, or
    not training and past the rule. A label paused or stopped under an earlier, looser rule is not done: this
    run trains it on. Without a rule, a label is done once stopped or converged."""
    if row.state == "converged":
        return True
    if row.state in ("pending", "training") or row.theta is None:
        return False
    if rule is None:
        return row.state == "stopped"
    return rule.reached(row.iteration, row.theta, row.splits) is not None


def format_status(rows: list[LabelStatus]) -> str:
    header = (f"{'label':<8} {'iter':>6} {'Θ':>10} {'splits':>7} {'loss':>12} {'ex/s':>10}  "
              f"{'state':<11} last update")
    lines = [header, "-" * len(header)]
    for r in rows:
        theta = "" if r.theta is None else f"{r.theta:.4g}"
        loss = "" if r.loss is None else f"{r.loss:.6g}"
        eps = "" if r.examples_per_second is None else f"{r.examples_per_second:,.0f}"
        lines.append(f"{r.label:<8} {r.iteration:>6} {theta:>10} {r.splits:>7} {loss:>12} {eps:>10}  "
                     f"{r.state:<11} {r.updated_at or ''}" + (f"  on {r.worker}" if r.worker else ""))
    total_splits = sum(r.splits for r in rows)
    lines.append(f"{len(rows)} labels, {sum(r.iteration for r in rows)} trees, {total_splits} splits")
    return "\n".join(lines)
