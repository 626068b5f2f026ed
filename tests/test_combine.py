"""Constituent recombination (Chen & Kit 2012 §3): the bracketing search against brute force, one member
with K = 1 gives its tree back, the F1 the fit optimises is EVALB's F1 of the trees it builds, and a
majority of members wins at ρ = half the weight."""

from __future__ import annotations

import itertools
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.combine.fit import Combination, dev_sentence, f1, fit
from clparse.combine.select import best_bracketing, choose, combined_tree
from clparse.combine.votes import collect, tree_shares, weights
from clparse.data import sample_path
from clparse.evaluate.evalb import EvalbParams, evaluate, score_view
from clparse.read.ptb import format_tree, read_trees
from clparse.read.tree import Tree

SAMPLE = list(read_trees(sample_path("dev")))[:40]


def laminar(spans: list[tuple[int, int]]) -> bool:
    return not any(a < c < b < d or c < a < d < b for (a, b), (c, d) in itertools.combinations(spans, 2))


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10**6))
def test_best_bracketing_is_the_heaviest_compatible_set(n: int, seed: int) -> None:
    rng = random.Random(seed)
    weight = np.zeros((n + 1, n + 1))
    spans = [(i, j) for i in range(n) for j in range(i + 1, n + 1)]
    positive = rng.sample(spans, min(len(spans), rng.randint(0, 9)))
    for i, j in positive:
        weight[i, j] = rng.choice([0.5, 1.0, 1.5, rng.random() + 0.01])
    best = max(sum(weight[s] for s in subset) for r in range(len(positive) + 1)
               for subset in itertools.combinations(positive, r) if laminar(list(subset)))
    chosen = best_bracketing(n, weight)
    picked = [(i, j) for i, j in spans if chosen[i, j]]
    assert laminar(picked) and all(weight[s] > 0 for s in picked)
    assert abs(sum(weight[s] for s in picked) - best) < 1e-9


def perturbed(tree: Tree, rng: random.Random, p: float) -> Tree:
    """``tree`` with each phrase flattened into its parent with probability ``p`` (the words stay)."""
    def walk(node: Tree) -> list[Tree]:
        if node.is_preterminal:
            return [Tree.preterminal(node.label, node.word or "")]
        children = [c for child in node.children for c in walk(child)]
        if node.label != "ROOT" and rng.random() < p:
            return children
        return [Tree(node.label, children)]
    return walk(tree)[0] if tree.label == "ROOT" else Tree("ROOT", walk(tree))


def test_one_member_with_one_tree_gives_its_tree_back() -> None:
    for tree in SAMPLE:
        votes = collect([[(tree, 0.0)]])
        combination = Combination((1.0,), 0.5, 1.0)
        omega = combination.omega(votes)
        out = combined_tree(votes, choose(votes, omega, combination.threshold), omega, np.array([1.0]))
        assert format_tree(out) == format_tree(tree)


def test_the_fitted_objective_is_evalb_f1_of_the_built_trees() -> None:
    rng = random.Random(3)
    golds = SAMPLE
    members = [[[(perturbed(g, rng, p), -rng.random()) for _ in range(3)] for g in golds]
               for p in (0.2, 0.3, 0.5)]
    sentences = [dev_sentence(collect([m[s] for m in members]), g) for s, g in enumerate(golds)]
    for combination in (Combination((1.0, 1.0, 1.0), 1.5, 1.0), Combination((2.0, 1.0, 0.5), 1.0, 0.3),
                        Combination((1.0, 0.2, 0.2), 0.9, 5.0)):
        built = []
        for sentence in sentences:
            omega = combination.omega(sentence.votes)
            chosen = choose(sentence.votes, omega, combination.threshold)
            built.append(combined_tree(sentence.votes, chosen, omega, np.array(combination.member_weights)))
        assert [t.words() for t in built] == [g.words() for g in golds]  # every token, in order
        assert abs(evaluate(golds, built).all.f1 - f1(sentences, combination)) < 1e-9


def test_a_majority_of_members_wins_at_half_the_weight() -> None:
    """Three members, one tree each: a constituent two of them hold is chosen, one only one holds is not."""
    gold = SAMPLE[5]
    brackets = {(b.start, b.end, b.label) for b in score_view(gold, EvalbParams()).brackets}
    rng = random.Random(1)
    trees = [perturbed(gold, rng, 0.4) for _ in range(3)]
    held = [{(b.start, b.end, b.label) for b in score_view(t, EvalbParams()).brackets} for t in trees]
    votes = collect([[(t, 0.0)] for t in trees])
    omega = weights(votes, np.ones(3), 1.0)
    chosen = {(int(votes.spans[c, 0]), int(votes.spans[c, 1]), votes.labels[c])
              for c in choose(votes, omega, 1.5)}
    majority = {c for c in brackets if sum(c in h for h in held) >= 2}
    assert chosen == majority  # subsets of one tree's brackets never cross


def test_shares_are_a_softmax_per_member() -> None:
    shares = tree_shares(np.array([1.0, 0.0, 2.0, 2.0]), np.array([0, 0, 1, 1]), 2, 1.0)
    assert np.allclose(shares, [np.e / (np.e + 1), 1 / (np.e + 1), 0.5, 0.5])
    assert np.allclose(tree_shares(np.array([1.0, 0.0]), np.array([0, 0]), 1, 1e-3), [1.0, 0.0])


def test_fit_finds_weights_at_least_as_good_as_its_starts() -> None:
    rng = random.Random(5)
    golds = SAMPLE[:25]
    members = [[[(perturbed(g, rng, p), 0.0)] for g in golds] for p in (0.1, 0.6, 0.6)]
    sentences = [dev_sentence(collect([m[s] for m in members]), g) for s, g in enumerate(golds)]
    alone = Combination((1.0,), 0.5, 1.0)
    single = [f1([dev_sentence(collect([m[s]]), g) for s, g in enumerate(golds)], alone) for m in members]
    fitted = fit(sentences, 3, max_evaluations=150)
    assert fitted.f1 >= max(value for _, value in fitted.starts) - 1e-9
    assert fitted.f1 >= max(single) - 1e-9  # the best member alone is one of the combinations (λ on it)
