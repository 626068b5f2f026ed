"""The compiled inner loop of split search: one pass over the non-zeros of the examples being split.

Routing examples down a tree and adding trees to margins are tree operations: :mod:`clparse.forest`.

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
def stream_indices(indices: np.ndarray) -> int:
    """Touch every non-zero once (the memory floor a split-search pass is compared with)."""
    total = 0
    for p in range(indices.shape[0]):
        total += indices[p]
    return total


@njit(cache=True, nogil=True)
def ordered_dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a_i b_i added strictly in index order.

    ``np.dot`` goes to BLAS, whose vector kernels may split the sum differently depending on where the
    arrays start in memory (a margin vector decoded from a blob is not always 32-byte aligned), so the
    same loss could differ in its last bits between a run and its resume.
    """
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total
