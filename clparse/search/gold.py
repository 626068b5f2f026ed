"""The gold tree's best score under the model: search errors against model errors.

:class:`GoldScorer` wraps a scorer so that a state's only candidates are those that build a gold
constituent over exactly its gold children: ``search(leaves, GoldScorer(CandidateScorer(model), gold),
...)`` then finds the best-scoring bottom-up order of building the gold tree, under the same
aggregate (and the same confidences: they are the wrapped scorer's, filtered, never recomputed).

A constituent is matched by its word span and label, ``(start, end, label)``, and its children by
theirs, in order (a leaf's label is its tag): an :class:`~clparse.features.state.Item` spans words
``item.start .. item.end`` of the sentence as the parser sees it (after preprocessing), so the gold
tree must be preprocessed as training saw it (:func:`~clparse.preprocess.pipeline.preprocess_tree`
with the run's :class:`~clparse.preprocess.pipeline.PreprocessConfig`) over the same leaves. Every item
a gold-only search builds is a gold constituent, and the search never builds a ``(span, label)`` twice
in a unary chain, so ``(start, end, label)`` names one gold node; a gold tree that repeats one (``X →
Y → X`` over one span) cannot be built at all.

:func:`clparse.diagnose.diagnose` parses one tagged gold sentence as
:meth:`clparse.parser.Parser.parse_tagged` does (the same tree, and the returned path's score
``R``), then decides whether some order of building the
gold tree scores strictly better than ``R`` (a smaller key, :mod:`clparse.search.aggregate`): first the
greedy gold order (any order's score is an upper bound on the gold tree's best key), then
:func:`gold_best_first`, a best-first search over the gold states with an unbounded agenda that stops
at ``R``, and if that reaches its pop cap, :func:`gold_depth_first`, a dive for any order below ``R``
(pruned at ``R``: it also proves a model error when it runs out of states). The sentence is then:

* ``correct``: the parse matches every gold bracket (EVALB F1 100 on the sentence);
* ``search``: a search error: an order of building the gold tree scores strictly better than the path
  the search returned, so the model preferred the gold tree and the search did not find it;
* ``model``: a model error: no order of building the gold tree scores better than the returned parse
  (ties included: the model does not prefer the gold tree). Proven: the best-first search popped a
  state whose key reached ``R``, so every order's key is at least ``R``; or the dive expanded every
  state below ``R`` without completing one; or a gold constituent scores below the parse's lowest
  confidence in every window it can be built in (:class:`WindowCeiling`);
* ``undecided``: both gold searches reached their pop caps, every state popped so far better than
  ``R`` and no complete order found below it. Every order scores at least the last popped key (a
  lower bound that did not reach ``R``), and the greedy order at most its own key (an upper bound that
  did not beat ``R``): a better order may lie past the cap;
* ``unreachable``: no order of candidates builds the gold tree (a node with more than K children, a
  label the model lacks, a candidate constraint that excludes it, a repeated ``(span, label)``, or
  preprocessing that keeps other tokens from the gold tree than from its words).

A flat fallback (the search found no parse at all) is a search error when the gold tree can be built.
:func:`gold_search` runs :func:`~clparse.search.best_first.search` itself over the gold candidates:
with a beam it is exact only when it ends before its pop cap with fewer candidates offered than the
beam; at the cap the score it returns is still one real order's (an upper bound on the best key: still
proof of a search error when it beats ``R``).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from clparse.features.state import Item, build, interner, replaced
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.read.tree import Tree
from clparse.search.aggregate import DEFAULT_AGGREGATOR, Score, empty, extend
from clparse.search.best_first import SearchResult, ranked, search
from clparse.search.scorer import CandidateArrays, CandidateScorer

Key = tuple[int, int, str]  # word start, word end, label (a leaf's label is its tag)

OUTCOMES = ("correct", "search", "model", "undecided", "unreachable")


def gold_constituents(tree: Tree) -> tuple[dict[Key, tuple[Key, ...]], list[str]]:
    """Every phrase of a preprocessed tree (ROOT included) as ``key -> its children's keys``.

    Also the reasons the tree cannot be a search's output whatever the confidences: a repeated key
    (the search never builds one twice).
    """
    phrases: dict[Key, tuple[Key, ...]] = {}
    problems: list[str] = []
    position = 0

    def walk(node: Tree) -> Key:
        nonlocal position
        if node.is_preterminal:
            position += 1
            return (position - 1, position, node.label)
        children = tuple(walk(child) for child in node.children)
        key = (children[0][0], children[-1][1], node.label)
        if key in phrases:
            problems.append(f"{node.label} over words {key[0]}-{key[1]} twice in a unary chain")
        phrases[key] = children
        return key

    walk(tree)
    return phrases, problems


def item_structure(item: Item) -> tuple[object, ...]:
    """An item's tree as nested ``(label, start, end, children...)``: equal structure, equal trees."""
    return (item.label, item.start, item.end, *(item_structure(c) for c in item.children))


