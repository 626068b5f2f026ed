"""Example margins and weights at any iteration, rebuilt exactly from checkpoints and stored trees.

Margins are kept whole only every ``checkpoint_every`` iterations (and for the latest iteration);
any other iteration t is rebuilt by loading the nearest checkpoint c <= t and adding trees c+1..t
with the same floating-point additions training made, so the result is bit-identical to what the
trainer had in memory. Exposed to SQL as the table-valued function ``clparse_weights(label, t)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import sqlalchemy as sa

from clparse.errors import ConfigurationError
from clparse.store import schema

if TYPE_CHECKING:
    from clparse.store.training import LabelProblem, TrainingStore

# The trainer (numba, scipy) is imported where it is used: `clparse sql` registers
# clparse_weights on every start and should not pay for it unless a query calls it.


def margins_after(store: TrainingStore, label: str, iteration: int,
                  problem: LabelProblem | None = None) -> np.ndarray:
    """Q after ``iteration`` trees (0: all zeros), exactly as training computed it."""
    from clparse.boost.kernels import add_tree
    from clparse.boost.tree import tree_arrays

    state = store.state(label)
    if iteration == 0:
        problem = problem or store.load_problem(label)
        return np.zeros(len(problem.y), dtype=np.float64)
    if not 0 <= iteration <= state.iteration:
        raise ConfigurationError(f"label {label} has iterations 0..{state.iteration}; no iteration {iteration}")
    if iteration == state.iteration:
        return state.margins
    label_id = store.label_id(label)
    mc = schema.margin_checkpoints
    with store.engine.connect() as connection:
        found = connection.execute(sa.select(mc.c.iteration, mc.c.margins_float64).where(
            mc.c.label_id == label_id, mc.c.iteration <= iteration).order_by(mc.c.iteration.desc()).limit(1)).first()
    problem = problem or store.load_problem(label)
    if found is None:
        start, margins = 0, np.zeros(len(problem.y), dtype=np.float64)
    else:
        start, margins = int(found[0]), np.frombuffer(found[1], dtype="<f8").copy()
    for tree in store.trees(label, up_to=iteration)[start:]:
        feature, true_child, false_child, value = tree_arrays(
            [(n["feature_id"], n["true_child"], n["false_child"], n["confidence"]) for n in tree])
        add_tree(problem.indptr, problem.indices, feature, true_child, false_child, value, margins)
    return margins


WEIGHT_COLUMNS = ("example", "row", "y", "multiplicity", "margin", "weight")


def weights_at(db: str | Path, label: str, iteration: int) -> Iterator[tuple[int, int, int, int, float, float]]:
    """Rows (example, feature row, y, multiplicity, margin, weight) of the weights w^t that grew tree t.

    w^t comes from the margins after t-1 trees (paper Eq. 8); t may be one past the last stored tree
    (the weights the next iteration will use).
    """
    from clparse.boost.loss import example_weights
    from clparse.store.training import TrainingStore

    if iteration < 1:
        raise ConfigurationError(f"iterations count from 1, got {iteration}")
    store = TrainingStore(db, readonly=True)
    problem = store.load_problem(label)
    state = store.state(label)
    margins = margins_after(store, label, iteration - 1, problem)
    weights = example_weights(state.settings.loss, problem.y, problem.multiplicity.astype(np.float64), margins)
    store.engine.dispose()
    for i in range(len(weights)):
        yield (i, int(problem.rows[i]), int(problem.y[i]), int(problem.multiplicity[i]), float(margins[i]),
               float(weights[i]))

