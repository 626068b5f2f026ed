"""Best-first search (paper §2.2-2.3) against brute force, greedy parsing and hand-worked ties.

The scorers here are fakes: a candidate's confidence is a deterministic function of the item it would
build (its span and label and, depending on the model, its children's labels and their first and last
children's labels), so a complete path's confidences are exactly the confidences of the items of its
final tree, whatever the order they were built in. No context features: the fakes see no neighbours.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import struct
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.features.state import Item, build, candidates, leaf_items
from clparse.preprocess.pipeline import ROOT_LABEL, RemovedToken
from clparse.read.tree import Tree
from clparse.search import search
from clparse.search.aggregate import AGGREGATORS, Score, empty, extend, logistic_loss
from clparse.search.restore import flat_tree, restore_tokens

WORDS = [("the", "DT"), ("dog", "NN"), ("barks", "VBZ"), ("loudly", "RB")]
SMALL_LABELS = ("NP", "S", ROOT_LABEL)  # 2 phrase labels + ROOT: brute force stays small up to 4 words
LABELS = ("NP", "VP", "S", ROOT_LABEL)  # 3 phrase labels + ROOT: brute force only for 2 words
MAX_CHILDREN = 3
HUGE = 10**6

Model = Callable[[int, int, str, Sequence[Item]], float]  # (start, end, label, children) -> confidence
Descriptor = tuple[int, int, str, tuple[str, ...]]  # (start, end, label, labels of the children)


# ---------------------------------------------------------------------------------------------- fakes


def hashed(*parts: object) -> float:
    """A deterministic pseudo-random float in [-3, 3] for any repr-able key."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return struct.unpack(">Q", digest)[0] / 2**64 * 6.0 - 3.0


def labels_of(items: Sequence[Item]) -> tuple[str, ...]:
    return tuple(x.label for x in items)


def outer_children(item: Item) -> tuple[str, ...]:
    """Labels of an item's first and last child (what the real grandchild features look at)."""
    return labels_of(item.children[:1] + item.children[-1:])


def span_model(seed: int) -> Model:
    """Confidence depends on the span and the label only."""
    return lambda start, end, label, kids: hashed(seed, start, end, label)


def child_model(seed: int) -> Model:
    """Confidence depends on the span, the label and the children's labels."""
    return lambda start, end, label, kids: hashed(seed, start, end, label, labels_of(kids))


def coarse_model(seed: int) -> Model:
    """Confidences in {-1, -0.5, 0, 0.5, 1} (span, label, children's labels): many ties between paths."""
    return lambda start, end, label, kids: round(hashed(seed, start, end, label,
                                                        labels_of(kids)) / 3.0 * 2) / 2


def grandchild_model(seed: int) -> Model:
    """Also sees the children's first and last children, like the real scorer's grandchild features."""
    return lambda start, end, label, kids: hashed(seed, start, end, label,
                                                  tuple((k.label, outer_children(k)) for k in kids))


def constant_model(value: float = 0.0) -> Model:
    return lambda start, end, label, kids: value


def table_model(table: dict[tuple[int, int, str, tuple[str, ...]], float], default: float) -> Model:
    """Confidences by (start, end, label, children's labels)."""
    return lambda start, end, label, kids: table.get((start, end, label, labels_of(kids)), default)


class FakeScorer:
    """What search needs of a scorer: every candidate of a state with its confidence, in candidate order."""

    def __init__(self, model: Model, labels: Sequence[str] = LABELS,
                 max_children: int = MAX_CHILDREN) -> None:
        self.model = model
        self.labels = tuple(labels)
        self.max_children = max_children

    def candidates(self, frontier: Sequence[Item]) -> list[tuple[int, int, str, float]]:
        out = []
        for c in candidates(frontier, self.labels, self.max_children):
            kids = frontier[c.first:c.end]
            out.append((c.first, c.end, c.label, self.model(kids[0].start, kids[-1].end, c.label, kids)))
        return out


# -------------------------------------------------------------------------------------------- helpers


def leaves(n: int) -> list[Item]:
    return leaf_items(WORDS[:n])


def complete(frontier: Sequence[Item]) -> bool:
    return len(frontier) == 1 and frontier[0].label == ROOT_LABEL


