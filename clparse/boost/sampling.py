"""Priority sampling of the examples a tree is grown on (Duffield, Lund & Thorup 2007).

The authors' 2006 release grew each tree on at most 100,000 examples chosen this way (leaf
confidences still from every example). Example i with weight w_i gets priority w_i / u_i, u_i
uniform on (0, 1]; the ``size`` highest priorities are kept, and with τ the highest priority left
out, a kept example carries weight max(w_i, τ). Then for any set of examples the sum of the
carried weights over its kept members is an unbiased estimate of its true weight, which is what
the split search sums (W+ and W- of a leaf and of a leaf ∧ feature).

The u_i come from a generator seeded by (seed, iteration), so the sample of iteration t depends only
on the margins before it: a resumed run draws the same sample, and training stays bit-identical.
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
    uniform = 1.0 - np.random.default_rng([seed, iteration]).random(n)  # (0, 1]: no division by zero
    priority = weights / uniform
    split = np.argpartition(priority, n - size - 1)
    threshold = priority[split[n - size - 1]]  # the (size + 1)-th highest: the best one left out
    kept = np.sort(split[n - size:])
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
