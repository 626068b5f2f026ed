"""Priority sampling of the examples a tree is grown on (Duffield, Lund & Thorup 2007).

The authors' 2006 release grew each tree on at most 100,000 examples chosen this way (leaf
confidences still from every example). Example i with weight w_i gets priority w_i / u_i, u_i
uniform on (0, 1]; the ``size`` highest priorities are kept, and with τ the highest priority left
out, a kept example carries weight max(w_i, τ). Then for any set of examples the sum of the
carried weights over its kept members is an unbiased estimate of its true weight, which is what
the split search sums (W+ and W- of a leaf and of a leaf ∧ feature).

The u_i come from a generator seeded by (seed, iteration), so the sample of iteration t depends only
on the margins before it: a resumed run draws the same sample, and training stays bit-identical.

:func:`stratified_sample` (the default since issue 27) draws positives and negatives apart, each class
with its own τ, and gives the positives up to half the budget: a label with at most ``size`` / 2
positives keeps every one of them at its own weight. One sample over both classes (the first version,
:func:`priority_sample`) keeps a class in proportion to its weight, and at the first iteration all
weights are equal: on all of GUM, 100,000 of 2.26 M examples kept 0 of RRC's 3 positives (so the
label "converged" with no tree) and 1 of the 7 to 66 positives of LST, NAC, UCP and X.
"""

from __future__ import annotations

import numpy as np


def priority_sample(weights: np.ndarray, size: int, seed: int,
                    iteration: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the kept examples in increasing order, the weights they carry) for iteration ``iteration``.

    With ``size`` at least the number of examples every example is kept with its own weight.
    """
    n = len(weights)
    if size >= n:
        return np.arange(n), weights.copy()
    kept, carried = _top_priorities(weights / _uniforms(n, seed, iteration), weights, size)
    order = np.argsort(kept)
    return kept[order], carried[order]


def stratified_sample(weights: np.ndarray, positive: np.ndarray, size: int, seed: int,
                      iteration: int) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`priority_sample`, but positives and negatives are priority-sampled apart (each with its
    own τ, from the same u_i): the positives get min(P, max(size // 2, size − negatives)) places, the
    negatives the rest. Each class's carried weights estimate its subset sums without bias."""
    n = len(weights)
    if size >= n:
        return np.arange(n), weights.copy()
    priority = weights / _uniforms(n, seed, iteration)
    pos, neg = np.flatnonzero(positive), np.flatnonzero(~positive)
    k_pos = min(len(pos), max(size // 2, size - len(neg)))
    k_neg = min(len(neg), size - k_pos)
    kept_parts, carried_parts = [], []
    for members, k in ((pos, k_pos), (neg, k_neg)):
        local, carried = _top_priorities(priority[members], weights[members], k)
        kept_parts.append(members[local])
        carried_parts.append(carried)
    kept, carried = np.concatenate(kept_parts), np.concatenate(carried_parts)
    order = np.argsort(kept)
    return kept[order], carried[order]


def _uniforms(n: int, seed: int, iteration: int) -> np.ndarray:
    return 1.0 - np.random.default_rng([seed, iteration]).random(n)  # (0, 1]: no division by zero


def _top_priorities(priority: np.ndarray, weights: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions of the ``size`` highest priorities, their carried weights max(w, τ)); all, as they are,
    if there are no more than ``size``."""
    n = len(priority)
    if size >= n:
        return np.arange(n), weights.copy()
    if size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    split = np.argpartition(priority, n - size - 1)
    threshold = priority[split[n - size - 1]]  # the (size + 1)-th highest: the best one left out
    kept = split[n - size:]
    return kept, np.maximum(weights[kept], threshold)


def take_rows(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR rows ``rows`` (in that order) as a CSR matrix of their own."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    out_indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_indptr[1:])
    # position j of the output takes indices[starts[r] + (j - out_indptr[r])] for its row r
    take = np.repeat(starts - out_indptr[:-1], lengths) + np.arange(int(out_indptr[-1]))
    return out_indptr, indices[take]