def descriptors(item: Item) -> frozenset[Descriptor]:
    """Every phrase of the tree under ``item`` as (start, end, label, children's labels): determines the
    tree."""
    out: set[Descriptor] = set()
    stack = [item]
    while stack:
        node = stack.pop()
        if not node.is_leaf:
            out.add((node.start, node.end, node.label, tuple(c.label for c in node.children)))
            stack.extend(node.children)
    return frozenset(out)


def labeled_spans(item: Item) -> frozenset[tuple[int, int, str]]:
    return frozenset((s, e, label) for s, e, label, _ in descriptors(item))


def shape(item: Item) -> object:
    """The item as a nested tuple (leaves: (tag, position))."""
    if item.is_leaf:
        return (item.label, item.start)
    return (item.label, tuple(shape(c) for c in item.children))


def path_score(aggregator: str, confidences: Sequence[float]) -> Score:
    score = empty(aggregator)
    for c in confidences:
        score = extend(aggregator, score, c)
    return score


def phrases(item: Item) -> Iterator[Item]:
    if not item.is_leaf:
        yield item
        for child in item.children:
            yield from phrases(child)


def tree_score(aggregator: str, item: Item, model: Model) -> Score:
    """The score of any path building exactly this tree (the fake models are functions of the item)."""
    return path_score(aggregator, [model(p.start, p.end, p.label, p.children) for p in phrases(item)])


def key_of(aggregator: str, confidences: Sequence[float]) -> tuple[float, ...]:
    """The aggregate key computed directly from the definitions (not through extend)."""
    if aggregator == "maxmin":
        return tuple(-c for c in sorted(confidences))
    total = 0.0
    for c in confidences:
        total += math.log1p(math.exp(-c))
    return (total,)


