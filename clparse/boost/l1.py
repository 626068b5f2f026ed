"""Trees under an ℓ1 penalty (Turian & Melamed's 2006 release): confidences that do not memorise.

Where the 2005 paper's MRL rule splits on loss reduction ΔZ and gives a leaf κ = ½ ln(W+/W−), here the
penalty λ plays the part of Θ, and both the splits and the confidences pay it:

* a node's *gain* is |W+ − W−| (the loss gradient with respect to its confidence at κ = 0), its
  *penalised gain* that gain if it exceeds λ, else 0; a split's gain is the sum of its two sides'
  penalised gains;
* each tree starts at the root: G = the best unpenalised split gain there, λ^t = min(λ^(t−1), decay × G);
  a node splits on its best feature if the split's gain beats the node's own penalised gain (times
  ``min_gain_factor`` below the root), level by level as in :mod:`clparse.boost.tree`;
* a leaf's κ minimises Σ m L(y(Q + κ)) + λ|κ| over its examples: exactly 0 when |W+ − W−| ≤ λ (the ℓ1
  optimality condition), else the root of the derivative, found by bisection;
* a tree whose leaves are all 0 changes nothing: λ ← decay × λ and the tree is grown again.

The formulas and constants (decay 0.9, factor 1.01) are from the authors' public release; the code is
written here. Everything is deterministic (sums in a fixed order, a fixed number of bisection steps),
so a resumed run grows the same trees.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from clparse.boost.kernels import ordered_dot
from clparse.boost.tree import GrownTree, Node, best_split, grow_levels

BISECTION_STEPS = 80  # at most; a bracket of at most 64 reaches 1e-13 relative in about 45


def penalised(gain: np.ndarray | float, lam: float) -> np.ndarray:
    """The gain where it exceeds λ, else 0."""
    gain = np.asarray(gain, dtype=np.float64)
    return np.where(gain > lam, gain, 0.0)


def split_gains(histogram: np.ndarray, w_positive: float, w_negative: float) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray]:
    """(|W+ − W−| with the feature, the same without it, whether both sides hold examples) per feature."""
    with_pos, with_neg = histogram[0], histogram[1]
    without_pos = np.maximum(w_positive - with_pos, 0.0)
    without_neg = np.maximum(w_negative - with_neg, 0.0)
    valid = ((with_pos + with_neg) > 0.0) & ((without_pos + without_neg) > 0.0)
    return np.abs(with_pos - with_neg), np.abs(without_pos - without_neg), valid


def l1_confidence(y: np.ndarray, multiplicity: np.ndarray, margins: np.ndarray, lam: float) -> float:
    """argmin over κ of Σ m ln(1 + e^(−y(Q + κ))) + λ|κ| (logistic loss; the examples of one leaf)."""
    signed = y.astype(np.float64)

    def slope(kappa: float) -> float:  # d/dκ of the loss part: −Σ m y σ(−y(Q + κ))
        return -ordered_dot(multiplicity * signed, expit(-signed * (margins + kappa)))

    at_zero = -slope(0.0)  # W+ − W−
    if abs(at_zero) <= lam:
        return 0.0
    sign = 1.0 if at_zero > 0 else -1.0

    def descending(k: float) -> bool:  # does the objective still fall at κ = sign × k?
        return sign * slope(sign * k) + lam < 0

    low, high = 0.0, 1.0
    while descending(high):
        low, high = high, 2.0 * high
        if high > 64.0:
            return sign * 64.0  # one class only in the leaf: no finite optimum worth having
    for _ in range(BISECTION_STEPS):  # stops once the bracket is below double precision of κ
        if high - low <= 1e-13 * high:
            break
        middle = 0.5 * (low + high)
        if descending(middle):
            low = middle
        else:
            high = middle
    return sign * 0.5 * (low + high)


def grow_tree_l1(indptr: np.ndarray, indices: np.ndarray, n_features: int, y: np.ndarray, weights: np.ndarray,
                 multiplicity: np.ndarray, margins: np.ndarray, lam_before: float,
                 max_depth: int | None = None,
                 decay: float = 0.9, min_gain_factor: float = 1.01) -> GrownTree | None:
    """Grow one tree; None when no feature can split the root at all (converged).

    A tree whose every leaf has κ = 0 is discarded and grown again with λ × ``decay``.
    """
    positive = y > 0
    state = {"lam": lam_before, "root_gain": 0.0}

    def l1(node: Node, histogram: np.ndarray) -> bool:
        with_f, without_f, valid = split_gains(histogram, node.w_positive, node.w_negative)
        if node.node == 0:  # the best unpenalised root split sets this tree's λ
            raw = np.where(valid, with_f + without_f, 0.0)
            state["root_gain"] = float(raw.max()) if valid.any() else 0.0
            state["lam"] = min(state["lam"], decay * state["root_gain"])
        lam = state["lam"]
        gains = np.where(valid, penalised(with_f, lam) + penalised(without_f, lam), 0.0)
        best = best_split(gains)
        node.best_feature, node.best_gain = (best, float(gains[best])) if best >= 0 else (-1, 0.0)
        own = float(penalised(abs(node.w_positive - node.w_negative), lam))
        return best >= 0 and node.best_gain > (own if node.node == 0 else own * min_gain_factor)

    while True:
        nodes, node_of = grow_levels(indptr, indices, n_features, positive, weights, multiplicity, max_depth,
                                     l1)
        if state["root_gain"] <= 0.0:
            return None
        degenerate = True
        for node in nodes:
            if node.is_leaf:
                mine = node_of == node.node
                node.confidence = l1_confidence(y[mine], multiplicity[mine], margins[mine], state["lam"])
                degenerate = degenerate and node.confidence == 0.0
        if not degenerate:
            return GrownTree(nodes, state["lam"], state["root_gain"], node_of)
        state["lam"] *= decay  # the same margins again, a smaller penalty
        if state["lam"] < 1e-300:
            return None


__all__ = ["grow_tree_l1", "l1_confidence", "penalised"]
