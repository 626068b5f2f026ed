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

from clparse.errors import ConfigurationError

if TYPE_CHECKING:
    from clparse.store.training import LabelProblem, TrainingStore

# The loss is imported where it is used: `clparse sql` registers clparse_weights on every start and
# should not pay for the trainer unless a query calls it.


def margins_after(store: TrainingStore, label: str, iteration: int,
                  problem: LabelProblem | None = None) -> np.ndarray:
    """Q after ``iteration`` trees (0: all zeros), exactly as training computed it."""
    from clparse.forest import Forest

    state = store.state(label)
    if iteration == 0:
        problem = problem or store.load_problem(label)
        return np.zeros(len(problem.y), dtype=np.float64)
    if not 0 <= iteration <= state.iteration:
        raise ConfigurationError(f"label {label} has iterations 0..{state.iteration}; no iteration {iteration}")
    if iteration == state.iteration:
        return state.margins
    found = store.checkpoint_before(label, iteration)
    problem = problem or store.load_problem(label)
    start, margins = found if found is not None else (0, np.zeros(len(problem.y), dtype=np.float64))
    Forest.from_trees(store.trees(label, up_to=iteration)[start:]).accumulate(problem.indptr, problem.indices, margins)
    return margins


WEIGHT_COLUMNS = ("example", "row", "y", "multiplicity", "margin", "weight")


def weights_at(db: str | Path, label: str, iteration: int) -> Iterator[tuple[int, int, int, int, float, float]]:
    """Rows (example, feature row, y, multiplicity, margin, weight) of the weights w^t that grew tree t.

    w^t comes from the margins after t-1 trees (paper Eq. 8); t may be one past the last stored tree
    (the weights the next iteration will use).
    """
    from clparse.boost.booster import BoostSettings
    from clparse.boost.loss import example_weights
    from clparse.store.training import TrainingStore

    if iteration < 1:
        raise ConfigurationError(f"iterations count from 1, got {iteration}")
    store = TrainingStore(db, readonly=True)
    problem = store.load_problem(label)
    state = store.state(label)
    margins = margins_after(store, label, iteration - 1, problem)
    loss = (BoostSettings.from_dict(state.settings) if state.settings is not None else BoostSettings()).loss
    weights = example_weights(loss, problem.y, problem.multiplicity.astype(np.float64), margins)
    store.close()
    for i in range(len(weights)):
        yield (i, int(problem.rows[i]), int(problem.y[i]), int(problem.multiplicity[i]), float(margins[i]),
               float(weights[i]))