def keys_equal(aggregator: str, a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    if aggregator == "maxmin":
        return a == b
    return len(a) == len(b) == 1 and math.isclose(a[0], b[0], rel_tol=1e-12, abs_tol=1e-12)


# ------------------------------------------------------------------------------------- brute force


def all_paths(frontier: tuple[Item, ...], scorer: FakeScorer) -> Iterator[tuple[list[float], Item]]:
    """Literally every complete inference path from ``frontier``: (its confidences in order, the ROOT
    item)."""
    if complete(frontier):
        yield [], frontier[0]
        return
    for first, end, label, confidence in scorer.candidates(frontier):
        item = build(label, frontier[first:end])
        for rest, root in all_paths(frontier[:first] + (item,) + frontier[end:], scorer):
            yield [confidence, *rest], root


def optimum(n: int, model: Model, labels: Sequence[str], aggregator: str
            ) -> tuple[tuple[float, ...], set[frozenset[Descriptor]]]:
    """The best key over every complete path from the leaves of ``n`` words, and every tree achieving it.

    Exhaustive over paths, but memoized on the state: what can follow a state depends only on each
    frontier item's span, its unary chain of labels and its first and last children's labels (the
    models see at most the span, the label, the children's labels and their first and last children's
    labels; the duplicate rule sees the chain). A path's key is a function of the multiset of its
    confidences, and both aggregators are compatible with multiset union (``A`` no worse than ``B``
    implies ``A + C`` no worse than ``B + C``; tested below), so the best completion of a state does not
    depend on how the state was reached. Keys of suffixes are kept as confidence lists so the final key
    is computed from scratch over the whole path.
    """
    scorer = FakeScorer(model, labels)

    def signature(frontier: Sequence[Item]) -> tuple[object, ...]:
        return tuple((x.start, x.end, tuple(x.same_span_labels()), outer_children(x)) for x in frontier)

    memo: dict[tuple[object, ...], tuple[tuple[float, ...], list[float], set[frozenset[Descriptor]]]] = {}

    def best(frontier: tuple[Item, ...]) -> tuple[tuple[float, ...], list[float], set[frozenset[Descriptor]]]:
        sig = signature(frontier)
        if sig in memo:
            return memo[sig]
        if complete(frontier):
            result: tuple[tuple[float, ...], list[float], set[frozenset[Descriptor]]] = (
                key_of(aggregator, []), [], {frozenset()})
        else:
            found: list[tuple[tuple[float, ...], list[float], set[frozenset[Descriptor]]]] = []
            for first, end, label, confidence in scorer.candidates(frontier):
                kids = frontier[first:end]
                item = build(label, kids)
                _, rest, trees = best(frontier[:first] + (item,) + frontier[end:])
                mine: Descriptor = (item.start, item.end, label, tuple(k.label for k in kids))
                confidences = [confidence, *rest]
                found.append((key_of(aggregator, confidences), confidences, {t | {mine} for t in trees}))
            top = min(k for k, _, _ in found)
            winners = [f for f in found if keys_equal(aggregator, f[0], top)]
            result = (top, winners[0][1], set().union(*(f[2] for f in winners)))
        memo[sig] = result
        return result

    key, _, trees = best(tuple(leaves(n)))
    return key, trees


# ------------------------------------------------------------------------- 2: search vs brute force


def test_memoized_brute_force_equals_literal_path_enumeration() -> None:
    """The memoized optimum equals the minimum over literally every path (small cases)."""
    for seed, n, labels in [(0, 2, SMALL_LABELS), (1, 2, SMALL_LABELS), (2, 3, ("NP", ROOT_LABEL)),
                            (3, 2, SMALL_LABELS), (4, 3, ("S", ROOT_LABEL))]:
        for make in (child_model, span_model, coarse_model, grandchild_model):
            model = make(seed)
            for aggregator in AGGREGATORS:
                paths = list(all_paths(tuple(leaves(n)), FakeScorer(model, labels)))
                assert 0 < len(paths) < 1000  # the duplicate (span, label) rule keeps the enumeration finite
                keys = [key_of(aggregator, confs) for confs, _ in paths]
                best = min(keys)
                key, trees = optimum(n, model, labels, aggregator)
                assert keys_equal(aggregator, key, best)
                assert trees == {descriptors(root) for (_, root), k in zip(paths, keys)
                                 if keys_equal(aggregator, k, best)}


def test_literal_enumeration_terminates_with_three_phrase_labels() -> None:
    paths = list(all_paths(tuple(leaves(2)), FakeScorer(constant_model(), LABELS)))
    assert len(paths) == 31312  # finite: unary chains cannot repeat a (span, label)
    assert all(complete((root,)) and root.start == 0 and root.end == 2 for _, root in paths)


def check_against_brute_force(n: int, model: Model, labels: Sequence[str], aggregator: str) -> None:
    key, trees = optimum(n, model, labels, aggregator)
    result = search(leaves(n), FakeScorer(model, labels), beam=HUGE, max_pops=HUGE, aggregator=aggregator)
    assert result.item is not None and result.score is not None, result.reason
    assert result.item.label == ROOT_LABEL and (result.item.start, result.item.end) == (0, n)
    # the reported score is the score of the tree returned
    assert keys_equal(aggregator, result.score.key, tree_score(aggregator, result.item, model).key)
    assert keys_equal(aggregator, result.score.key, key), (result.score.key, key, shape(result.item))
    if len(trees) == 1:
        (only,) = trees
        assert descriptors(result.item) == only
        assert labeled_spans(result.item) == frozenset((s, e, label) for s, e, label, _ in only)


@pytest.mark.slow
@settings(max_examples=45, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 4), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([span_model, child_model, coarse_model]))
def test_search_finds_the_brute_force_optimum(seed: int, n: int, aggregator: str,
                                              make: Callable[[int], Model]) -> None:
    """Unbounded beam: the first complete parse popped has the best key of every path."""
    check_against_brute_force(n, make(seed), SMALL_LABELS, aggregator)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([span_model, child_model]))
def test_search_finds_the_optimum_with_three_phrase_labels(seed: int, aggregator: str,
                                                           make: Callable[[int], Model]) -> None:
    check_against_brute_force(2, make(seed), LABELS, aggregator)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 3), aggregator=st.sampled_from(AGGREGATORS))
def test_search_never_beats_the_optimum_with_grandchild_features(seed: int, n: int, aggregator: str) -> None:
    """A model that also sees grandchildren: the result is a real path, never better than the optimum.

    (Not always equal to it: see test_unary_chain_order_is_part_of_the_state.)
    """
    model = grandchild_model(seed)
    key, _ = optimum(n, model, SMALL_LABELS, aggregator)
    result = search(leaves(n), FakeScorer(model, SMALL_LABELS), beam=HUGE, max_pops=HUGE,
                    aggregator=aggregator)
    assert result.item is not None and result.score is not None
    assert keys_equal(aggregator, result.score.key, tree_score(aggregator, result.item, model).key)
    assert result.score.key >= key or keys_equal(aggregator, result.score.key, key)


