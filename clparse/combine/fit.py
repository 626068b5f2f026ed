"""Fitting a combination on dev: λ_i, ρ and the share temperature τ by Powell's method, PARSEVAL F1 as the
objective (Chen & Kit 2012 §3).

The objective is EVALB's labelled F1 of the combined trees, counted without building them: a chosen
constituent is one test bracket and matches if the gold tree has that labelled span (the combined tree
holds exactly the chosen brackets, see :mod:`clparse.combine.select`). F1 is a step function of the
parameters, so Powell's line searches start from a few points (ρ at a third, half and two thirds of the
largest possible weight) and the best end point is kept; the tests check that the fitted F1 is what
scoring the built trees gives.

Parameters: λ_i = exp(a_i); ρ = σ(b) · Σ λ_i (a share of the largest possible ω, which every member's whole
list gives); τ = exp(c).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from clparse.combine.select import choose
from clparse.combine.votes import SentenceVotes, weights
from clparse.evaluate.evalb import EvalbParams, score_view
from clparse.read.tree import Tree


@dataclass(frozen=True)
class Combination:
    member_weights: tuple[float, ...]  # λ_i
    threshold: float  # ρ, in the units of ω
    temperature: float  # τ of the tree shares f

    def omega(self, votes: SentenceVotes) -> np.ndarray:
        return weights(votes, np.array(self.member_weights), self.temperature)


@dataclass
class DevSentence:
    votes: SentenceVotes
    gold_hit: np.ndarray  # per candidate constituent: is its labelled span a gold bracket?
    gold_brackets: int


def dev_sentence(votes: SentenceVotes, gold: Tree, params: EvalbParams = EvalbParams()) -> DevSentence:
    """A dev sentence's votes with the gold tree's answer: the k-th occurrence of a labelled span matches if
    the gold tree has it k times (labels compared as EVALB compares them), which is EVALB's matching."""
    view = score_view(gold, params)
    hit = np.array([sum(1 for b in view.brackets if (b.start, b.end) == (int(s), int(e))
                        and params.labels_equal(b.label, label)) >= k
                    for (s, e), label, k in zip(votes.spans, votes.labels, votes.occurrence)], dtype=bool)
    return DevSentence(votes, hit, len(view.brackets))


def f1(sentences: Sequence[DevSentence], combination: Combination) -> float:
    """Labelled F1 (percent) of the combined trees, from the chosen constituents."""
    matched = test = gold = 0
    for sentence in sentences:
        chosen = choose(sentence.votes, combination.omega(sentence.votes), combination.threshold)
        matched += int(sentence.gold_hit[chosen].sum())
        test += len(chosen)
        gold += sentence.gold_brackets
    return 200.0 * matched / (test + gold) if test + gold else 0.0


@dataclass
class Fitted:
    combination: Combination
    f1: float
    evaluations: int
    starts: list[tuple[float, float]] = field(default_factory=list)  # (ρ share at the start, F1 reached)


def decode(x: np.ndarray, members: int) -> Combination:
    lam = np.exp(np.clip(x[:members], -20, 20))
    share = 1.0 / (1.0 + np.exp(-x[members]))
    return Combination(tuple(float(v) for v in lam), float(share * lam.sum()), float(np.exp(x[members + 1])))


def fit(sentences: Sequence[DevSentence], members: int, *, max_evaluations: int = 400,
        starts: Sequence[float] = (1 / 3, 1 / 2, 2 / 3)) -> Fitted:
    """λ, ρ and τ that maximise dev F1, by Powell's method (scipy) from each start."""
    from scipy.optimize import minimize

    evaluations = 0

    def loss(x: np.ndarray) -> float:
        nonlocal evaluations
        evaluations += 1
        return -f1(sentences, decode(x, members))

    best: tuple[float, np.ndarray] | None = None
    tried: list[tuple[float, float]] = []
    for share in starts:
        x0 = np.concatenate([np.zeros(members), [np.log(share / (1 - share))], [0.0]])
        result = minimize(loss, x0, method="Powell",
                          options={"maxfev": max_evaluations, "xtol": 1e-3, "ftol": 1e-6})
        value = -float(result.fun)
        tried.append((share, value))
        if best is None or value > best[0]:
            best = (value, np.asarray(result.x))
    assert best is not None
    combination = decode(best[1], members)
    return Fitted(combination, f1(sentences, combination), evaluations, tried)
