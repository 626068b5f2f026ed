"""The gold-only search (clparse/search/gold.py) on the bundled sample's trained model.

(a) On short sentences its best score is the brute-force best over every bottom-up order of building
    the gold tree (enumerated with the training oracle, clparse.features.state.Oracle, not with the
    scorer's filter), under the same max-min aggregate: through ``search`` itself and through the
    bounded best-first of the diagnosis.
(b) It returns exactly the gold tree; it offers only the oracle's correct candidates; the diagnosis
    parses exactly as ``Parser.parse_tagged`` does.
(c) The classification, forced: a deliberately bad returned score is a search error, a deliberately
    good one a model error, a pop cap too small to decide is undecided, a node wider than K unreachable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.data import sample_path
from clparse.features.state import Oracle, leaf_items
from clparse.parser import Parser
from clparse.preprocess.pipeline import preprocess_tree
from clparse.read import Tree, parse_tree, read_trees
from clparse.search import CandidateScorer
from clparse.search.aggregate import Score, empty, extend
from clparse.diagnose import diagnose
from clparse.search.gold import (
    GoldBest,
    GoldScorer,
    WindowCeiling,
    classify,
    gold_best_first,
    gold_depth_first,
    gold_search,
    item_structure,
    tree_structure,
)


@pytest.fixture(scope="module")
def parser(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=3.0, beam=1000)


def prepared(parser: Parser, tree: Tree) -> tuple[Tree, list] | None:
    """The gold tree as training saw it, and the search's leaves over the same words (None: differ)."""
    tagged = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
    flat = preprocess_tree(Tree("S", [Tree.preterminal(t, w) for w, t in tagged]), parser.preprocess)
    gold = preprocess_tree(tree, parser.preprocess)
    if flat is None or gold is None:
        return None
    removed = {token.index for token in flat.removed}
    kept = [tagged[i] for i in range(len(tagged)) if i not in removed]
    if gold.tree.tagged_words() != kept:
        return None
    return gold.tree, leaf_items(kept, parser.model.vocabulary.normalize)


def sample_trees() -> list[Tree]:
    return list(read_trees(sample_path("dev"))) + list(read_trees(sample_path("train")))


def reachable(parser: Parser, max_phrases: int, max_words: int, limit: int) -> list[tuple[Tree, list]]:
    """Sample sentences whose gold tree can be built, with at most ``max_phrases`` phrases."""
    found = []
    for tree in sample_trees():
        got = prepared(parser, tree)
        if got is None:
            continue
        gold, leaves = got
        phrases = sum(1 for _ in gold.phrases())
        if len(leaves) > max_words or phrases > max_phrases:
            continue
        if GoldScorer(CandidateScorer(parser.model), gold).problems:
            continue
        found.append((gold, leaves))
        if len(found) == limit:
            break
    return found


def brute_force(parser: Parser, gold: Tree, leaves: list,
                highest: dict | None = None) -> tuple[float, ...] | None:
    """The best key over every order of building ``gold`` (orders replayed with the training oracle).

    ``highest``, if given, receives each constituent's highest confidence over every order.
    """
    scorer = CandidateScorer(parser.model)
    aggregator = parser.options.aggregator
    best: list[tuple[float, ...]] = []
    highest = {} if highest is None else highest

    def walk(order: list[int], score: Score) -> None:
        oracle = Oracle(gold, list(leaves))
        for index in order:
            oracle.apply(index)
        if oracle.finished():
            best.append(score.key)
            return
        found = scorer.candidates(oracle.frontier)
        confidence = {(int(f), int(e), found.labels[label]): float(c)
                      for f, e, label, c in zip(found.first, found.end, found.label, found.confidence)}
        for index in oracle.buildable():
            key = oracle.key(index)
            if key in confidence:  # else a candidate constraint excludes this order
                node = oracle.phrases[index - oracle.n_words]
                span = (node.start, node.end, node.label)
                highest[span] = max(highest.get(span, confidence[key]), confidence[key])
                walk(order + [index], extend(aggregator, score, confidence[key]))

    walk([], empty(aggregator))
    return min(best) if best else None


# ---------------------------------------------------------------------------- (a) brute force


def test_gold_search_best_equals_brute_force(parser: Parser) -> None:
    cases = reachable(parser, max_phrases=7, max_words=10, limit=8)
    assert len(cases) >= 4
    assert any(sum(1 for _ in gold.phrases()) >= 5 for gold, _ in cases)  # several orders to choose from
    for gold, leaves in cases:
        expected = brute_force(parser, gold, leaves)
        assert expected is not None
        found = gold_search(leaves, CandidateScorer(parser.model), gold, incumbent=False)
        assert found.exact and found.result is not None and found.result.score is not None
        assert found.result.score.key == expected
        with_incumbent = gold_search(leaves, CandidateScorer(parser.model), gold, incumbent=True)
        assert with_incumbent.result is not None and with_incumbent.result.score is not None
        assert with_incumbent.result.score.key == expected
        best = gold_best_first(leaves, GoldScorer(CandidateScorer(parser.model), gold))
        assert best.status == "best" and best.score is not None and best.score.key == expected
        assert best.item is not None and item_structure(best.item) == tree_structure(gold)


# -------------------------------------------------------------------- (b) exactly the gold tree


def test_gold_search_returns_the_gold_tree(parser: Parser) -> None:
    cases = reachable(parser, max_phrases=40, max_words=25, limit=15)
    assert len(cases) >= 8
    for gold, leaves in cases:
        found = gold_search(leaves, CandidateScorer(parser.model), gold, beam=1000, max_pops=2000)
        assert found.result is not None and found.result.item is not None
        assert item_structure(found.result.item) == tree_structure(gold)