def bracket(item: Item) -> str:
    """Tags at the leaves, no words: (ROOT (NP (S DT NN)))."""
    if item.is_leaf:
        return item.label
    return f"({item.label} {' '.join(bracket(c) for c in item.children)})"


# Two words "the/DT dog/NN", labels NP, S, ROOT. The confidences below are those of the items named
# (the model sees the children's subtrees, as the real scorer's grandchild features do); every other
# candidate has -3.
#   path A: (NP DT NN) 1.5, (S (NP DT NN)) 1, (ROOT (S (NP DT NN))) -3
#   path B: (S DT NN) 1,    (NP (S DT NN)) 1, (ROOT (NP (S DT NN))) 2    <- the only path without a -3
# After two inferences A and B have built the same (span, label) set {(0,2,NP), (0,2,S)} but different
# frontiers: S over NP versus NP over S. A's state is better so far (sorted (1, 1.5) against (1, 1)),
# so it is popped first and B's state is skipped as "the same state": ROOT over NP(S) is never offered,
# and search returns the best parse without it, (ROOT DT NN) with key (3.0,), instead of B, key
# (-1, -1, -2). (Tie order plays no part.)
DEEP_TABLE = {"(NP DT NN)": 1.5, "(S (NP DT NN))": 1.0, "(S DT NN)": 1.0, "(NP (S DT NN))": 1.0,
              "(ROOT (NP (S DT NN)))": 2.0}
UNARY_OPTIMUM = "(ROOT (NP (S DT NN)))"


def deep_table_model(start: int, end: int, label: str, kids: Sequence[Item]) -> float:
    return DEEP_TABLE.get(f"({label} {' '.join(bracket(k) for k in kids)})", -3.0)


def test_unary_chain_order_example_brute_force() -> None:
    paths = list(all_paths(tuple(leaves(2)), FakeScorer(deep_table_model, SMALL_LABELS)))
    best = min(key_of("maxmin", confidences) for confidences, _ in paths)
    assert best == (-1.0, -1.0, -2.0)
    assert [bracket(root) for confidences, root in paths
            if key_of("maxmin", confidences) == best] == [UNARY_OPTIMUM]


def test_unary_chain_order_is_part_of_the_state() -> None:
    # NP over S and S over NP cover the same spans and labels but are different states (their features
    # differ); merging them once made the search miss this optimum.
    for aggregator in AGGREGATORS:
        result = search(leaves(2), FakeScorer(deep_table_model, SMALL_LABELS), beam=HUGE, max_pops=HUGE,
                        aggregator=aggregator)
        assert result.item is not None and result.score is not None
        assert bracket(result.item) == UNARY_OPTIMUM


# ------------------------------------------------------------------------------------------- 3: ties


def test_all_equal_confidences_return_the_shortest_path_first_offered() -> None:
    # Two words "the/DT dog/NN", labels NP, VP, S, ROOT, every confidence 0.
    # Max-min keys: a path of k inferences has key (-0.0,) * k, so shorter paths rank better (prefix rule).
    # The start state's successors, all with key (-0.0,), are offered in candidate order:
    #   (0,1,NP) (0,1,VP) (0,1,S) (0,2,NP) (0,2,VP) (0,2,S) (0,2,ROOT) (1,2,NP) (1,2,VP) (1,2,S)
    # and popped in that order (their successors, two inferences long, rank behind all of them).
    # The 7th pop, (0,2,ROOT), is the first complete state: ROOT directly over both leaves.
    for aggregator in AGGREGATORS:
        results = [search(leaves(2), FakeScorer(constant_model(0.0)), beam=HUGE, max_pops=HUGE,
                          aggregator=aggregator) for _ in range(2)]
        for result in results:
            assert result.item is not None and result.score is not None
            assert shape(result.item) == (ROOT_LABEL, (("DT", 0), ("NN", 1)))
            assert result.pops == 7
            assert result.score.confidences == (0.0,)
        assert results[0].score == results[1].score


