"""Boosting (clparse.boost): hand-worked numbers, the Θ schedule, both losses, stumps, tie-breaking,
agreement with the dense reference in tests/reference_boost.py (random and real data), and resuming.

The hand-worked data set (paper §2.1.2-2.1.3; ε = 1e-8 shifts the numbers below by < 1e-7 relative,
inside pytest.approx's default tolerance of 1e-6):

    example  features   y   m          example  features   y   m
    e0       {1}        -1  2          e4       {1, 2}     -1  1
    e1       {0, 1}     +1  1          e5       {1}        +1  1
    e2       {}         -1  1          e6       {0, 1, 2}  +1  1
    e3       {0, 1, 2}  -1  1
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.boost.kernels import slot_histograms
from clparse.boost.loss import example_weights, total_loss
from clparse.boost.tree import GrownTree, best_split, confidence, split_gains, z_loss
from clparse.errors import ConfigurationError
from tests.reference_boost import RefTree, reference_boost

EPS = 1e-8
LN2 = math.log(2.0)
SQRT2, SQRT3, SQRT6, SQRT15 = math.sqrt(2.0), math.sqrt(3.0), math.sqrt(6.0), math.sqrt(15.0)

HAND_ROWS = [[1], [0, 1], [], [0, 1, 2], [1, 2], [1], [0, 1, 2]]
HAND_Y = [-1, +1, -1, -1, -1, +1, +1]
HAND_M = [2, 1, 1, 1, 1, 1, 1]


# ---------------------------------------------------------------------------------------------- helpers


def dense(rows: list[list[int]], n_features: int) -> np.ndarray:
    X = np.zeros((len(rows), n_features), dtype=np.int8)
    for i, row in enumerate(rows):
        X[i, row] = 1
    return X


def make_booster(X: np.ndarray, y, m, margins: np.ndarray | None = None, iteration: int = 0,
                 theta: float = math.inf, **settings) -> Booster:
    A = sp.csr_matrix(np.asarray(X, dtype=np.int8))
    A.sort_indices()
    return Booster(A.indptr.astype(np.int64), A.indices.astype(np.int32), A.shape[1],
                   np.asarray(y, dtype=np.int8), np.asarray(m),
                   # the paper's ε unless a test says otherwise
                   BoostSettings(**{"smoothing": 0.0, **settings}),
                   margins=margins, iteration=iteration, theta=theta)


def hand_booster(**settings) -> Booster:
    return make_booster(dense(HAND_ROWS, 3), HAND_Y, HAND_M, **settings)


def run(booster: Booster, iterations: int) -> list[IterationResult]:
    results = []
    for _ in range(iterations):
        result = booster.step()
        if result is None:
            break
        results.append(result)
    return results


def node_tuples(tree: GrownTree) -> list[tuple]:
    return [(n.node, n.parent, n.depth, n.feature, n.confidence) for n in tree.nodes]


def random_problem(seed: int = 0, n: int = 300, n_features: int = 40, density: float = 0.15
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """y = +1 iff features 3 and 7 are both present, flipped with probability 0.1; multiplicities 1-3."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, n_features)) < density).astype(np.int8)
    signal = (X[:, 3] == 1) & (X[:, 7] == 1)
    flip = rng.random(n) < 0.1
    y = np.where(signal != flip, 1, -1).astype(np.int8)
    m = rng.integers(1, 4, size=n)
    return X, y, m


def close(expected):
    """Agreement up to rounding: relative 1e-12 and no absolute slack."""
    return pytest.approx(expected, rel=1e-12, abs=0.0)


