"""The compiled inner loops: one pass over the non-zeros of the examples being split, and routing.

Examples are rows of a CSR matrix with sorted column (feature) indices per row. Loops run over
examples in ascending order, so every sum is accumulated in a fixed order and results are
bit-for-bit repeatable (no parallel reductions, no fastmath).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def slot_histograms(indptr: np.ndarray, indices: np.ndarray, slot: np.ndarray, weights: np.ndarray,
                    positive: np.ndarray, n_slots: int, n_features: int) -> np.ndarray:
    """out[s, 0, f] = Σ w_i over examples i in slot s with y_i = +1 having feature f; out[s, 1, f] for y = -1.

    ``slot[i] < 0`` leaves example i out (it sits in a leaf that is not being split).
    """
    out = np.zeros((n_slots, 2, n_features), dtype=np.float64)
    for i in range(slot.shape[0]):
        s = slot[i]
        if s < 0:
            continue
        w = weights[i]
        sign = 0 if positive[i] else 1
        row = out[s, sign]
        for p in range(indptr[i], indptr[i + 1]):
            row[indices[p]] += w
    return out


@njit(cache=True, nogil=True)
def _has_feature(indices: np.ndarray, lo: int, hi: int, feature: int) -> bool:
    while lo < hi:  # binary search: row indices are sorted
        mid = (lo + hi) >> 1
        value = indices[mid]
        if value == feature:
            return True
        if value < feature:
            lo = mid + 1
        else:
            hi = mid
    return False


@njit(cache=True, nogil=True)
def route(indptr: np.ndarray, indices: np.ndarray, node_of: np.ndarray, feature: np.ndarray,
          true_child: np.ndarray, false_child: np.ndarray) -> None:
    """Move every example from its node down to a leaf, in place (a leaf has ``feature < 0``)."""
    for i in range(node_of.shape[0]):
        node = node_of[i]
        while feature[node] >= 0:
            if _has_feature(indices, indptr[i], indptr[i + 1], feature[node]):
                node = true_child[node]
            else:
                node = false_child[node]
        node_of[i] = node


@njit(cache=True, nogil=True)
def add_tree(indptr: np.ndarray, indices: np.ndarray, feature: np.ndarray, true_child: np.ndarray,
             false_child: np.ndarray, value: np.ndarray, margins: np.ndarray) -> None:
    """margins[i] += value of the leaf example i reaches (one tree of an ensemble, in place)."""
    for i in range(margins.shape[0]):
        node = 0
        while feature[node] >= 0:
            if _has_feature(indices, indptr[i], indptr[i + 1], feature[node]):
                node = true_child[node]
            else:
                node = false_child[node]
        margins[i] += value[node]


@njit(cache=True, nogil=True)
def stream_indices(indices: np.ndarray) -> int:
    """Touch every non-zero once (the memory floor a split-search pass is compared with)."""
    total = 0
    for p in range(indices.shape[0]):
        total += indices[p]
    return total