def test_all_equal_confidences_with_beam_one_take_the_first_candidate() -> None:
    # Beam 1 keeps the popped state's first successor (all equal), i.e. its first candidate in order:
    #   [DT NN]                  -> first candidate (0,1,NP):  [NP(DT) NN]
    #   [NP(DT) NN]              -> (0,1,NP) is blocked (NP on the chain): (0,1,VP)   [VP(NP(DT)) NN]
    #   [VP(NP(DT)) NN]          -> (0,1,S)                    [S(VP(NP(DT))) NN]
    #   [S(VP(NP(DT))) NN]       -> (0,1,*) all blocked, ROOT not whole: (0,2,NP)      [NP(S NN)]
    #   [NP(S NN)]               -> (0,1,VP)                   [VP(NP(..))]
    #   [VP(NP(..))]             -> (0,1,S)                    [S(VP(NP(..)))]
    #   [S(VP(NP(..)))]          -> NP, VP, S blocked: (0,1,ROOT)
    inner = ("S", (("VP", (("NP", (("DT", 0),)),)),))
    expected = (ROOT_LABEL, (("S", (("VP", (("NP", (inner, ("NN", 1))),)),)),))
    results = [search(leaves(2), FakeScorer(constant_model(0.0)), beam=1) for _ in range(2)]
    for result in results:
        assert result.item is not None and result.score is not None
        assert shape(result.item) == expected
        assert result.pops == 7 and result.score.confidences == (0.0,) * 7
    assert shape(results[0].item) == shape(results[1].item)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- 4: greedy = beam 1


def greedy(frontier: Sequence[Item], scorer: FakeScorer) -> tuple[Item, list[float]]:
    """Take the most confident candidate (first in candidate order among equals) until ROOT is built."""
    state = tuple(frontier)
    confidences: list[float] = []
    while not complete(state):
        scored = scorer.candidates(state)
        first, end, label, confidence = scored[0]
        for candidate in scored[1:]:
            if candidate[3] > confidence:
                first, end, label, confidence = candidate
        state = state[:first] + (build(label, state[first:end]),) + state[end:]
        confidences.append(confidence)
    return state[0], confidences


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([child_model, span_model, coarse_model]))
def test_beam_one_is_greedy(seed: int, n: int, aggregator: str, make: Callable[[int], Model]) -> None:
    model = make(seed)
    item, confidences = greedy(leaves(n), FakeScorer(model))
    result = search(leaves(n), FakeScorer(model), beam=1, aggregator=aggregator)
    assert result.item is not None and result.score is not None
    assert shape(result.item) == shape(item)
    assert result.pops == len(confidences)
    assert result.score.confidences == tuple(sorted(confidences))
    assert keys_equal(aggregator, result.score.key, key_of(aggregator, confidences))


# ------------------------------------------------------------------------ 5: giving up, fallback


def test_pop_cap_completes_greedily_from_the_last_popped_state() -> None:
    # ROOT over both words is the least confident candidate: the first pop is not complete.
    model = table_model({(0, 2, ROOT_LABEL, ("DT", "NN")): -2.0}, 1.0)
    result = search(leaves(2), FakeScorer(model), max_pops=1)
    assert result.completed and result.pops == 1
    assert result.reason == "no complete parse within 1 popped states: completed greedily"
    # the one popped state is the first candidate (all ties at 1.0); greedy goes on from it
    first = build("NP", leaves(2)[:1])
    item, confidences = greedy((first, leaves(2)[1]), FakeScorer(model))
    assert result.item is not None and result.score is not None
    assert shape(result.item) == shape(item)
    assert result.score.confidences == tuple(sorted([1.0, *confidences]))
    # with room to pop, the same sentence parses without the greedy completion
    assert not search(leaves(2), FakeScorer(model), max_pops=100).completed


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4), cap=st.integers(1, 6))
def test_pop_cap_always_ends_in_a_parse(seed: int, n: int, cap: int) -> None:
    result = search(leaves(n), FakeScorer(child_model(seed)), beam=50, max_pops=cap)
    assert result.item is not None and result.item.label == ROOT_LABEL
    assert (result.item.start, result.item.end) == (0, n)
    assert result.pops <= cap and (not result.completed or result.pops == cap)