def assert_same_run(results: list[IterationResult], margins: np.ndarray, reference: list[RefTree],
                    reference_margins: list[float], exact: bool) -> None:
    """Identical trees (structure, split features, leaf membership); floats bit-equal or within 1e-12."""
    assert len(results) == len(reference)
    for t, (result, ref) in enumerate(zip(results, reference), start=1):
        nodes = result.tree.nodes
        assert [n[:4] for n in node_tuples(result.tree)] == [n[:4] for n in ref.nodes], f"tree {t}"
        assert result.tree.leaf_of.tolist() == ref.leaf_of, f"tree {t}"
        assert [n.examples for n in nodes] == [d.examples for d in ref.details], f"tree {t}"
        if exact:
            assert (result.theta, result.tree.root_gain) == (ref.theta, ref.root_gain), f"tree {t}"
            assert node_tuples(result.tree) == ref.nodes, f"tree {t}"
            assert [(n.w_positive, n.w_negative, n.examples, n.best_feature, n.best_gain) for n in nodes] \
                == [tuple(d) for d in ref.details], f"tree {t}"
        else:
            assert result.theta == close(ref.theta), f"tree {t}"
            assert result.tree.root_gain == close(ref.root_gain), f"tree {t}"
            assert [n.confidence for n in nodes] == [close(k) if k is not None else None
                                                     for *_, k in ref.nodes]
            assert [(n.w_positive, n.w_negative) for n in nodes] \
                == [(close(d.w_positive), close(d.w_negative)) for d in ref.details], f"tree {t}"
    if exact:
        assert margins.tolist() == reference_margins
    else:
        assert margins.tolist() == close(reference_margins)


# ------------------------------------------------------------------------------ a. hand-worked numbers