def tree_structure(tree: Tree) -> tuple[object, ...]:
    """A tree's structure in :func:`item_structure`'s form (leaves numbered from 0)."""
    position = 0

    def walk(node: Tree) -> tuple[object, ...]:
        nonlocal position
        if node.is_preterminal:
            position += 1
            return (node.label, position - 1, position)
        children = [walk(child) for child in node.children]
        return (node.label, children[0][1], children[-1][2], *children)

    return walk(tree)


class GoldScorer:
    """The wrapped scorer's candidates, only those that build a gold constituent over its gold children.

    ``gold`` is the preprocessed gold tree (ROOT on top) over the same leaves as the search's.
    """

    def __init__(self, inner: CandidateScorer, gold: Tree) -> None:
        self.inner = inner
        self.labels = inner.labels
        self.max_children = inner.max_children
        self.phrases, self.problems = gold_constituents(gold)
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        self.offered = 0  # candidates returned over every call: the search's agenda never held more
        for (start, end, label), children in self.phrases.items():
            if len(children) > self.max_children:
                self.problems.append(f"{label} over words {start}-{end} has {len(children)} children "
                                     f"(K = {self.max_children})")
            if label not in self.label_index:
                self.problems.append(f"the model has no label {label}")

    def wanted(self, frontier: Sequence[Item]) -> list[tuple[int, int, str]]:
        """The gold constituents buildable in this state, as candidates (first, end, label)."""
        at = {(item.start, item.end, item.label): i for i, item in enumerate(frontier)}
        found = []
        for key, children in self.phrases.items():
            if key in at:
                continue
            first = at.get(children[0])
            if first is None or first + len(children) > len(frontier):
                continue
            if all((it.start, it.end, it.label) == child
                   for it, child in zip(frontier[first:first + len(children)], children)):
                found.append((first, first + len(children), key[2]))
        return found

    def candidates(self, frontier: Sequence[Item]) -> CandidateArrays:
        """The wrapped scorer's candidates of the state that build gold constituents, in candidate order."""
        found = self.inner.candidates(frontier)
        wanted = [(f, e, self.label_index[label]) for f, e, label in self.wanted(frontier)
                  if label in self.label_index]
        keep = np.zeros(len(found), dtype=bool)
        for first, end, label in wanted:
            keep |= (found.first == first) & (found.end == end) & (found.label == label)
        index = np.flatnonzero(keep)
        self.offered += len(index)
        return CandidateArrays(found.first[index], found.end[index], found.label[index],
                               found.confidence[index], found.labels)


@dataclass
class GoldSearch:
    """The gold-only search's outcome: the best order found, and whether it is the best there is."""

    result: SearchResult | None  # None: not run (the gold tree cannot be built)
    exact: bool  # the search ended before its pop cap: its score is the gold tree's best
    problem: str = ""  # why the gold tree cannot be built, if it cannot


def gold_search(leaves: list[Item], scorer: CandidateScorer, gold: Tree, *, beam: int = 100_000,
                max_pops: int = 10_000, aggregator: str = DEFAULT_AGGREGATOR,
                incumbent: bool = False) -> GoldSearch:
    """The best order of building ``gold`` (preprocessed, over ``leaves``) with :func:`search` itself.

    ``exact`` is False at the pop cap, or when the beam may have pruned the agenda (more candidates
    offered than ``beam``). With ``incumbent`` the search is seeded with the greedy gold order: the
    same best score when it ends before the cap, and a better lower bound when it does not.
    """
    gold_scorer = GoldScorer(scorer, gold)
    if gold_scorer.problems:
        return GoldSearch(None, False, "; ".join(gold_scorer.problems))
    result = search(leaves, gold_scorer, beam=beam, max_pops=max_pops, aggregator=aggregator,
                    incumbent=incumbent)
    if result.item is None:
        return GoldSearch(None, False, "a candidate constraint excludes a gold constituent")
    if item_structure(result.item) != tree_structure(gold):  # cannot happen: every candidate is gold
        raise AssertionError("the gold-only search built a tree other than the gold tree")
    capped = result.completed and "popped states" in result.reason
    return GoldSearch(result, not capped and gold_scorer.offered <= beam)