def test_no_candidate_at_all_falls_back_to_a_flat_tree() -> None:
    # Only ROOT as a label and K = 1: two words can never be joined, so no parse exists.
    result = search(leaves(2), FakeScorer(constant_model(), labels=(ROOT_LABEL,), max_children=1))
    assert result.item is None and result.score is None
    assert "no parse can be completed" in result.reason
    # what Parser.parse_tagged returns instead
    tagged = WORDS[:2]
    tree = flat_tree(tagged)
    assert tree.label == ROOT_LABEL
    assert tree.tagged_words() == tagged
    assert all(child.is_preterminal for child in tree.children)
    assert tree.labeled_spans() == [(0, 2, ROOT_LABEL)]


def test_max_pops_one_suffices_when_root_is_the_best_first_inference() -> None:
    model = table_model({(0, 1, ROOT_LABEL, ("DT",)): 2.0}, 1.0)
    result = search(leaves(1), FakeScorer(model), max_pops=1)
    assert result.item is not None and shape(result.item) == (ROOT_LABEL, (("DT", 0),))
    assert result.pops == 1


@pytest.mark.parametrize("aggregator", AGGREGATORS)
def test_a_complete_start_state_needs_no_pops(aggregator: str) -> None:
    root = build(ROOT_LABEL, leaves(2))
    result = search([root], FakeScorer(constant_model()), aggregator=aggregator)
    assert result.item is root and result.pops == 0 and result.score == empty(aggregator)


def test_the_default_aggregator_is_the_summed_loss() -> None:
    root = build(ROOT_LABEL, leaves(2))
    assert search([root], FakeScorer(constant_model())).score == empty("sum")


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(ValueError):
        search(leaves(2), FakeScorer(constant_model()), beam=0)
    with pytest.raises(ValueError):
        search(leaves(2), FakeScorer(constant_model()), max_pops=0)
    with pytest.raises(ValueError):
        search(leaves(2), FakeScorer(constant_model()), aggregator="product")


# ------------------------------------------------------------------------------ 6: restore_tokens

PHRASES = ["S", "NP", "VP", "PP"]


@st.composite
def bracketing(draw: st.DrawFn, leaves_: list[Tree]) -> list[Tree]:
    """A random forest of phrases over ``leaves_`` (consecutive groups, each possibly bracketed further)."""
    if len(leaves_) == 1 and draw(st.booleans()):
        return leaves_
    cuts = sorted(draw(st.sets(st.integers(1, len(leaves_) - 1), max_size=3))) if len(leaves_) > 1 else []
    groups = [leaves_[i:j] for i, j in zip([0, *cuts], [*cuts, len(leaves_)])]
    out: list[Tree] = []
    for group in groups:
        if len(groups) == 1:  # no progress: bracket the whole group once
            out.append(Tree(draw(st.sampled_from(PHRASES)), list(group)))
        elif draw(st.booleans()):
            out.append(Tree(draw(st.sampled_from(PHRASES)), draw(bracketing(group))))
        else:
            out.extend(group if len(group) == 1 else [Tree(draw(st.sampled_from(PHRASES)), list(group))])
    return out


@st.composite
def restore_inputs(draw: st.DrawFn) -> tuple[Tree, list[int], list[RemovedToken], list[tuple[str, str]]]:
    total = draw(st.integers(1, 9))
    removed_at = draw(st.sets(st.integers(0, total - 1), max_size=total - 1))
    kept = [i for i in range(total) if i not in removed_at]
    original = [(f"w{i}", f"T{i}") for i in range(total)]
    tree_leaves = [Tree.preterminal(original[i][1], original[i][0]) for i in kept]
    body = draw(bracketing(tree_leaves))
    tree = Tree(ROOT_LABEL, body)
    steps = st.sampled_from(["remove_quotation_marks", "remove_outermost_punctuation"])
    removed = [RemovedToken(i, original[i][0], original[i][1], draw(steps)) for i in sorted(removed_at)]
    return tree, kept, draw(st.permutations(removed)), original


def phrase_labels(tree: Tree) -> Counter[str]:
    return Counter(p.label for p in tree.phrases())


def without_leaves(tree: Tree, words: set[str]) -> Tree:
    if tree.is_preterminal:
        return tree
    return Tree(tree.label, [without_leaves(c, words) for c in tree.children
                             if not (c.is_preterminal and c.word in words)])