def test_hand_worked_first_iteration() -> None:
    booster = hand_booster()
    # Q = 0, so w = m / (1 + e^0) = m / 2: e0 2/2 = 1.0, every other example 1/2 = 0.5.
    assert booster.weights().tolist() == [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    assert example_weights("logistic", np.array(HAND_Y), np.array(HAND_M, dtype=float),
                           np.zeros(7)).tolist() \
        == [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    # Root: W+ = w1 + w5 + w6 = 0.5·3 = 1.5; W- = w0 + w2 + w3 + w4 = 1.0 + 0.5·3 = 2.5.
    # Z = 2 sqrt(1.5·2.5) = 2 sqrt(3.75) = sqrt(15) ≈ 3.872983.
    assert z_loss(1.5, 2.5) == pytest.approx(SQRT15)
    # Per feature (W+, W-) of the examples HAVING it; the complement is the rest:
    #   f0: {e1, e3, e6} -> (1.0, 0.5), Z = 2 sqrt(0.5) = √2 ≈ 1.414214;
    #       without {e0, e2, e4, e5} -> (0.5, 2.0), Z = 2 sqrt(1.0) = 2;
    #       gain = √15 - √2 - 2 ≈ 0.458770
    #   f1: {e0, e1, e3, e4, e5, e6} -> (1.5, 2.0), Z = 2 sqrt(3) ≈ 3.464102; without {e2} -> (0, 0.5), Z = 0;
    #       gain = √15 - 2√3 ≈ 0.408882
    #   f2: {e3, e4, e6} -> (0.5, 1.0), Z = √2;
    #       without {e0, e1, e2, e5} -> (1.0, 1.5), Z = 2 sqrt(1.5) = √6 ≈ 2.449490;
    #       gain = √15 - √2 - √6 ≈ 0.009280
    #   a feature no example has (column 3 below) or every example has (column 4): one side empty, gain 0.
    histogram = np.array([[1.0, 1.5, 0.5, 0.0, 1.5],
                          [0.5, 2.0, 1.0, 0.0, 2.5]])
    kernel = slot_histograms(booster.indptr, booster.indices, np.zeros(7, dtype=np.int32), booster.weights(),
                             booster.positive, 1, 3)
    assert kernel[0].tolist() == histogram[:, :3].tolist()
    assert z_loss(histogram[0, :3], histogram[1, :3]).tolist() == pytest.approx([SQRT2, 2 * SQRT3, SQRT2])
    assert z_loss(1.5 - histogram[0, :3], 2.5 - histogram[1, :3]).tolist() == pytest.approx([2.0, 0.0, SQRT6])
    gains = split_gains(histogram, 1.5, 2.5)
    assert gains.tolist() == pytest.approx([SQRT15 - SQRT2 - 2, SQRT15 - 2 * SQRT3,
                                            SQRT15 - SQRT2 - SQRT6, 0, 0])
    theta1 = SQRT15 - SQRT2 - 2  # Θ^1 = min(+inf, 0.458770): the root splits on f0

    result = booster.step()
    assert result is not None and result.iteration == 1 and booster.iteration == 1
    tree = result.tree
    assert result.theta == tree.root_gain == booster.theta == pytest.approx(theta1)
    assert (result.weight_positive, result.weight_negative, result.weight_max) == (1.5, 2.5, 1.0)
    root, yes, no = tree.nodes
    assert (root.feature, root.best_feature, root.true_child, root.false_child) == (0, 0, 1, 2)
    assert (root.w_positive, root.w_negative, root.examples, root.candidates) == (1.5, 2.5, 7, 8)
    assert root.best_gain == pytest.approx(theta1) and root.confidence is None
    # Node 1 = root ∧ f0 = {e1, e3, e6}: W+ = 0.5 + 0.5 = 1.0, W- = 0.5, Z = √2. Its best split is f2
    # ({e3, e6}: (0.5, 0.5), Z = 1; {e1}: (0.5, 0), Z = 0), gain √2 - 1 ≈ 0.414214 > 0 but < Θ^1 ≈ 0.458770:
    # MRL keeps it a leaf. κ = ½ ln((1.0 + ε)/(0.5 + ε)) ≈ ½ ln 2 ≈ 0.346574.
    assert (yes.parent, yes.depth, yes.examples, yes.w_positive, yes.w_negative) == (0, 1, 3, 1.0, 0.5)
    assert (yes.feature, yes.best_feature, yes.best_gain) == (-1, 2, pytest.approx(SQRT2 - 1))
    kappa_yes = 0.5 * math.log((1.0 + EPS) / (0.5 + EPS))
    assert yes.confidence == pytest.approx(kappa_yes) and kappa_yes == pytest.approx(LN2 / 2)
    # Node 2 = root ∧ ¬f0 = {e0, e2, e4, e5}: W+ = 0.5, W- = 1.0 + 0.5 + 0.5 = 2.0, Z = 2 sqrt(1) = 2.
    # f1: {e0, e4, e5} (0.5, 1.5), Z = 2 sqrt(0.75) = √3; {e2} (0, 0.5), Z = 0 -> gain 2 - √3 ≈ 0.267949;
    # f2: {e4} (0, 0.5), Z = 0; {e0, e2, e5} (0.5, 1.5), Z = √3 -> gain 2 - √3 as well: the tie goes to f1.
    # 0.267949 < Θ^1: a leaf, κ = ½ ln((0.5 + ε)/(2.0 + ε)) ≈ ½ ln ¼ = -ln 2 ≈ -0.693147.
    assert (no.parent, no.depth, no.examples, no.w_positive, no.w_negative) == (0, 1, 4, 0.5, 2.0)
    assert (no.feature, no.best_feature, no.best_gain) == (-1, 1, pytest.approx(2 - SQRT3))
    kappa_no = 0.5 * math.log((0.5 + EPS) / (2.0 + EPS))
    assert no.confidence == pytest.approx(kappa_no) and kappa_no == pytest.approx(-LN2)
    assert tree.leaf_of.tolist() == [2, 1, 2, 1, 2, 2, 1]
    # Q_i += κ of its leaf.
    assert booster.margins.tolist() == close([kappa_no, kappa_yes, kappa_no, kappa_yes,
                                              kappa_no, kappa_no, kappa_yes])
    # Loss Σ m ln(1 + e^(-yQ)): before 8 ln 2 ≈ 5.545177; after, with yQ = ln 2 (e0 m=2, e2, e4), ½ ln 2
    # (e1, e6), -½ ln 2 (e3), -ln 2 (e5): 4 ln 1.5 + 2 ln(1 + 1/√2) + ln(1 + √2) + ln 3 ≈ 4.671446.
    assert result.loss_before == pytest.approx(8 * LN2)
    assert result.loss_after == pytest.approx(4 * math.log(1.5) + 2 * math.log(1 + 1 / SQRT2)
                                              + math.log(1 + SQRT2) + math.log(3.0))
    assert result.loss_after == booster.loss()
    # Z of the tree = Σ over leaves: √2 + 2.
    assert result.z == pytest.approx(SQRT2 + 2)


def test_hand_worked_smoothing() -> None:
    # Same tree as the first iteration above (smoothing changes no gain, so neither Θ nor the splits),
    # but ε = 1e-8 + 0.5 × mean candidate weight = 1e-8 + 0.5 × (Σw = 4.0) / (Σm = 8) = 0.25 + 1e-8:
    #   node 1 (W+ 1.0, W- 0.5): κ = ½ ln(1.25 / 0.75) = ½ ln(5/3) ≈ 0.255413 (unsmoothed ½ ln 2 ≈ 0.346574)
    #   node 2 (W+ 0.5, W- 2.0): κ = ½ ln(0.75 / 2.25) = -½ ln 3 ≈ -0.549306 (unsmoothed -ln 2 ≈ -0.693147)
    booster = hand_booster(smoothing=0.5)
    assert booster.settings.leaf_epsilon(booster.weights(), booster.multiplicity) == 0.25 + EPS
    result = booster.step()
    assert result is not None
    root, yes, no = result.tree.nodes
    assert result.theta == pytest.approx(SQRT15 - SQRT2 - 2) and root.feature == 0
    assert yes.confidence == pytest.approx(0.5 * math.log(5 / 3))
    assert no.confidence == pytest.approx(-0.5 * math.log(3))
    # A leaf holding a single positive of weight ½ and nothing else: ε = 1e-8 gives
    # κ ≈ ½ ln(0.5 / 1e-8) ≈ 8.86, the memorising leaf issue #11 describes; with ε = 0.25, κ = ½ ln 3 ≈ 0.549.
    assert confidence(0.5, 0.0, EPS) == pytest.approx(0.5 * math.log(0.5e8))
    assert confidence(0.5, 0.0, 0.25) == pytest.approx(0.5 * math.log(3))


def test_smoothing_is_a_checked_setting() -> None:
    with pytest.raises(ConfigurationError):
        BoostSettings(smoothing=-1.0)
    assert BoostSettings.from_dict({"loss": "logistic", "max_depth": None, "epsilon": 1e-8,
                                    "checkpoint_every": 50}) \
        == BoostSettings(smoothing=0.0)  # stored before it


def test_hand_worked_second_iteration() -> None:
    booster = hand_booster()
    first = booster.step()
    assert first is not None
    # w = m / (1 + e^(yQ)) with Q from the first tree (Q = -ln 2 in leaf 2, ½ ln 2 in leaf 1):
    #   e0: 2/(1 + e^(ln 2)) = 2/3;   e1: 1/(1 + √2) = √2 - 1 ≈ 0.414214;   e2, e4: 1/(1 + 2) = 1/3;
    #   e3: 1/(1 + 1/√2) = 2 - √2 ≈ 0.585786;   e5: 1/(1 + ½) = 2/3;   e6: √2 - 1.
    w = [2 / 3, SQRT2 - 1, 1 / 3, 2 - SQRT2, 1 / 3, 2 / 3, SQRT2 - 1]
    assert booster.weights().tolist() == pytest.approx(w)
    # W+ = 2(√2 - 1) + 2/3 = 2√2 - 4/3 ≈ 1.495094;  W- = 2/3 + 1/3 + (2 - √2) + 1/3 = 10/3 - √2 ≈ 1.919120;
    # Z = 2 sqrt(W+ W-) ≈ 3.387780.
    w_pos, w_neg = 2 * SQRT2 - 4 / 3, 10 / 3 - SQRT2
    z_root = 2 * math.sqrt(w_pos * w_neg)
    assert z_root == pytest.approx(3.387780)
    # Having f0: {e1, e3, e6} (2√2 - 2, 2 - √2), Z ≈ 1.393243; lacking it: (2/3, 4/3),
    #   Z = 2 sqrt(8/9) ≈ 1.885618
    #   -> gain ≈ 3.387780 - 1.393243 - 1.885618 = 0.108920
    # Having f1: all but e2, (2√2 - 4/3, 3 - √2), Z ≈ 3.079545; lacking it: {e2} (0, 1/3), Z = 0
    #   -> gain ≈ 3.387780 - 3.079545 = 0.308235
    # Having f2: {e3, e4, e6} (√2 - 1, 7/3 - √2), Z ≈ 1.234037; lacking: {e0, e1, e2, e5} (√2 - 1/3, 1),
    #   Z ≈ 2.079308
    #   -> gain ≈ 3.387780 - 1.234037 - 2.079308 = 0.074436
    histogram = np.array([[2 * SQRT2 - 2, w_pos, SQRT2 - 1],
                          [2 - SQRT2, 3 - SQRT2, 7 / 3 - SQRT2]])
    gains = split_gains(histogram, w_pos, w_neg)
    assert gains.tolist() == pytest.approx([0.108920, 0.308235, 0.074436], abs=1e-6)
    # g_2 = 0.308235 (f1) < Θ^1 ≈ 0.458770, so Θ^2 = min(Θ^1, g_2) = g_2.
    second = booster.step()
    assert second is not None and second.iteration == 2
    root = second.tree.nodes[0]
    assert (root.feature, root.w_positive, root.w_negative) == (1, pytest.approx(w_pos), pytest.approx(w_neg))
    assert second.tree.root_gain == pytest.approx(float(gains[1]))
    assert second.theta == min(first.theta, second.tree.root_gain) == second.tree.root_gain
    assert second.theta == pytest.approx(0.308235, abs=1e-6) and booster.theta == second.theta
    assert second.loss_before == first.loss_after


def test_theta_schedule() -> None:
    X, y, m = random_problem(seed=1)
    results = run(make_booster(X, y, m), 12)
    assert len(results) == 12
    theta = math.inf
    for result in results:
        tree = result.tree
        assert tree.root_gain == tree.nodes[0].best_gain > 0.0
        assert result.theta == min(theta, tree.root_gain) <= theta  # non-increasing, min(previous, g_t)
        theta = result.theta
        for node in tree.nodes:
            if node.is_leaf:
                # not split: no split at all, or the best one falls short of Θ^t (no depth limit here)
                assert node.best_feature < 0 or node.best_gain < theta
                assert node.confidence == close(0.5 * math.log((node.w_positive + EPS)
                                                               / (node.w_negative + EPS)))
                assert node.examples == int(np.sum(tree.leaf_of == node.node))
            else:
                assert node.feature == node.best_feature and node.best_gain >= theta
                assert node.confidence is None
                children = tree.nodes[node.true_child], tree.nodes[node.false_child]
                assert children[0].examples + children[1].examples == node.examples
                assert all(c.parent == node.node and c.depth == node.depth + 1 for c in children)
        assert result.loss_after <= result.loss_before


def test_converged_returns_none() -> None:
    # Every example has the same features: no split separates anything, the root's best gain is 0.
    booster = make_booster(dense([[0, 2]] * 4, 3), [1, -1, 1, -1], [1, 2, 1, 1])
    assert booster.step() is None
    assert (booster.iteration, booster.theta, booster.margins.tolist()) == (0, math.inf, [0.0] * 4)


# --------------------------------------------------------------------------------- b. exponential loss


def test_exponential_loss_hand_worked() -> None:
    booster = hand_booster(loss="exponential")
    # w = m e^(-yQ) = m at Q = 0: W+ = 3, W- = 5; every Z and gain doubles (Z is homogeneous of degree 1),
    # so the tree is the logistic one: f0 with gain 2(√15 - √2 - 2) ≈ 0.917540, both children leaves
    # (their best gains 2(√2 - 1) ≈ 0.828427 and 2(2 - √3) ≈ 0.535898 fall short of Θ^1), and κ is scale-free:
    # ½ ln(2/1) = ½ ln 2 for {e1, e3, e6}, ½ ln(1/4) = -ln 2 for {e0, e2, e4, e5}.
    assert booster.weights().tolist() == [2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert booster.loss() == 8.0
    result = booster.step()
    assert result is not None
    assert [n.feature for n in result.tree.nodes] == [0, -1, -1]
    assert result.theta == pytest.approx(2 * (SQRT15 - SQRT2 - 2))
    assert [n.confidence for n in result.tree.nodes[1:]] == pytest.approx([LN2 / 2, -LN2])
    # New weights m e^(-yQ): e0 2 e^(-ln 2) = 1; e1, e6 e^(-½ ln 2) = 1/√2 ≈ 0.707107; e2, e4 e^(-ln 2) = ½;
    # e3 (y = -1, Q = ½ ln 2) e^(½ ln 2) = √2; e5 (y = +1, Q = -ln 2) e^(ln 2) = 2.
    w = [1.0, 1 / SQRT2, 0.5, SQRT2, 0.5, 2.0, 1 / SQRT2]
    assert booster.weights().tolist() == pytest.approx(w)
    assert example_weights("exponential", np.array(HAND_Y), np.array(HAND_M, dtype=float),
                           booster.margins).tolist() == pytest.approx(w)
    # AdaBoost's balance: in each leaf W+ = W- afterwards (leaf 1: 2/√2 = √2 vs √2; leaf 2: 2 vs 1 + ½ + ½).
    # The loss Σ m e^(-yQ) is the sum of the new weights: 4 + 2√2 ≈ 6.828427.
    assert result.loss_after == pytest.approx(4 + 2 * SQRT2) == total_loss(
        "exponential", np.array(HAND_Y), np.array(HAND_M, dtype=float), booster.margins)


# ---------------------------------------------------------------------------------------------- c. stumps


def test_stumps_have_exactly_one_split() -> None:
    X, y, m = random_problem(seed=2)
    stumps = run(make_booster(X, y, m, max_depth=1), 15)
    assert len(stumps) == 15
    for result in stumps:
        assert result.tree.splits == 1 and result.tree.depth == 1 and len(result.tree.nodes) == 3
    unlimited = run(make_booster(X, y, m), 15)
    assert max(r.tree.splits for r in unlimited) > 1  # the depth limit did restrict something
    assert stumps[0].theta == unlimited[0].theta  # same root split, same Θ^1


# ---------------------------------------------------------------------------------------- d. tie-breaking


@pytest.mark.parametrize("low, high", [(1, 3), (0, 2), (2, 3)])
def test_identical_columns_lowest_id_wins(low: int, high: int) -> None:
    y = np.array([1, 1, 1, -1, -1, -1, 1, -1, -1, 1], dtype=np.int8)
    X = np.zeros((10, 4), dtype=np.int8)
    X[:, low] = X[:, high] = [1, 1, 1, 0, 0, 0, 1, 0, 1, 0]  # agrees with y on 8 of 10
    X[:, [f for f in range(4) if f not in (low, high)]] = [[1, 0], [0, 1]] * 5  # weak
    booster = make_booster(X, y, np.ones(10, dtype=int))
    histogram = slot_histograms(booster.indptr, booster.indices, np.zeros(10, dtype=np.int32),
                                booster.weights(), booster.positive, 1, 4)[0]
    gains = split_gains(histogram, 2.5, 2.5)  # W+ = W- = 5 · 0.5
    assert gains[low] == gains[high] == gains.max() > 0.0
    result = booster.step()
    assert result is not None
    assert result.tree.nodes[0].feature == result.tree.nodes[0].best_feature == low


def test_complementary_features_tie_goes_to_lowest_id() -> None:
    # Root: e0 (+) has f0; e1 (-), e2 (+), e3 (-) have f1 = ¬f0. Splitting on f0 or on f1 is the same
    # partition, so ΔZ(f0) = ΔZ(f1) exactly in real arithmetic and the tie should go to f0.
    X = dense([[0], [1], [1], [1]], 2)
    y = [1, -1, 1, -1]
    # With weights (0.1, 0.1, 0.2, 0.2): W+ = W- = 0.1 + 0.2; split_gains gives
    # [0.11010205144336438, 0.11010205144336443] (f1 sums W(with) directly, f0 gets W(without) by
    # subtraction).
    w_pos = w_neg = 0.1 + 0.2
    gains = split_gains(np.array([[0.1, 0.2], [0.0, 0.1 + 0.2]]), w_pos, w_neg)
    assert gains[0] != gains[1] and gains[0] == pytest.approx(gains[1], rel=1e-15)  # last bits differ...
    assert best_split(gains) == 0  # ...but within TIE_TOLERANCE they tie, and the lowest id wins
    # The same through a booster resumed at some margins: it splits on f1.
    booster = make_booster(X, y, [1, 1, 1, 1], margins=np.array([0.24, 0.68, -0.59, -0.91]))
    result = booster.step()
    assert result is not None and result.tree.nodes[0].feature == 0


# ---------------------------------------------------------------------- e. dense reference, random data


@pytest.mark.parametrize("exact", [True, False], ids=["library-rounding", "independent"])
@pytest.mark.parametrize("loss, max_depth, iterations", [("logistic", None, 25), ("exponential", None, 10),
                                                         ("logistic", 2, 10), ("logistic", 1, 10)])
def test_reference_agreement_random(loss: str, max_depth: int | None, iterations: int, exact: bool) -> None:
    X, y, m = random_problem(seed=0)
    results = run(booster := make_booster(X, y, m, loss=loss, max_depth=max_depth), iterations)
    assert len(results) == iterations
    assert any(len(r.tree.nodes) > 3 for r in results) or max_depth == 1
    reference, reference_margins = reference_boost(X, y, m, loss, max_depth, EPS, iterations,
                                                   library_rounding=exact)
    assert_same_run(results, booster.margins, reference, reference_margins, exact)


# ------------------------------------------------------------------------- f. dense reference, real data


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clparse.data import sample_path
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database

    path = tmp_path_factory.mktemp("boost") / "clparse.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")], PrepareSettings(tagger_iterations=20))
    return path


