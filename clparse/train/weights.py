"""Example margins and weights at any iteration, rebuilt exactly from checkpoints and stored trees.

Margins are kept whole only every ``checkpoint_every`` iterations and when a label stops, pauses or
converges (the label's stored margins, after ``margins_iteration`` trees); any other iteration t
is rebuilt by loading the nearest kept vector c <= t and adding trees c+1..t with the same
floating-point additions training made (:func:`replay`), so the result is bit-identical to what the
trainer had in memory. Resuming a label uses the same replay (:func:`current_margins`). Exposed to
SQL as the table-valued function ``clparse_weights(label, t)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from clparse.errors import ConfigurationError, DatabaseError

if TYPE_CHECKING:
    from clparse.store.training import LabelProblem, StoredState, TrainingStore

# The loss is imported where it is used: `clparse sql` registers clparse_weights on every start and
# should not pay for the trainer unless a query calls it.


def replay(store: TrainingStore, label: str, margins: np.ndarray, start: int, iteration: int,
           problem: LabelProblem) -> np.ndarray:
    """``margins`` (Q after ``start`` trees) turned into Q after ``iteration`` trees, in place, by adding
    the stored trees start+1..iteration in training order.

    ``Forest.accumulate`` adds one leaf value per tree to each margin, in tree order: the very
    float64 additions the booster made (``margins += leaf values``, one tree at a time), so the
    result is bit-identical to the trainer's margins.
    """
    from clparse.forest import Forest

    if iteration > start:
        trees = store.trees(label, up_to=iteration, after=start)
        if len(trees) != iteration - start:
            raise DatabaseError(f"{store.path}: label {label} lacks stored trees between iterations "
                                f"{start + 1} and {iteration}")
        Forest.from_trees(trees).accumulate(problem.indptr, problem.indices, margins)
    return margins


def current_margins(store: TrainingStore, label: str, state: StoredState,
                    problem: LabelProblem) -> np.ndarray:
    """Q after the label's last committed iteration: its stored margins plus the trees committed since."""
    if len(state.margins) != len(problem.y):
        raise DatabaseError(f"{store.path}: label {label} has {len(state.margins)} stored margins for "
                            f"{len(problem.y)} examples")
    return replay(store, label, state.margins, state.margins_iteration, state.iteration, problem)


def margins_after(store: TrainingStore, label: str, iteration: int,
                  problem: LabelProblem | None = None) -> np.ndarray:
    """Q after ``iteration`` trees (0: all zeros), exactly as training computed it."""
    state = store.state(label)
    if iteration == 0:
        problem = problem or store.load_problem(label)
        return np.zeros(len(problem.y), dtype=np.float64)
    if not 0 <= iteration <= state.iteration:
        raise ConfigurationError(f"label {label} has iterations 0..{state.iteration}; no iteration "
                                 f"{iteration}")
    if state.margins_iteration <= iteration:  # the label's stored margins: the latest kept vector
        start, margins = state.margins_iteration, state.margins
    else:
        found = store.checkpoint_before(label, iteration)
        start, margins = found if found is not None else (0, np.zeros(len(state.margins), dtype=np.float64))
    if start == iteration:
        return margins
    return replay(store, label, margins, start, iteration, problem or store.load_problem(label))


WEIGHT_COLUMNS = ("example", "row", "y", "multiplicity", "margin", "weight")


def weights_at(db: str | Path, label: str,
               iteration: int) -> Iterator[tuple[int, int, int, int, float, float]]:
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
    if iteration > state.iteration + 1:  # said in the caller's numbering, not margins_after's (t - 1)
        store.close()
        raise ConfigurationError(f"label {label} has the weights of iterations 1..{state.iteration + 1} "
                                 f"({state.iteration} trees, and the next one's); no iteration {iteration}")
    margins = margins_after(store, label, iteration - 1, problem)
    loss = (BoostSettings.from_dict(state.settings) if state.settings is not None else BoostSettings()).loss
    weights = example_weights(loss, problem.y, problem.multiplicity.astype(np.float64), margins)
    store.close()
    for i in range(len(weights)):
        yield (i, int(problem.rows[i]), int(problem.y[i]), int(problem.multiplicity[i]), float(margins[i]),
               float(weights[i]))