@settings(max_examples=200, deadline=None)
@given(restore_inputs())
def test_restore_tokens_puts_every_token_back_in_order(
        case: tuple[Tree, list[int], list[RemovedToken], list[tuple[str, str]]]) -> None:
    tree, kept, removed, original = case
    before = tree.copy()
    result = restore_tokens(tree, kept, removed)
    assert tree == before  # the input is not modified
    assert result.label == ROOT_LABEL
    assert result.tagged_words() == original
    assert phrase_labels(result) == phrase_labels(tree)
    # taking the restored tokens out again gives back the input tree: no phrase lost, added or reshaped
    assert without_leaves(result, {t.word for t in removed}) == tree
    assert all(not hasattr(node, "_index")
               for node in itertools.chain(result.phrases(), result.preterminals()))


def test_restore_tokens_examples() -> None:
    # `` the dog barks . ''  with the quotes and the period set aside
    tree = Tree(ROOT_LABEL, [Tree("S", [Tree("NP", [Tree.preterminal("DT", "the"),
                                                    Tree.preterminal("NN", "dog")]),
                                        Tree("VP", [Tree.preterminal("VBZ", "barks")])])])
    removed = [RemovedToken(0, "``", "``", "remove_quotation_marks"),
               RemovedToken(4, ".", ".", "remove_outermost_punctuation"),
               RemovedToken(5, "''", "''", "remove_quotation_marks")]
    result = restore_tokens(tree, [1, 2, 3], removed)
    assert str(result) == "(ROOT (S (`` ``) (NP (DT the) (NN dog)) (VP (VBZ barks)) (. .) ('' '')))"
    # a token between two words of one phrase goes into the lowest phrase with material on both sides
    result = restore_tokens(tree, [0, 2, 3], [RemovedToken(1, ",", ",", "x")])
    assert str(result) == "(ROOT (S (NP (DT the) (, ,) (NN dog)) (VP (VBZ barks))))"
    assert restore_tokens(tree, [0, 1, 2], []) is tree


# ----------------------------------------------------------------------------------- 7: aggregates


def test_maxmin_key_examples() -> None:
    def key(*confidences: float) -> tuple[float, ...]:
        return path_score("maxmin", confidences).key

    assert key(0.5) < key(0.2)  # higher minimum is better
    assert key(0.5, 0.7) < key(0.5, 0.6)  # equal minima: the second lowest decides
    assert key(0.7, 0.5) == key(0.5, 0.7) == (-0.5, -0.7)  # order of inferences does not matter
    assert key(0.5) < key(0.5, 0.9)  # a proper prefix ranks better than its extension
    assert key(0.5, 0.6) < key(0.5, 0.6, 3.0)
    assert key(0.5, 0.6, 3.0) < key(0.5, 0.6, 0.7)  # not a prefix of each other: 3.0 > 0.7 decides
    assert key(-1.0) > key(0.5, 0.6, 0.7)  # the minimum decides before length
    assert key() < key(0.5) and empty("maxmin").key == ()
    assert path_score("maxmin", [0.7, -0.1, 0.3]).confidences == (-0.1, 0.3, 0.7)


def test_sum_key_examples() -> None:
    assert empty("sum").key == (0.0,)
    score = path_score("sum", [0.0, 2.0])
    assert score.key[0] == pytest.approx(math.log(2) + math.log1p(math.exp(-2.0)))
    assert path_score("sum", [1.0]).key < path_score("sum", [0.5]).key
    assert logistic_loss(-1000.0) == pytest.approx(1000.0)  # no overflow
    assert logistic_loss(1000.0) == pytest.approx(0.0, abs=1e-300)
    for z in [-29.0, -30.0, -31.0, -3.0, 0.0, 3.0]:
        assert logistic_loss(z) == pytest.approx(math.log1p(math.exp(-z)))


def test_unknown_aggregator() -> None:
    with pytest.raises(ValueError):
        empty("product")


