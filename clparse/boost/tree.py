"""Growing one confidence-rated decision tree under the MRL threshold (paper §2.1.2-2.1.3).

For leaf f, W_{f,±} are the summed weights of its examples with y = ±1 and Z_f = 2 sqrt(W+ W-).
Splitting f on feature φ reduces loss by ΔZ = Z_f - Z_{f∧φ} - Z_{f∧¬φ}. The root's best ΔZ sets
Θ^t = min(Θ^(t-1), best root ΔZ); then every leaf whose best ΔZ reaches Θ^t is split, recursively.
Leaves are grown level by level (all leaves of a depth in one pass over their non-zeros); since a
leaf's split depends only on its own examples, the tree does not depend on the visiting order.
Ties between features (gains within :data:`TIE_TOLERANCE`) go to the lowest feature id. Leaves get
κ = ½ ln((W+ + ε)/(W- + ε)).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from clparse.boost.kernels import slot_histograms
from clparse.forest import Forest, route


@dataclass
class Node:
    node: int
    parent: int | None
    depth: int
    best_feature: int  # the best split found here (-1: none possible)
    best_gain: float
    w_positive: float
    w_negative: float
    examples: int
    candidates: int
    feature: int = -1  # the split taken (-1: a leaf)
    confidence: float | None = None
    true_child: int | None = None
    false_child: int | None = None

    @property
    def is_leaf(self) -> bool:
        return self.feature < 0


@dataclass
class GrownTree:
    nodes: list[Node]
    theta: float
    root_gain: float
    leaf_of: np.ndarray  # the leaf (node id) each example ends in

    @property
    def splits(self) -> int:
        return sum(1 for n in self.nodes if not n.is_leaf)

    @property
    def depth(self) -> int:
        return max(n.depth for n in self.nodes)

    def forest(self) -> Forest:
        """The tree in the form the parser and weight replay hold it (a forest of one)."""
        return Forest.from_trees([[(n.feature, n.true_child, n.false_child, n.confidence)
                                   for n in self.nodes]])


def z_loss(w_positive: np.ndarray | float, w_negative: np.ndarray | float) -> np.ndarray:
    """Z = 2 sqrt(W+ W-) (Eq. 10)."""
    return 2.0 * np.sqrt(np.asarray(w_positive) * np.asarray(w_negative))


def split_gains(histogram: np.ndarray, w_positive: float, w_negative: float) -> np.ndarray:
    """ΔZ of splitting a leaf with totals (W+, W-) on every feature (Eq. 12); 0 where one side would be empty.

    ``histogram[0, f]`` / ``histogram[1, f]``: W+ / W- of the leaf's examples that have feature f.
    """
    with_pos, with_neg = histogram[0], histogram[1]
    # The complement by subtraction can dip a rounding error below zero: clip it.
    without_pos = np.maximum(w_positive - with_pos, 0.0)
    without_neg = np.maximum(w_negative - with_neg, 0.0)
    gains = z_loss(w_positive, w_negative) - z_loss(with_pos, with_neg) - z_loss(without_pos, without_neg)
    valid = ((with_pos + with_neg) > 0.0) & ((without_pos + without_neg) > 0.0)
    return np.where(valid, gains, 0.0)


#: Gains this close (relative) to the best are ties. A feature and its complement in a leaf make the same
#: split, but one side's weights are summed and the other's subtracted, so their gains can differ in the
#: last bits; without a tolerance the lowest-id rule would depend on rounding.
TIE_TOLERANCE = 1e-12


def best_split(gains: np.ndarray) -> int:
    """The lowest feature id among those whose gain ties the best (-1 if nothing reduces loss)."""
    if not len(gains):
        return -1
    best = float(gains.max())
    if best <= 0.0:
        return -1
    return int(np.flatnonzero(gains >= best * (1.0 - TIE_TOLERANCE))[0])


def confidence(w_positive: float, w_negative: float, epsilon: float) -> float:
    """κ = ½ ln((W+ + ε) / (W- + ε)) (Eq. 14)."""
    return float(0.5 * np.log((w_positive + epsilon) / (w_negative + epsilon)))


SplitRule = Callable[[Node, np.ndarray], bool]  # sets node.best_*; says whether the node splits on its best


def grow_levels(indptr: np.ndarray, indices: np.ndarray, n_features: int, positive: np.ndarray,
                weights: np.ndarray, multiplicity: np.ndarray, max_depth: int | None,
                splits: SplitRule) -> tuple[list[Node], np.ndarray]:
    """Grow a tree level by level: one histogram pass per depth over the examples of the open leaves.

    ``splits(node, histogram)`` (``histogram[0 | 1, f]``: W+ / W- of the node's examples having feature f)
    records the node's best split and says whether to take it; the root is asked first, alone. Returns
    the nodes (confidences not yet set) and the leaf each example ends in.
    """
    n = len(weights)
    node_of = np.zeros(n, dtype=np.int32)
    w_pos_all = np.where(positive, weights, 0.0)
    w_neg_all = np.where(positive, 0.0, weights)
    nodes = [_placeholder(0, None, 0)]
    _fill_totals(nodes, [0], node_of, w_pos_all, w_neg_all, multiplicity)
    open_nodes = [0]
    while open_nodes:
        slot_of_node = np.full(len(nodes), -1, dtype=np.int32)
        slot_of_node[open_nodes] = np.arange(len(open_nodes), dtype=np.int32)
        histograms = slot_histograms(indptr, indices, slot_of_node[node_of], weights, positive,
                                     len(open_nodes), n_features)
        next_open: list[int] = []
        for s, node_id in enumerate(open_nodes):
            node = nodes[node_id]
            deep_enough = max_depth is not None and node.depth >= max_depth
            if not splits(node, histograms[s]) or deep_enough:
                continue
            node.feature = node.best_feature
            node.true_child, node.false_child = len(nodes), len(nodes) + 1
            nodes.append(_placeholder(node.true_child, node_id, node.depth + 1))
            nodes.append(_placeholder(node.false_child, node_id, node.depth + 1))
            next_open += [node.true_child, node.false_child]
        if not next_open:
            break
        partial = Forest.from_trees([[(nd.feature, nd.true_child, nd.false_child, None) for nd in nodes]])
        route(indptr, indices, node_of, partial.feature, partial.true_child, partial.false_child)
        _fill_totals(nodes, next_open, node_of, w_pos_all, w_neg_all, multiplicity)
        open_nodes = next_open
    return nodes, node_of


def grow_tree(indptr: np.ndarray, indices: np.ndarray, n_features: int, positive: np.ndarray,
              weights: np.ndarray, multiplicity: np.ndarray, theta_before: float,
              max_depth: int | None = None, epsilon: float = 1e-8) -> GrownTree:
    """Grow q^t on examples (CSR rows with sorted indices) with weights w^t; ``theta_before`` is Θ^(t-1)."""
    found = {"theta": 0.0, "root_gain": 0.0}

    def mrl(node: Node, histogram: np.ndarray) -> bool:
        gains = split_gains(histogram, node.w_positive, node.w_negative)
        best = best_split(gains)
        node.best_feature, node.best_gain = (best, float(gains[best])) if best >= 0 else (-1, 0.0)
        if node.node == 0:  # the root's best gain sets Θ^t for the whole tree
            found["root_gain"] = node.best_gain
            found["theta"] = min(theta_before, node.best_gain)
        return node.best_feature >= 0 and node.best_gain >= found["theta"]

    nodes, node_of = grow_levels(indptr, indices, n_features, positive, weights, multiplicity, max_depth, mrl)
    for node in nodes:
        if node.is_leaf:
            node.confidence = confidence(node.w_positive, node.w_negative, epsilon)
    return GrownTree(nodes, found["theta"], found["root_gain"], node_of)


def refit(tree: GrownTree, indptr: np.ndarray, indices: np.ndarray, positive: np.ndarray, weights: np.ndarray,
          multiplicity: np.ndarray, epsilon: float) -> GrownTree:
    """A tree grown on a sample, with every node's totals and every leaf's confidence from all examples.

    The splits (features, gains, Θ) stay the sample's; each example is routed to its leaf, so the
    leaves' W± are the true ones and κ = ½ ln((W+ + ε)/(W- + ε)) is the paper's, exactly as if the
    tree had been grown on all examples with these splits.
    """
    node_of = np.zeros(len(weights), dtype=np.int32)
    forest = tree.forest()
    route(indptr, indices, node_of, forest.feature, forest.true_child, forest.false_child)
    nodes = [dataclasses.replace(n) for n in tree.nodes]  # copies: the grown tree stays as it was
    _fill_totals(nodes, [n.node for n in nodes if n.is_leaf], node_of, np.where(positive, weights, 0.0),
                 np.where(positive, 0.0, weights), multiplicity)
    for node in reversed(nodes):  # children come after their parent: sum the leaves upwards
        if not node.is_leaf:
            true, false = nodes[node.true_child or 0], nodes[node.false_child or 0]
            node.w_positive, node.w_negative = (true.w_positive + false.w_positive,
                                                true.w_negative + false.w_negative)
            node.examples, node.candidates = (true.examples + false.examples,
                                              true.candidates + false.candidates)
        else:
            node.confidence = confidence(node.w_positive, node.w_negative, epsilon)
    return GrownTree(nodes, tree.theta, tree.root_gain, node_of)


def _placeholder(node_id: int, parent: int | None, depth: int) -> Node:
    return Node(node_id, parent, depth, -1, 0.0, 0.0, 0.0, 0, 0)


def _fill_totals(nodes: list[Node], node_ids: list[int], node_of: np.ndarray, w_pos_all: np.ndarray,
                 w_neg_all: np.ndarray, multiplicity: np.ndarray) -> None:
    """W±, example and candidate counts of the given nodes.

    ``np.bincount`` adds each bin's weights one by one in example order: the same order, hence the
    same rounding, as the histogram kernel's sums.
    """
    size = len(nodes)
    w_pos = np.bincount(node_of, weights=w_pos_all, minlength=size)
    w_neg = np.bincount(node_of, weights=w_neg_all, minlength=size)
    examples = np.bincount(node_of, minlength=size)
    candidates = np.bincount(node_of, weights=multiplicity, minlength=size)
    for node_id in node_ids:
        node = nodes[node_id]
        node.w_positive, node.w_negative = float(w_pos[node_id]), float(w_neg[node_id])
        node.examples, node.candidates = int(examples[node_id]), int(round(candidates[node_id]))
