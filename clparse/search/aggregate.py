"""How a path's confidences combine into one score (paper §2.2), as sort keys: smaller is better.

* ``maxmin`` (Eq. 16, the paper's choice): the path's lowest confidence, ties broken by the second
  lowest, then the third, and so on. Key: the confidences sorted ascending, negated. Between two
  paths where one's sorted confidences are a prefix of the other's, the shorter ranks better, so
  extending a path never improves its key (the search may then stop at the first complete parse).
* ``sum`` (Eq. 15): -Σ L(Q(I)) with the logistic loss L(z) = ln(1 + e^-z); key Σ L(Q(I)), which
  only grows as inferences are added.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

AGGREGATORS = ("maxmin", "sum")
#: The search's default: the summed loss (Eq. 15), +0.9 to +1.2 F1 over max-min on all of GUM dev and level on
#: short sentences (docs/search.md, "Which aggregator"); max-min is the paper's search.
DEFAULT_AGGREGATOR = "sum"


@dataclass(frozen=True)
class Score:
    """A path's aggregate: ``key`` orders paths (smaller is better)."""

    confidences: tuple[float, ...]  # ascending
    key: tuple[float, ...]


def empty(aggregator: str) -> Score:
    if aggregator not in AGGREGATORS:
        raise ValueError(f"unknown aggregator {aggregator!r}; choose one of {', '.join(AGGREGATORS)}")
    return Score((), () if aggregator == "maxmin" else (0.0,))


def extend(aggregator: str, score: Score, confidence: float) -> Score:
    """The score of the path with one more inference of the given confidence."""
    at = bisect.bisect_right(score.confidences, confidence)
    confidences = score.confidences[:at] + (confidence,) + score.confidences[at:]
    if aggregator == "maxmin":  # the key is the negated confidences: insert at the same place
        return Score(confidences, score.key[:at] + (-confidence,) + score.key[at:])
    return Score(confidences, (score.key[0] + logistic_loss(confidence),))


def logistic_loss(z: float) -> float:
    """ln(1 + e^-z) without overflow."""
    return math.log1p(math.exp(-z)) if z > -30 else -z + math.log1p(math.exp(z))