confidence = st.floats(-5, 5, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(confidences=st.lists(confidence, max_size=8), new=confidence, aggregator=st.sampled_from(AGGREGATORS))
def test_extend_never_improves_the_key(confidences: list[float], new: float, aggregator: str) -> None:
    old = path_score(aggregator, confidences)
    assert extend(aggregator, old, new).key >= old.key
    assert old.confidences == tuple(sorted(confidences))
    assert keys_equal(aggregator, old.key, key_of(aggregator, confidences))


@settings(max_examples=300, deadline=None)
@given(a=st.lists(confidence, max_size=5), b=st.lists(confidence, max_size=5),
       c=st.lists(confidence, max_size=5))
def test_maxmin_order_is_compatible_with_adding_inferences(a: list[float], b: list[float],
                                                           c: list[float]) -> None:
    """What the brute force relies on: if A is no worse than B, A + C is no worse than B + C."""
    ka, kb = key_of("maxmin", a), key_of("maxmin", b)
    kac, kbc = key_of("maxmin", a + c), key_of("maxmin", b + c)
    if ka < kb:
        assert kac < kbc
    elif ka == kb:
        assert kac == kbc


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0]) | st.floats(-5, 5), max_size=400))
def test_partial_ranking_is_exactly_the_stable_sort(values: list[float]) -> None:
    import numpy as np

    from clparse.search.best_first import _stable_descending

    confidence = np.array(values, dtype=np.float64)
    assert list(_stable_descending(confidence)) == np.argsort(-confidence, kind="stable").tolist()


# ------------------------------------------------------------- 6: the greedy incumbent (issue #13)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 4), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([child_model, span_model, coarse_model, grandchild_model]),
       beam=st.sampled_from([2, 3, 10, HUGE]), max_pops=st.sampled_from([1, 2, 5, 500]))
def test_the_incumbent_is_never_worse_than_greedy_and_changes_nothing_else(
        seed: int, n: int, aggregator: str, make: Callable[[int], Model], beam: int, max_pops: int) -> None:
    """With the incumbent the result is never worse than the greedy parse (even at a pop cap of 1);
    where the search without it ended normally in a parse at least as good as greedy's, the result is
    that same parse. Pops stop at 500: with no cap and an unbounded beam the search without the incumbent
    is exhaustive over every label, which some seeds make minutes long even at 3 leaves (e.g. span_model(3),
    maxmin), while at most 500 pops every case ends in well under a second."""
    model = make(seed)
    _, confidences = greedy(leaves(n), FakeScorer(model))
    greedy_key = key_of(aggregator, confidences)
    with_it = search(leaves(n), FakeScorer(model), beam=beam, max_pops=max_pops, aggregator=aggregator)
    without = search(leaves(n), FakeScorer(model), beam=beam, max_pops=max_pops, aggregator=aggregator,
                     incumbent=False)
    assert with_it.item is not None and with_it.score is not None
    assert with_it.score.key <= greedy_key or keys_equal(aggregator, with_it.score.key, greedy_key)
    assert keys_equal(aggregator, with_it.score.key, tree_score(aggregator, with_it.item, model).key)
    assert without.score is not None
    if not without.completed and (without.score.key <= greedy_key or keys_equal(aggregator, without.score.key,
                                                                                 greedy_key)):
        assert shape(with_it.item) == shape(without.item)  # type: ignore[arg-type]
        assert with_it.score.key == without.score.key


@pytest.mark.parametrize("aggregator", AGGREGATORS)
def test_at_the_pop_cap_the_greedy_parse_wins_when_the_completion_is_worse(aggregator: str) -> None:
    """Models (seeded) where completing the last popped state greedily is worse than parsing greedily
    from the start: the search now returns the greedy parse there, and says so."""
    won = 0
    for seed in range(300):
        model = coarse_model(seed)
        _, confidences = greedy(leaves(4), FakeScorer(model))
        greedy_key = key_of(aggregator, confidences)
        without = search(leaves(4), FakeScorer(model), max_pops=3, incumbent=False, aggregator=aggregator)
        assert without.score is not None
        if not (without.completed and without.score.key > greedy_key
                and not keys_equal(aggregator, without.score.key, greedy_key)):
            continue
        result = search(leaves(4), FakeScorer(model), max_pops=3, aggregator=aggregator)
        assert result.score is not None and keys_equal(aggregator, result.score.key, greedy_key)
        assert result.completed and "the greedy parse" in result.reason
        won += 1
    assert won >= 5, won  # the situation is common enough to be tested here