@dataclass
class GoldBest:
    """What a bounded best-first search over the gold tree's building orders established.

    ``status``: ``found`` (``score`` is one order's, below the bound: not necessarily the best),
    ``best`` (``score`` is the gold tree's best, and below ``bound`` if one was given),
    ``bound`` (every order scores at least ``bound``: stopped there), ``cap`` (the pop cap: every order
    scores at least ``floor``, and none was found below ``bound``), ``unreachable`` (no order builds the
    tree). Keys: smaller is better.
    """

    status: str
    item: Item | None = None
    score: Score | None = None
    floor: tuple[float, ...] | None = None  # no order of building the gold tree has a smaller key
    pops: int = 0


def gold_best_first(leaves: list[Item], scorer: GoldScorer, *, aggregator: str = DEFAULT_AGGREGATOR,
                    max_pops: int = 10_000, bound: tuple[float, ...] | None = None) -> GoldBest:
    """Best-first over the gold tree's states with an unbounded agenda (a heap), stopping at ``bound``.

    Exact where :func:`search` at a beam is not, and it says what it proved at the cap: states pop in
    order of their keys (a path's key never improves as it grows, and two paths to one frontier have
    as many inferences, so the better reaches it first), so when a state of key ``L`` pops, every order
    of building the gold tree with a key below ``L`` would already have completed: the gold tree's best
    key is at least the last popped key. With ``bound`` (the returned parse's key) the search stops as
    soon as the next state's key reaches it, which decides "strictly better than the bound" without
    exploring the states between the bound and the gold tree's own best.
    """
    counter = itertools.count()
    make = interner()

    start = empty(aggregator)
    heap: list[tuple[tuple[float, ...], int, tuple[Item, ...], Score]] = [
        (start.key, next(counter), tuple(leaves), start)]
    seen: set[tuple[Item, ...]] = set()
    pops = 0
    while heap:
        key, _, frontier, score = heapq.heappop(heap)
        if frontier in seen:
            continue
        if bound is not None and key >= bound:
            return GoldBest("bound", floor=key, pops=pops)
        seen.add(frontier)
        pops += 1
        if len(frontier) == 1 and frontier[0].label == ROOT_LABEL:
            return GoldBest("best", frontier[0], score, key, pops)
        if pops >= max_pops:
            return GoldBest("cap", floor=key, pops=pops)
        for first, end, label, confidence in ranked(scorer.candidates(frontier)):
            child = replaced(frontier, first, end, make(label, frontier[first:end]))
            if child not in seen:
                extended = extend(aggregator, score, confidence)
                heapq.heappush(heap, (extended.key, next(counter), child, extended))
    return GoldBest("unreachable", pops=pops)


def gold_depth_first(leaves: list[Item], scorer: GoldScorer, bound: tuple[float, ...], *,
                     aggregator: str = DEFAULT_AGGREGATOR, max_pops: int = 10_000) -> GoldBest:
    """Depth first, best confidence first, for an order of building the gold tree with a key below ``bound``.

    Where the best-first search stopped at its cap (it must pop every state better than the gold tree's
    best before it completes one), this dives: ``found`` at the first complete order below ``bound``
    (not necessarily the best), ``bound`` when every state below it has been expanded (no order beats
    it: a frontier reached again is expanded again only by a better path, which then dominates), or
    ``cap``.
    """
    make = interner()

    start = empty(aggregator)
    stack: list[tuple[tuple[Item, ...], Score]] = [(tuple(leaves), start)]
    expanded: dict[tuple[Item, ...], tuple[float, ...]] = {}
    pops = 0
    while stack:
        frontier, score = stack.pop()
        before = expanded.get(frontier)
        if before is not None and before <= score.key:
            continue
        expanded[frontier] = score.key
        pops += 1
        if len(frontier) == 1 and frontier[0].label == ROOT_LABEL:
            return GoldBest("found", frontier[0], score, pops=pops)
        if pops >= max_pops:
            return GoldBest("cap", pops=pops)
        children = []
        for first, end, label, confidence in ranked(scorer.candidates(frontier)):
            extended = extend(aggregator, score, confidence)
            if extended.key < bound:
                child = replaced(frontier, first, end, make(label, frontier[first:end]))
                children.append((child, extended))
        stack.extend(reversed(children))  # the best candidate is explored first
    return GoldBest("bound", pops=pops)


def greedy_gold(leaves: list[Item], scorer: GoldScorer,
                aggregator: str = DEFAULT_AGGREGATOR) -> tuple[Score | None, dict[Key, float]]:
    """The greedy order of building the gold tree: its score, and each constituent's confidence in it."""
    frontier, score = tuple(leaves), empty(aggregator)
    confidences: dict[Key, float] = {}
    while not (len(frontier) == 1 and frontier[0].label == ROOT_LABEL):
        best = next(ranked(scorer.candidates(frontier)), None)
        if best is None:
            return None, confidences
        first, end, label, confidence = best
        item = build(label, frontier[first:end])
        confidences[(item.start, item.end, label)] = confidence
        frontier = replaced(frontier, first, end, item)
        score = extend(aggregator, score, confidence)
    return score, confidences


