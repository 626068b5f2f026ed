"""The ℓ1 rule (clparse.boost.l1): hand-worked confidences and first tree, properties, resume.

Hand-worked data set: the 7 examples of tests/test_boost.py (W+ = 1.5, W- = 2.5 at Q = 0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from clparse.boost.booster import BoostSettings
from clparse.boost.l1 import l1_confidence
from clparse.errors import ConfigurationError
from tests.test_boost import hand_booster, make_booster, random_problem, run


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_confidence_by_hand() -> None:
    # All margins 0, P positives and N negatives (by multiplicity): for κ ≠ 0 the optimum solves
    # -P σ(-κ) + N σ(κ) ± λ = 0, i.e. σ(κ) = (P ∓ λ)/(P + N).
    y = np.array([-1, -1, -1, 1], dtype=np.int8)
    m = np.array([2.0, 1.0, 1.0, 1.0])  # N = 4, P = 1
    zero = np.zeros(4)
    assert l1_confidence(y, m, zero, 1.458) == pytest.approx(logit((1 + 1.458) / 5), abs=1e-12)
    assert l1_confidence(y, m, zero, 0.0) == pytest.approx(logit(1 / 5), abs=1e-12)  # unpenalised: ln(P/N)
    # |W+ - W-| = |0.5 - 2.0| = 1.5: a penalty of at least that keeps the leaf at exactly 0
    assert l1_confidence(y, m, zero, 1.5) == 0.0 and l1_confidence(y, m, zero, 9.0) == 0.0
    assert l1_confidence(-y, m, zero, 1.458) == pytest.approx(-logit((1 + 1.458) / 5), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([-1, 1]), st.integers(1, 4), st.floats(-3, 3)),
                min_size=1, max_size=12),
       st.floats(0.0, 3.0))
def test_confidence_meets_the_l1_optimality_condition(examples: list[tuple[int, int, float]],
                                                      lam: float) -> None:
    y = np.array([e[0] for e in examples], dtype=np.int8)
    m = np.array([e[1] for e in examples], dtype=np.float64)
    q = np.array([e[2] for e in examples], dtype=np.float64)
    kappa = l1_confidence(y, m, q, lam)

    def gradient(k: float) -> float:  # W+ - W- at margins Q + k
        return float(np.dot(m * y, expit(-y * (q + k))))

    if kappa == 0.0:
        assert abs(gradient(0.0)) <= lam
    elif abs(kappa) < 64.0:
        assert gradient(kappa) == pytest.approx(math.copysign(lam, kappa), abs=1e-9)


def test_first_tree_by_hand() -> None:
    # Unpenalised split gains at the root, |W+ - W-| on each side:
    #   f0: with (1.0, 0.5) 0.5, without (0.5, 2.0) 1.5 -> 2.0;  f1: 0.5 + 0.5 = 1.0;  f2: 0.5 + 0.5 = 1.0.
    # λ = 0.9 × 2.0 = 1.8: no side exceeds it, every leaf would be 0 (|W+ - W-| = 1.0 at the root), so the
    # tree is grown again at 1.62, then at 1.458, where f0's 1.5 passes: the root splits on f0 (its own
    # penalised gain is 0). Leaves: f0 side |0.5| <= λ -> κ = 0; the other side (P = 1, N = 4 at Q = 0)
    # κ = logit((1 + 1.458)/5) ≈ -0.033603.
    booster = hand_booster(rule="l1")
    result = booster.step()
    assert result is not None
    tree = result.tree
    assert tree.root_gain == 2.0 and tree.theta == pytest.approx(1.458) and booster.theta == tree.theta
    root, yes, no = tree.nodes
    assert (root.feature, root.best_gain) == (0, 1.5)
    assert yes.confidence == 0.0 and no.confidence == pytest.approx(logit((1 + 1.458) / 5), abs=1e-12)
    assert result.loss_after < result.loss_before


def test_penalty_only_falls_and_loss_never_rises() -> None:
    X, y, m = random_problem(seed=5)
    booster = make_booster(X, y, m, rule="l1")
    results = run(booster, 15)
    assert len(results) >= 5
    assert all(a.theta >= b.theta for a, b in zip(results, results[1:]))
    assert all(r.loss_after <= r.loss_before for r in results)


def test_resume_is_bit_identical_under_l1() -> None:
    X, y, m = random_problem(seed=3)
    straight = make_booster(X, y, m, rule="l1")
    whole = run(straight, 10)
    first = make_booster(X, y, m, rule="l1")
    head = run(first, 4)
    resumed = make_booster(X, y, m, margins=first.margins.copy(), iteration=4, theta=first.theta, rule="l1")
    tail = run(resumed, 6)
    assert [(r.tree.nodes, r.theta, r.loss_after) for r in whole] == \
        [(r.tree.nodes, r.theta, r.loss_after) for r in head + tail]
    assert np.array_equal(straight.margins, resumed.margins)


def test_l1_settings() -> None:
    with pytest.raises(ConfigurationError):
        BoostSettings(rule="l2")
    with pytest.raises(ConfigurationError):
        BoostSettings(rule="l1", loss="exponential")
    assert BoostSettings.from_dict({"loss": "logistic", "max_depth": None, "epsilon": 1e-8,
                                    "checkpoint_every": 50, "smoothing": 0.0}).rule == "mrl"
