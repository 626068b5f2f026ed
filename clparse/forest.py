"""Decision trees as node arrays: the one form in which training, weight replay and parsing hold trees.

A forest is a sequence of trees flattened into parallel node arrays with declared dtypes
(:data:`NODE_DTYPES`): ``feature`` is the feature a node tests (-1: a leaf), ``true_child`` and
``false_child`` are indices into the same arrays (-1 at a leaf), ``value`` is a leaf's confidence κ,
and ``roots`` holds each tree's first node, in training order. One tree is a forest of one.

Examples are rows of a CSR matrix with sorted feature ids. :meth:`Forest.accumulate` adds to each
row's margin the leaf value of every tree in order, one addition per tree: exactly the additions
boosting made, so replayed margins and parser confidences are bit-identical to the trainer's.
The parser's scorer walks the same arrays against a presence vector instead of a sorted row; that
walk sits in :mod:`clparse.features.kernel` beside the feature kernel it is fused with (numba's disk
cache is invalidated only by a change to the defining file), and a parity test holds it to
:meth:`Forest.accumulate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

#: A node of one tree in its own numbering: (feature or None at a leaf, true child, false child, value).
NodeRow = tuple[int | None, int | None, int | None, float | None]

NODE_DTYPES = {"roots": np.int64, "feature": np.int32, "true_child": np.int64, "false_child": np.int64,
               "value": np.float64}


@dataclass(frozen=True)
class Forest:
    roots: np.ndarray
    feature: np.ndarray
    true_child: np.ndarray
    false_child: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        for name, dtype in NODE_DTYPES.items():
            if getattr(self, name).dtype != dtype:
                raise TypeError(f"Forest.{name} must be {np.dtype(dtype).name}, not "
                                f"{getattr(self, name).dtype}")

    @classmethod
    def from_trees(cls, trees: Sequence[Sequence[NodeRow]]) -> Forest:
        """A forest from trees given as node rows in each tree's own node order (node 0 is its root)."""
        roots: list[int] = []
        feature: list[int] = []
        true_child: list[int] = []
        false_child: list[int] = []
        value: list[float] = []
        for tree in trees:
            base = len(feature)
            roots.append(base)
            for f, t, e, v in tree:
                feature.append(-1 if f is None or f < 0 else f)
                true_child.append(-1 if t is None else base + t)
                false_child.append(-1 if e is None else base + e)
                value.append(0.0 if v is None else v)
        return cls(*(np.array(column, dtype=NODE_DTYPES[name]) for name, column in zip(
            ("roots", "feature", "true_child", "false_child", "value"),
            (roots, feature, true_child, false_child, value))))

    @classmethod
    def empty(cls) -> Forest:
        return cls.from_trees([])

    @classmethod
    def join(cls, forests: Sequence[Forest]) -> tuple[Forest, np.ndarray]:
        """One forest holding ``forests`` one after another, and ``offsets``: forest i's trees are
        roots[offsets[i]:offsets[i + 1]]."""
        offsets = np.zeros(len(forests) + 1, dtype=np.int64)
        np.cumsum([len(f.roots) for f in forests], out=offsets[1:])
        bases = np.cumsum([0] + [len(f.feature) for f in forests[:-1]]).astype(np.int64)

        def shifted(column: list[np.ndarray]) -> list[np.ndarray]:
            return [np.where(c >= 0, c + base, -1) for c, base in zip(column, bases)]

        def joined(parts: list[np.ndarray], name: str) -> np.ndarray:
            dtype = NODE_DTYPES[name]
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

        return cls(joined([f.roots + base for f, base in zip(forests, bases)], "roots"),
                   joined([f.feature for f in forests], "feature"),
                   joined(shifted([f.true_child for f in forests]), "true_child"),
                   joined(shifted([f.false_child for f in forests]), "false_child"),
                   joined([f.value for f in forests], "value")), offsets

    @property
    def trees(self) -> int:
        return len(self.roots)

    @property
    def splits(self) -> int:
        return int((self.feature >= 0).sum())

    def accumulate(self, indptr: np.ndarray, indices: np.ndarray, out: np.ndarray) -> None:
        """out[i] += q^t(row i) for every tree t in order (rows: CSR with sorted feature ids), in place."""
        _accumulate(indptr, indices, self.roots, self.feature, self.true_child, self.false_child, self.value,
                    out)

    def score(self, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Q(row) = Σ_t q^t(row) for every row of a CSR batch."""
        out = np.zeros(len(indptr) - 1, dtype=np.float64)
        self.accumulate(indptr, indices, out)
        return out


@njit(cache=True, nogil=True)
def has_feature(indices: np.ndarray, lo: int, hi: int, feature: int) -> bool:
    """Whether the sorted row ``indices[lo:hi]`` holds ``feature`` (binary search)."""
    while lo < hi:
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
    """Move every example from its node down to a leaf of a tree being grown, in place."""
    for i in range(node_of.shape[0]):
        node = node_of[i]
        while feature[node] >= 0:
            if has_feature(indices, indptr[i], indptr[i + 1], feature[node]):
                node = true_child[node]
            else:
                node = false_child[node]
        node_of[i] = node


@njit(cache=True, nogil=True)
def _accumulate(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray, feature: np.ndarray,
                true_child: np.ndarray, false_child: np.ndarray, value: np.ndarray, out: np.ndarray) -> None:
    for i in range(out.shape[0]):
        lo, hi = indptr[i], indptr[i + 1]
        for t in range(roots.shape[0]):  # trees in order: the additions training made
            node = roots[t]
            while feature[node] >= 0:
                node = true_child[node] if has_feature(indices, lo, hi, feature[node]) else false_child[node]
            out[i] += value[node]