@pytest.fixture(scope="module")
def adjp(sample_db: Path):
    from clparse.store.training import TrainingStore

    return TrainingStore(sample_db).load_problem("ADJP")


def test_load_problem_matches_label_matrix(sample_db: Path, adjp) -> None:
    from clparse.examples.data import TrainingData

    X, y, multiplicity = TrainingData(sample_db).label_matrix("ADJP")
    X = X.tocsr()
    X.sort_indices()
    assert X.shape == (len(adjp.y), adjp.n_features)
    assert np.array_equal(X.indptr, adjp.indptr) and np.array_equal(X.indices, adjp.indices)
    assert np.all(X.data == 1)
    assert np.array_equal(y, adjp.y) and np.array_equal(multiplicity, adjp.multiplicity)
    assert set(np.unique(adjp.y).tolist()) == {-1, 1} and adjp.multiplicity.min() >= 1
    rows = np.repeat(np.arange(len(adjp.y)), np.diff(adjp.indptr))  # strictly increasing within each row
    assert np.all((np.diff(adjp.indices) > 0) | (np.diff(rows) > 0))


@pytest.mark.parametrize("exact", [True, False], ids=["library-rounding", "independent"])
def test_reference_agreement_sample(adjp, exact: bool) -> None:
    n = 1500
    indptr = adjp.indptr[:n + 1]
    indices = adjp.indices[:indptr[-1]]
    y, m = adjp.y[:n], adjp.multiplicity[:n]
    assert (y > 0).sum() > 0
    # the reference: ε
    booster = Booster(indptr, indices, adjp.n_features, y, m, BoostSettings(smoothing=0.0))
    results = run(booster, 10)
    assert len(results) == 10
    X = sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr),
                      shape=(n, adjp.n_features)).toarray()
    reference, reference_margins = reference_boost(X, y, m, "logistic", None, EPS, 10, library_rounding=exact)
    assert_same_run(results, booster.margins, reference, reference_margins, exact)


# ---------------------------------------------------------------------------------------------- g. resume


@pytest.mark.parametrize("smoothing", [0.0, 0.5])
def test_resume_is_bit_identical(smoothing: float) -> None:
    X, y, m = random_problem(seed=3)
    straight = make_booster(X, y, m, smoothing=smoothing)
    whole = run(straight, 12)
    first = make_booster(X, y, m, smoothing=smoothing)
    head = run(first, 5)
    resumed = make_booster(X, y, m, margins=first.margins.copy(), iteration=5, theta=first.theta,
                           smoothing=smoothing)
    tail = run(resumed, 7)
    assert len(whole) == len(head) + len(tail) == 12
    for a, b in zip(whole, head + tail):
        assert a.iteration == b.iteration
        assert a.tree.nodes == b.tree.nodes  # every Node field, floats compared with ==
        assert (a.theta, a.tree.root_gain, a.loss_before, a.loss_after) \
            == (b.theta, b.tree.root_gain, b.loss_before, b.loss_after)
        assert np.array_equal(a.tree.leaf_of, b.tree.leaf_of)
    assert np.array_equal(straight.margins, resumed.margins)
    assert (straight.iteration, straight.theta) == (resumed.iteration, resumed.theta)