def test_gold_scorer_offers_only_the_oracles_candidates(parser: Parser) -> None:
    for gold, leaves in reachable(parser, max_phrases=40, max_words=25, limit=10):
        oracle = Oracle(gold, list(leaves))
        inner = CandidateScorer(parser.model)
        scorer = GoldScorer(inner, gold)
        while not oracle.finished():
            offered = scorer.candidates(oracle.frontier)
            keys = {(int(f), int(e), offered.labels[label]) for f, e, label in
                    zip(offered.first, offered.end, offered.label)}
            assert keys == oracle.correct_keys()
            everything = inner.candidates(oracle.frontier)
            for f, e, label, c in zip(offered.first, offered.end, offered.label, offered.confidence):
                same = (everything.first == f) & (everything.end == e) & (everything.label == label)
                assert everything.confidence[same].tolist() == [c]  # the wrapped scorer's confidence
            oracle.apply(oracle.buildable()[0])


def test_diagnosis_parses_as_the_parser_does(parser: Parser) -> None:
    for tree in list(read_trees(sample_path("dev")))[:12]:
        tagged = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
        if len(tagged) > 30:
            continue
        found = diagnose(parser, tree)
        assert str(found.tree) == str(parser.parse_tagged(tagged).tree)
        assert found.outcome in ("correct", "search", "model", "undecided", "unreachable")
        if found.outcome == "correct":
            assert found.evalb.complete_match


# ------------------------------------------------------------------- (c) forced classification


def test_forced_search_and_model_errors(parser: Parser) -> None:
    gold, leaves = reachable(parser, max_phrases=7, max_words=10, limit=1)[0]
    best = gold_best_first(leaves, GoldScorer(CandidateScorer(parser.model), gold))
    assert best.status == "best" and best.score is not None
    bad = Score((-1000.0,), (1000.0,))  # a returned path with an inference of confidence -1000
    good = Score((1000.0,) * 3, (-1000.0,) * 3)  # every inference +1000: no gold order can beat it
    assert classify(False, bad, best) == "search"
    assert classify(False, good, best) == "model"
    assert classify(True, bad, best) == "correct"  # every bracket right: correct, whatever the scores
    assert classify(False, best.score, best) == "model"  # a tie is not a search error
    assert classify(False, None, best) == "search"  # a flat fallback where the gold tree can be built
    assert classify(False, bad, None) == "unreachable"

    # The bounded search decides the same without finding the gold tree's best.
    scorer = GoldScorer(CandidateScorer(parser.model), gold)
    below = gold_best_first(leaves, scorer, bound=bad.key)
    assert below.status == "best" and below.score == best.score
    assert classify(False, bad, below) == "search"
    above = gold_best_first(leaves, GoldScorer(CandidateScorer(parser.model), gold), bound=good.key)
    assert above.status == "bound" and above.floor is not None and above.floor >= good.key
    assert classify(False, good, above) == "model"

    # A pop cap that stops before either: undecided, unless the floor or the greedy order decides.
    capped = gold_best_first(leaves, GoldScorer(CandidateScorer(parser.model), gold), max_pops=1,
                             bound=bad.key)
    assert capped.status == "cap"
    assert classify(False, bad, capped) == "undecided"
    assert classify(False, bad, capped, greedy=best.score) == "search"
    assert classify(False, bad, GoldBest("cap", floor=(1001.0,))) == "model"


def test_depth_first_dive_decides_as_brute_force(parser: Parser) -> None:
    for gold, leaves in reachable(parser, max_phrases=7, max_words=10, limit=6):
        expected = brute_force(parser, gold, leaves)
        assert expected is not None
        worse = tuple(x + 1e-6 for x in expected)  # just above the best key: an order beats it
        dive = gold_depth_first(leaves, GoldScorer(CandidateScorer(parser.model), gold), worse)
        assert dive.status == "found" and dive.score is not None and dive.score.key < worse
        assert dive.item is not None and item_structure(dive.item) == tree_structure(gold)
        exhausted = gold_depth_first(leaves, GoldScorer(CandidateScorer(parser.model), gold), expected)
        assert exhausted.status == "bound"  # nothing strictly below the best: proven
        assert classify(False, Score((), expected), exhausted) == "model"
        capped = gold_depth_first(leaves, GoldScorer(CandidateScorer(parser.model), gold), worse, max_pops=1)
        assert capped.status == "cap"


def test_window_ceiling_is_the_highest_confidence_over_every_order(parser: Parser) -> None:
    for gold, leaves in reachable(parser, max_phrases=7, max_words=10, limit=6):
        highest: dict = {}
        brute_force(parser, gold, leaves, highest)
        ceiling = WindowCeiling(leaves, GoldScorer(CandidateScorer(parser.model), gold))
        for key, confidence in highest.items():
            assert ceiling.ceiling(key) == pytest.approx(confidence, abs=1e-12), key


def test_gold_unreachable_wider_than_k(parser: Parser) -> None:
    k = parser.model.max_children
    words = [("the", "DT")] + [("big", "JJ")] * k + [("dog", "NN")]
    wide = parse_tree("(ROOT (NP " + " ".join(f"({t} {w})" for w, t in words) + "))")
    gold = preprocess_tree(wide, parser.preprocess)
    assert gold is not None
    leaves = leaf_items(gold.tree.tagged_words(), parser.model.vocabulary.normalize)
    found = gold_search(leaves, CandidateScorer(parser.model), gold.tree)
    assert found.result is None and f"K = {k}" in found.problem
    diagnosis = diagnose(parser, wide)
    assert diagnosis.outcome == "unreachable" and diagnosis.gold is None
