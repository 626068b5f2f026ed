"""The stratified shuffling test against an exact enumeration of all swap patterns."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.evaluate import EvalbParams, Evaluation, SentenceResult, compare


def _evaluation(rows: list[tuple[int, int, int]]) -> Evaluation:
    result = Evaluation(EvalbParams())
    for i, (matched, gold, test) in enumerate(rows, 1):
        result.add(SentenceResult(i, 10, "ok", gold, test, matched))
    return result


A = [(5, 6, 6), (3, 4, 5), (7, 7, 7), (2, 5, 4), (4, 4, 4), (6, 8, 7), (1, 3, 3), (5, 5, 6)]
B = [(4, 6, 6), (3, 4, 4), (5, 7, 8), (2, 5, 5), (3, 4, 4), (5, 8, 8), (1, 3, 2), (4, 5, 5)]


def _f1(rows: list[tuple[int, int, int]]) -> float:
    m, g, t = (sum(col) for col in zip(*rows))
    r, p = 100 * m / g, 100 * m / t
    return 2 * r * p / (r + p)


def test_matches_exact_enumeration() -> None:
    observed = abs(_f1(A) - _f1(B))
    hits = 0
    patterns = list(itertools.product([0, 1], repeat=len(A)))
    for swaps in patterns:
        a = [b if s else x for x, b, s in zip(A, B, swaps)]
        b = [x if s else y for x, y, s in zip(A, B, swaps)]
        hits += abs(_f1(a) - _f1(b)) >= observed - 1e-9
    exact = hits / len(patterns)
    result = compare(_evaluation(A), _evaluation(B), trials=40_000, seed=1)
    f1 = next(m for m in result.metrics if m.metric == "f1")
    assert f1.a == pytest.approx(_f1(A)) and f1.b == pytest.approx(_f1(B))
    assert f1.p_value == pytest.approx(exact, abs=0.01)
    assert 0.0 < exact < 1.0  # the case is informative


def test_identical_systems_are_not_different() -> None:
    result = compare(_evaluation(A), _evaluation(A), trials=500)
    assert all(m.p_value == 1.0 and m.difference == 0 for m in result.metrics)


def test_large_consistent_difference_is_significant() -> None:
    good = [(9, 10, 10)] * 60
    bad = [(5, 10, 10)] * 60
    result = compare(_evaluation(good), _evaluation(bad), trials=2_000)
    assert all(m.p_value < 0.001 for m in result.metrics)


def test_same_seed_same_p_values_and_unparsed_sentences_left_out() -> None:
    a, b = _evaluation(A), _evaluation(B)
    b.sentences[0] = SentenceResult(1, 10, "skip")
    first, second = compare(a, b, trials=300, seed=7), compare(a, b, trials=300, seed=7)
    assert first == second and first.left_out == 1 and first.sentences == len(A) - 1


def test_different_sentence_counts_refused() -> None:
    with pytest.raises(ValueError, match="not the same gold set"):
        compare(_evaluation(A), _evaluation(A[:-1]))


@given(rows=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 3)), min_size=1,
                     max_size=40),
       seed=st.integers(0, 2**32), trials=st.integers(1, 700), at_once=st.integers(1, 200))
@settings(max_examples=60, deadline=None)
def test_drawing_the_swaps_in_slices_gives_the_same_p_values(rows: list[tuple[int, int, int]], seed: int,
                                                             trials: int, at_once: int) -> None:
    """Memory is bounded by slicing each batch (SWAPS_AT_ONCE); the p-values for a seed stay those of
    drawing each batch of 2,000 trials whole, as before (numpy draws integers(0, 2) value by value)."""
    import numpy as np

    import clparse.evaluate.significance as significance

    a_rows = [(min(m, g + 1, t + 1), g + 1, t + 1) for m, g, t in rows]
    b_rows = [(max(0, m - 1), g, t) for m, g, t in a_rows]
    whole = compare(_evaluation(a_rows), _evaluation(b_rows), trials=trials, seed=seed)
    try:
        significance.SWAPS_AT_ONCE = at_once
        sliced = compare(_evaluation(a_rows), _evaluation(b_rows), trials=trials, seed=seed)
    finally:
        significance.SWAPS_AT_ONCE = 1 << 22
    assert sliced == whole
    # and "whole" is the unsliced draw: the same swaps as one (trials, sentences) matrix
    direct = np.random.default_rng(seed).integers(0, 2, size=(trials, len(rows)))
    parts = np.random.default_rng(seed)
    step = max(1, at_once // len(rows))
    pieces = [parts.integers(0, 2, size=(min(step, trials - i), len(rows))) for i in range(0, trials, step)]
    assert np.array_equal(direct, np.concatenate(pieces))
