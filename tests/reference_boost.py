"""A slow, dense reference implementation of the boosting loop (paper §2.1.2-2.1.3), for testing.

It is written from the formulas alone and imports nothing from :mod:`clparse.boost`:

* weight      w_i = m_i / (1 + exp(y_i Q_i))     (logistic)   or   m_i exp(-y_i Q_i)   (exponential);
* leaf sums   W_{f,±} = Σ w_i over the examples of leaf f with y_i = ±1;
* leaf loss   Z_f = 2 sqrt(W_{f,+} W_{f,-});
* gain        ΔZ_f(φ) = Z_f - (Z_{f∧φ} + Z_{f∧¬φ}) (Eq. 12), 0 if f∧φ or f∧¬φ would hold no example;
* threshold   Θ^t = min(Θ^(t-1), best root gain), Θ^0 = +inf;
* growing     every leaf whose best gain is >= Θ^t is split on its best feature (ties: lowest feature id),
              level by level (all leaves of depth d from their own examples, then depth d+1), at most
              ``max_depth`` levels (None: unbounded); a best gain of 0 means "no split";
* confidence  κ_f = ½ ln((W_{f,+} + ε) / (W_{f,-} + ε));  then Q_i += κ_{leaf(i)}.

Nodes are numbered as the library numbers them: root 0, children appended breadth first, the child
holding the examples that HAVE the feature before the one holding those that do not.

Every weight sum (W± of a node, W± with / without a feature) is accumulated left to right over the
node's examples in ascending example order, starting from 0.0 — the order of a sequential kernel.
The complement side (examples WITHOUT the feature) is summed directly, not obtained by subtraction.

``library_rounding=True`` changes roundings, nothing else, to those clparse makes: the logistic
weight is m · (1 / (1 + exp(yQ))) (two roundings instead of one), the complement sums are
max(W± - W±(with φ), 0) (subtraction instead of a direct sum), the gain is evaluated as
(Z_f - Z_{f∧φ}) - Z_{f∧¬φ}, and exp (exponential loss) and ln (κ) are numpy's rather than libm's (the
same functions, but numpy may use its own SIMD code). With it the results should be bit-identical to
the library's; without it they agree up to rounding (relative ~1e-14) as long as no two candidate
splits tie.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# (node, parent, depth, feature or -1, κ or None)
NodeTuple = tuple[int, "int | None", int, int, "float | None"]


class RefNodeDetail(NamedTuple):
    w_positive: float
    w_negative: float
    examples: int
    best_feature: int  # -1: no split reduces the loss
    best_gain: float


class RefTree(NamedTuple):
    theta: float
    root_gain: float
    nodes: list[NodeTuple]
    details: list[RefNodeDetail]
    leaf_of: list[int]


def reference_weights(loss: str, y: np.ndarray, m: np.ndarray, margins: list[float],
                      library_rounding: bool = False) -> list[float]:
    out = []
    for i in range(len(y)):
        z = float(y[i]) * margins[i]
        # exp(z) would overflow; the weight is m e^-z to double precision
        if loss == "logistic" and z >= 700.0:
            out.append(float(m[i]) * math.exp(-z))
        elif loss == "logistic" and library_rounding:
            out.append(float(m[i]) * (1.0 / (1.0 + math.exp(z))))
        elif loss == "logistic":
            out.append(float(m[i]) / (1.0 + math.exp(z)))
        elif loss == "exponential":
            out.append(float(m[i]) * (float(np.exp(-z)) if library_rounding else math.exp(-z)))
        else:
            raise ValueError(loss)
    return out


def _z(w_positive: float, w_negative: float) -> float:
    return 2.0 * math.sqrt(w_positive * w_negative)


def _best_split(X: np.ndarray, y: np.ndarray, w: list[float], members: list[int], library_rounding: bool
                ) -> tuple[float, float, int, float]:
    """(W+, W-, best feature or -1, best gain) of a leaf holding ``members`` (ascending)."""
    n_features = X.shape[1]
    w_pos = w_neg = 0.0
    with_pos = np.zeros(n_features)
    with_neg = np.zeros(n_features)
    without_pos = np.zeros(n_features)
    without_neg = np.zeros(n_features)
    with_count = np.zeros(n_features, dtype=np.int64)
    for i in members:  # ascending example order; each accumulator adds w_i (or exactly 0.0) left to right
        has = X[i] != 0
        if y[i] > 0:
            w_pos += w[i]
            with_pos += np.where(has, w[i], 0.0)
            without_pos += np.where(has, 0.0, w[i])
        else:
            w_neg += w[i]
            with_neg += np.where(has, w[i], 0.0)
            without_neg += np.where(has, 0.0, w[i])
        with_count += has
    if library_rounding:
        without_pos = np.maximum(w_pos - with_pos, 0.0)
        without_neg = np.maximum(w_neg - with_neg, 0.0)
    z_leaf = _z(w_pos, w_neg)
    best_feature, best_gain = -1, 0.0
    gains: dict[int, float] = {}
    for f in range(n_features):
        if with_count[f] == 0 or with_count[f] == len(members):
            continue  # one side would be empty: gain 0
        z_with = _z(float(with_pos[f]), float(with_neg[f]))
        z_without = _z(float(without_pos[f]), float(without_neg[f]))
        # Eq. 12 as written, Z_f - (Z_{f∧φ} + Z_{f∧¬φ}): a feature and its complement within the leaf get
        # bit-identical gains (the sum commutes), so such a tie goes to the lower id as well.
        gain = (z_leaf - z_with) - z_without if library_rounding else z_leaf - (z_with + z_without)
        gains[f] = gain
        if gain > best_gain:  # strictly greater: the lowest feature id wins a tie
            best_feature, best_gain = f, gain
    if library_rounding and best_feature >= 0:
        # clparse treats gains within 1e-12 (relative) of the best as ties: a feature and its complement
        # split a leaf identically, but their float gains can differ in the last bits.
        best_feature = min(f for f, g in gains.items() if g >= best_gain * (1.0 - 1e-12))
        best_gain = gains[best_feature]
    return w_pos, w_neg, best_feature, best_gain


def reference_tree(X: np.ndarray, y: np.ndarray, w: list[float], theta_before: float,
                   max_depth: int | None, epsilon: float, library_rounding: bool = False) -> RefTree | None:
    """One tree grown on weights ``w``; None when the root cannot be split (best root gain 0)."""
    n = X.shape[0]
    parent: list[int | None] = [None]
    depth = [0]
    members: list[list[int]] = [list(range(n))]
    feature = [-1]
    details: list[RefNodeDetail | None] = [None]
    level = [0]
    theta = root_gain = math.nan
    while level:
        for node in level:
            w_pos, w_neg, best_feature, best_gain = _best_split(X, y, w, members[node], library_rounding)
            details[node] = RefNodeDetail(w_pos, w_neg, len(members[node]), best_feature, best_gain)
        if level == [0]:
            root_gain = details[0].best_gain  # type: ignore[union-attr]
            if details[0].best_feature < 0:  # type: ignore[union-attr]
                return None
            theta = min(theta_before, root_gain)
        next_level = []
        for node in level:
            detail = details[node]
            assert detail is not None
            if detail.best_feature < 0 or detail.best_gain < theta:
                continue
            if max_depth is not None and depth[node] >= max_depth:
                continue
            feature[node] = detail.best_feature
            having = [i for i in members[node] if X[i, detail.best_feature] != 0]
            lacking = [i for i in members[node] if X[i, detail.best_feature] == 0]
            for child_members in (having, lacking):
                parent.append(node)
                depth.append(depth[node] + 1)
                members.append(child_members)
                feature.append(-1)
                details.append(None)
                next_level.append(len(parent) - 1)
        level = next_level
    nodes: list[NodeTuple] = []
    leaf_of = [-1] * n
    for node in range(len(parent)):
        detail = details[node]
        assert detail is not None
        kappa = None
        if feature[node] < 0:
            ratio = (detail.w_positive + epsilon) / (detail.w_negative + epsilon)
            kappa = 0.5 * (float(np.log(ratio)) if library_rounding else math.log(ratio))
            for i in members[node]:
                leaf_of[i] = node
        nodes.append((node, parent[node], depth[node], feature[node], kappa))
    return RefTree(theta, root_gain, nodes, [d for d in details if d is not None], leaf_of)


def reference_boost(X: np.ndarray, y: np.ndarray, m: np.ndarray, loss: str = "logistic",
                    max_depth: int | None = None, epsilon: float = 1e-8, iterations: int = 10,
                    library_rounding: bool = False) -> tuple[list[RefTree], list[float]]:
    """Boost ``iterations`` trees (fewer if the root stops splitting) on the dense 0/1 matrix X (n × F).

    Returns the trees (each with theta, root_gain and its nodes as (node, parent, depth, feature or -1,
    confidence or None)) and the final margins Q.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    m = np.asarray(m)
    margins = [0.0] * X.shape[0]
    theta = math.inf
    trees: list[RefTree] = []
    for _ in range(iterations):
        w = reference_weights(loss, y, m, margins, library_rounding)
        tree = reference_tree(X, y, w, theta, max_depth, epsilon, library_rounding)
        if tree is None:
            break
        theta = tree.theta
        kappa = {node: k for node, _, _, _, k in tree.nodes if k is not None}
        for i in range(len(margins)):
            margins[i] += kappa[tree.leaf_of[i]]
        trees.append(tree)
    return trees, margins
