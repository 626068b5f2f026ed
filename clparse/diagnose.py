"""Search errors against model errors, one dev sentence at a time (the length diagnosis's core).

:func:`diagnose` parses a tagged gold sentence as :meth:`clparse.parser.Parser.parse_tagged` does
and decides with :mod:`clparse.search.gold` whether some order of building the gold tree scores better
than the parse the search returned. It sits above the parser (it takes one), beside calibration;
``benchmarks/length_diagnosis.py`` runs it over a dev set.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from clparse.evaluate import EvalbParams, SentenceResult, evaluate_sentence
from clparse.features.state import leaf_items
from clparse.parser import Parser
from clparse.preprocess.pipeline import ROOT_LABEL, preprocess_tagged, preprocess_tree
from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG
from clparse.read.tree import Tree
from clparse.search.aggregate import Score
from clparse.search.best_first import SearchResult, search
from clparse.search.gold import (
    OUTCOMES,
    GoldBest,
    GoldScorer,
    classify,
    gold_best_first,
    gold_depth_first,
    greedy_gold,
    window_proof,
)
from clparse.search.restore import flat_tree, item_tree, restore_tokens
from clparse.search.scorer import CandidateScorer

__all__ = ["OUTCOMES", "Diagnosis", "diagnose"]


@dataclass
class Diagnosis:
    tree: Tree  # the parse, as Parser.parse_tagged returns it
    evalb: SentenceResult  # the parse against the gold tree as read
    outcome: str  # one of OUTCOMES
    returned: SearchResult | None  # None: a flat fallback before any search
    gold: GoldBest | None  # None: the gold tree cannot be built (``problem`` says why)
    greedy: Score | None = None  # the greedy order of building the gold tree
    dive: str = ""  # the depth-first search's status, if the best-first one reached its cap
    ceiling: str = ""  # the constituent whose highest confidence in any window proved a model error
    problem: str = ""
    fallback: str | None = None
    words: int = 0  # words the search saw (after preprocessing)
    parse_seconds: float = 0.0
    gold_seconds: float = 0.0

    @property
    def pop_cap(self) -> bool:
        """The parse reached the pop cap and was completed greedily."""
        found = self.returned
        return found is not None and found.completed and "popped states" in found.reason


def diagnose(parser: Parser, gold: Tree, *, gold_max_pops: int = 10_000, gold_max_windows: int = 20_000,
             params: EvalbParams = EvalbParams()) -> Diagnosis:
    """Parse the gold tree's tagged words as ``parser.parse_tagged`` does, then decide: search or model.

    The parse is made by the same steps as :meth:`~clparse.parser.Parser.parse_tagged` (kept here to
    keep the search's result and score); the tests check that the trees are the same. The gold tree is
    the dev tree preprocessed with the parser's (the run's) settings, over the same leaves.
    """
    options = parser.options
    tagged = [(w, t) for w, t in gold.tagged_words() if t != EMPTY_ELEMENT_TAG]
    clock = time.perf_counter()
    found = Diagnosis(Tree(ROOT_LABEL, []), SentenceResult(0, 0, "skip"), "unreachable", None, None)

    def finish(tree: Tree, fallback: str | None) -> Diagnosis:
        found.tree, found.fallback = tree, fallback
        found.evalb = evaluate_sentence(0, gold, tree, params)
        score = found.returned.score if found.returned is not None else None
        found.outcome = classify(found.evalb.complete_match, score, found.gold, found.greedy)
        return found

    if not tagged:
        found.problem = "empty sentence"
        return finish(Tree(ROOT_LABEL, []), "empty sentence")
    if options.max_words and len(tagged) > options.max_words:
        found.problem = "no search"
        return finish(flat_tree(tagged), f"longer than {options.max_words} tokens")
    prepared = preprocess_tagged(tagged, parser.preprocess)
    if prepared is None:
        found.problem = "no search"
        return finish(flat_tree(tagged), "nothing left after preprocessing")
    removed = {token.index for token in prepared.removed}
    kept = [i for i in range(len(tagged)) if i not in removed]
    kept_tagged = [tagged[i] for i in kept]
    leaves = leaf_items(kept_tagged, parser.model.vocabulary.normalize)
    found.words = len(leaves)
    result = found.returned = search(leaves, CandidateScorer(parser.model), beam=options.beam,
                                     max_pops=options.max_pops, aggregator=options.aggregator)
    found.parse_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    gold_prepared = preprocess_tree(gold, parser.preprocess)
    if gold_prepared is None:
        found.problem = "nothing left of the gold tree after preprocessing"
    elif gold_prepared.tree.tagged_words() != kept_tagged:
        found.problem = "preprocessing keeps other tokens from the gold tree than from its words"
    else:
        scorer = GoldScorer(CandidateScorer(parser.model), gold_prepared.tree)
        found.problem = "; ".join(scorer.problems)
        if not scorer.problems:
            found.greedy, confidences = greedy_gold(leaves, scorer, options.aggregator)
            bound = result.score.key if result.score is not None else None
            if found.greedy is not None and bound is not None and found.greedy.key < bound:
                found.gold = GoldBest("found", None, found.greedy)
            else:
                if bound and options.aggregator == "maxmin":
                    found.ceiling = window_proof(leaves, scorer, confidences, -bound[0], gold_max_windows)
                if found.ceiling:
                    found.gold = GoldBest("bound")
                else:
                    found.gold = gold_best_first(leaves, scorer, aggregator=options.aggregator,
                                                 max_pops=gold_max_pops, bound=bound)
                if found.gold.status == "cap" and bound is not None:  # dive for an order below the bound
                    dive = gold_depth_first(leaves, scorer, bound, aggregator=options.aggregator,
                                            max_pops=gold_max_pops)
                    found.dive = dive.status
                    if dive.status != "cap":
                        found.gold = GoldBest(dive.status, dive.item, dive.score, found.gold.floor,
                                              found.gold.pops + dive.pops)
            if found.gold.status == "unreachable":
                found.problem = "a candidate constraint excludes a gold constituent"
    found.gold_seconds = time.perf_counter() - clock
    if result.item is None:
        return finish(flat_tree(tagged), result.reason)
    return finish(restore_tokens(item_tree(result.item, [w for w, _ in kept_tagged]), kept, prepared.removed),
                  None)