class WindowCeiling:
    """The highest confidence a gold constituent can get in *any* state the gold tree passes through.

    A candidate's confidences are a function of its window: its children and the ``context`` frontier
    items on each side (with how many of those positions fall off the sentence), as the compiled kernel
    caches them (:mod:`clparse.features.kernel`). Where a gold constituent is built, its children are its
    gold children, and the item just left of it is any gold node or leaf ending where it starts (none is
    its ancestor; any set of disjoint gold items can stand in the frontier beside it at once), the next
    one any ending where that one starts, and so on; likewise on the right. Scoring every such window
    bounds the constituent's confidence over every order: if even that bound is below the returned
    parse's lowest confidence, every order of building the gold tree scores worse than the parse, a
    proven model error that no search of the gold states has to enumerate.
    """

    def __init__(self, leaves: list[Item], scorer: GoldScorer) -> None:
        self.scorer = scorer.inner
        self.context = int(self.scorer.context)
        self.scorer.candidates(leaves)  # the item table starts from the sentence's leaves
        self.items: dict[Key, Item] = {(leaf.start, leaf.end, leaf.label): leaf for leaf in leaves}
        self.phrases = scorer.phrases
        for key in self.phrases:  # children before parents: the keys were stored in post-order
            self.items[key] = build(key[2], [self.items[child] for child in self.phrases[key]])
        self.ending: dict[int, list[Item]] = {}
        self.starting: dict[int, list[Item]] = {}
        for item in self.items.values():
            if item.label != ROOT_LABEL:
                self.ending.setdefault(item.end, []).append(item)
                self.starting.setdefault(item.start, []).append(item)
        self.n = len(leaves)
        self.windows = 0  # windows scored, for reports

    def _left(self, position: int, depth: int) -> list[tuple[Item, ...]]:
        if depth == self.context or position == 0:
            return [()]
        return [rest + (item,) for item in self.ending.get(position, [])
                for rest in self._left(item.start, depth + 1)]

    def _right(self, position: int, depth: int) -> list[tuple[Item, ...]]:
        if depth == self.context or position == self.n:
            return [()]
        return [(item,) + rest for item in self.starting.get(position, [])
                for rest in self._right(item.end, depth + 1)]

    def ceiling(self, key: Key) -> float | None:
        """The constituent's highest confidence over every window (None: no window makes it a candidate)."""
        children = tuple(self.items[child] for child in self.phrases[key])
        label = self.scorer.labels.index(key[2])
        best: float | None = None
        for left in self._left(key[0], 0):
            for right in self._right(key[1], 0):
                found = self.scorer.candidates(left + children + right)
                self.windows += 1
                first, end = len(left), len(left) + len(children)
                at = np.flatnonzero((found.first == first) & (found.end == end) & (found.label == label))
                if len(at):
                    confidence = float(found.confidence[at[0]])
                    best = confidence if best is None else max(best, confidence)
        return best


def window_proof(leaves: list[Item], scorer: GoldScorer, confidences: dict[Key, float], lowest: float,
                 max_windows: int = 20_000) -> str:
    """A gold constituent that scores below ``lowest`` in every window, if one is found ("" if not).

    The constituents tried are those the greedy gold order built below ``lowest``, lowest first, until
    ``max_windows`` windows have been scored. Under max-min, such a constituent puts every order of
    building the gold tree below a parse whose lowest confidence is ``lowest``: a model error.
    """
    ceiling = WindowCeiling(leaves, scorer)
    for key in sorted((k for k, c in confidences.items() if c < lowest), key=confidences.__getitem__):
        if ceiling.windows > max_windows:
            break
        top = ceiling.ceiling(key)
        if top is not None and top < lowest:
            return f"{key[2]} over words {key[0]}-{key[1]} scores at most {top:.3g} (the parse: {lowest:.3g})"
    return ""


def classify(exact_match: bool, returned: Score | None, gold: GoldBest | None,
             greedy: Score | None = None) -> str:
    """One of :data:`OUTCOMES` for a sentence (see the module's docstring).

    ``gold``: the bounded search's outcome (``None``: the gold tree cannot be built); ``greedy``: the
    score of one order of building the gold tree (the greedy one), an upper bound on its best key.
    """
    if exact_match:
        return "correct"
    if gold is None or gold.status == "unreachable":
        return "unreachable"
    if returned is None:
        return "search"
    if greedy is not None and greedy.key < returned.key:
        return "search"
    if gold.status in ("best", "found"):
        return "search" if gold.score is not None and gold.score.key < returned.key else "model"
    if gold.status == "bound" or (gold.floor is not None and gold.floor >= returned.key):
        return "model"
    return "undecided"
