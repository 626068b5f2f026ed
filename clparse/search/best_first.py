"""Best-first search over parser states with a bounded agenda (paper §2.3).

The agenda holds at most ``beam`` entries, best first; an entry is a successor not yet built
(parent state + candidate), so a state's children are made only when popped. Successors are
offered best confidence first and offering stops at the first that cannot enter a full agenda
(keys only get worse down that list). Popping builds the state; the first complete state popped
is returned: keys never improve as a path grows (see :mod:`clparse.search.aggregate`), so no
entry left could beat it. Search gives up after ``max_pops`` popped states.

Ties: equal keys go to the entry offered first; a state's successors are offered by descending
confidence, equal confidences in candidate order (span start, span end, label). Two paths that
reach the same frontier (the same items, unary chains in the same order: items are interned, so
equal structure means the same objects) are one state: the later (worse) arrival is skipped. With ``beam = 1``
the agenda keeps only the popped state's best successor: greedy parsing.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import Any

from clparse.examples.state import Item, build
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.search.aggregate import Score, empty, extend
from clparse.search.scorer import CandidateScorer


@dataclass(frozen=True)
class State:
    frontier: tuple[Item, ...]  # interned items: the tuple itself identifies the state's whole structure
    score: Score

    @property
    def complete(self) -> bool:
        return len(self.frontier) == 1 and self.frontier[0].label == ROOT_LABEL


@dataclass
class SearchResult:
    item: Item | None  # the ROOT item of the best parse, None if search gave up
    score: Score | None
    pops: int
    reason: str = ""  # why search gave up


def search(leaves: list[Item], scorer: CandidateScorer, *, beam: int = 1000, max_pops: int = 10_000,
           aggregator: str = "maxmin") -> SearchResult:
    if beam < 1 or max_pops < 1:
        raise ValueError("beam and max_pops must be at least 1")
    counter = itertools.count()
    agenda: list[tuple[tuple[float, ...], int, Any]] = []
    seen: set[tuple[Item, ...]] = set()  # frontiers popped so far
    # One object per distinct item (same label over the same child objects): states reached along
    # different paths then share items, so the scorer's cache, keyed by item objects, serves them all.
    interned: dict[tuple[object, ...], Item] = {}

    def make(label: str, children: tuple[Item, ...]) -> Item:
        key = (label, *children)
        item = interned.get(key)
        if item is None:
            item = interned[key] = build(label, children)
        return item

    def offer(state: State) -> None:
        scored = scorer.candidates(state.frontier)
        order = sorted(range(len(scored)), key=lambda i: -scored[i][3])  # stable: ties keep candidate order
        for i in order:
            first, end, label, confidence = scored[i]
            score = extend(aggregator, state.score, confidence)
            entry = (score.key, next(counter), (state, first, end, label, score))
            if len(agenda) >= beam and entry[:2] >= agenda[-1][:2]:
                break
            bisect.insort(agenda, entry, key=lambda e: e[:2])
            if len(agenda) > beam:
                agenda.pop()

    start = State(tuple(leaves), empty(aggregator))
    if start.complete:
        return SearchResult(start.frontier[0], start.score, 0)
    offer(start)
    pops = 0
    while agenda:
        _, _, (parent, first, end, label, score) = agenda.pop(0)
        item = make(label, parent.frontier[first:end])
        frontier = parent.frontier[:first] + (item,) + parent.frontier[end:]
        if frontier in seen:
            continue
        seen.add(frontier)
        state = State(frontier, score)
        pops += 1
        if state.complete:
            return SearchResult(item, score, pops)
        if pops >= max_pops:
            return SearchResult(None, None, pops, f"no complete parse within {max_pops} popped states")
        offer(state)
    return SearchResult(None, None, pops, "the agenda ran empty")
