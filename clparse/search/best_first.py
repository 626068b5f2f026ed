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

At the pop cap (or if the agenda runs empty) the search still ends in a parse: from the last state
popped (the best on the agenda when it was popped) it continues greedily, best candidate first,
until ROOT is built; ``SearchResult.completed`` says so. Only a state with no candidate at all
(nothing can ever be built) ends without a parse.

With ``beam > 1`` the search first parses greedily and keeps that parse as the *incumbent*, as the
authors' decoder keeps its best complete parse (it lifted all-length F1 at beam 1000): an entry whose key is
already worse than the incumbent's can never lead to a better parse, so it is not offered; if the agenda then
runs empty, no parse better than the incumbent is left and the incumbent is the result; at the pop cap the
better of the incumbent and the greedy completion is returned. Entries tied with the incumbent stay, so a
search that ends normally returns the parse it returned without the incumbent whenever that parse is at least
as good as the greedy one. On long sentences, where the pop cap used to leave one in seven sentences of GUM
dev with a completion worse than plain greedy parsing, this is what keeps a wide beam from losing to beam 1.

A scorer with a compiled agenda (``agenda``: :class:`~clparse.search.agenda.Agenda`) runs the agenda search
in compiled calls, one per state reported; :func:`best_first` is what it must equal (``reference=True``
runs it instead; the tests hold the two to the same results).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from clparse.features.kernel import AGENDA_CAP, AGENDA_COMPLETE, AGENDA_EMPTY
from clparse.features.state import Item, interner, replaced
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.search.aggregate import DEFAULT_AGGREGATOR, Score, empty, extend
from clparse.search.scorer import CandidateArrays

Scored = tuple[int, int, str, float]  # first frontier position, end position, label, confidence


class Scorer(Protocol):
    """What the search needs: a state's candidates with confidences, in candidate order (first, end,
    label)."""

    def candidates(self, frontier: Sequence[Item]) -> CandidateArrays | Sequence[Scored]: ...


def ranked(found: CandidateArrays | Sequence[Scored]) -> Iterator[Scored]:
    """Candidates best confidence first, equal confidences in candidate order (lazily: callers stop early)."""
    if isinstance(found, CandidateArrays):
        first, end, label, confidence, labels = (found.first, found.end, found.label, found.confidence,
                                                 found.labels)
        for i in _stable_descending(confidence):
            yield int(first[i]), int(end[i]), labels[label[i]], float(confidence[i])
    else:
        yield from sorted(found, key=lambda c: -c[3])  # stable: ties keep candidate order


@dataclass(frozen=True, eq=False)
class State:
    frontier: tuple[Item, ...]  # interned items: the tuple itself identifies the state's whole structure
    score: Score
    parent: State | None = None  # the state this one was built from (None: the leaves)
    step: Scored | None = None  # the inference that built it from ``parent``

    def path(self) -> tuple[Scored, ...]:
        """The inferences from the leaves to this state, in order."""
        steps: list[Scored] = []
        state: State | None = self
        while state is not None and state.step is not None:
            steps.append(state.step)
            state = state.parent
        return tuple(reversed(steps))

    @property
    def complete(self) -> bool:
        return len(self.frontier) == 1 and self.frontier[0].label == ROOT_LABEL


@dataclass
class SearchResult:
    item: Item | None  # the ROOT item of the best parse, None if search gave up
    score: Score | None
    pops: int
    reason: str = ""  # why search gave up, or why it completed greedily
    completed: bool = False  # the parse was finished greedily after the pop cap (or an empty agenda)
    # The inferences from the leaves to the parse, in the order taken: (first frontier position, end
    # position, label, the classifier's confidence), positions on the frontier of that moment.
    path: tuple[Scored, ...] = ()


HEAD = 32  # candidates ranked before the rest: offering usually stops within the first few


def _stable_descending(confidence: np.ndarray) -> Iterator[int]:
    """Indices by descending confidence, ties in index order: exactly a stable argsort of -confidence.

    Long sentences have thousands of candidates per state and offering rarely looks past a few, so the
    best ``HEAD`` (with every candidate tied with the last of them) are sorted first, the rest only
    if they are reached. Both parts keep index order among ties, so the sequence is the full sort's.
    """
    negated = -confidence
    if len(negated) <= 4 * HEAD:
        yield from np.argsort(negated, kind="stable").tolist()
        return
    bound = np.partition(negated, HEAD - 1)[HEAD - 1]
    for part in (np.flatnonzero(negated <= bound), np.flatnonzero(negated > bound)):
        yield from part[np.argsort(negated[part], kind="stable")].tolist()


def search(leaves: list[Item], scorer: Scorer, *, beam: int = 1000, max_pops: int = 10_000,
           aggregator: str = DEFAULT_AGGREGATOR, incumbent: bool = True,
           reference: bool = False) -> SearchResult:
    """The best parse of ``leaves`` under the aggregated confidences; ``incumbent``: seed with the greedy
    parse; ``reference``: the Python agenda even if the scorer has a compiled one. ``beam`` defaults to
    the paper's 1000 at this level; the parser's default search is beam 100 (``SearchOptions``)."""
    return search_kbest(leaves, scorer, 1, beam=beam, max_pops=max_pops, aggregator=aggregator,
                        incumbent=incumbent, reference=reference)[0]


def search_kbest(leaves: list[Item], scorer: Scorer, k: int, *, beam: int = 1000, max_pops: int = 10_000,
                 aggregator: str = DEFAULT_AGGREGATOR, incumbent: bool = True,
                 reference: bool = False) -> list[SearchResult]:
    """Up to ``k`` distinct parses of ``leaves``, best key first; the first is :func:`search`'s parse.

    The search that finds the best parse goes on popping after it: every further complete state popped
    is the next distinct tree (keys never improve down the agenda, and a tree is one frontier, seen
    once). With the incumbent, entries worse than the greedy parse were never offered, so that search
    meets only trees at least as good as greedy parsing; the greedy parse joins them, and if fewer than
    ``k`` trees are found a second best-first search without the bound adds trees worse than the greedy
    parse, in the order it pops them. Each search gets its own ``max_pops``. A list may be shorter than
    ``k``: only the trees the beams let through are listed (no other tree may exist at all).
    """
    if beam < 1 or max_pops < 1 or k < 1:
        raise ValueError("beam, max_pops and k must be at least 1")
    make = interner()  # one object per distinct item: the scorer's cache serves every path
    start = State(tuple(leaves), empty(aggregator))
    if start.complete:
        return [SearchResult(start.frontier[0], start.score, 0)]
    if beam == 1:  # the agenda would hold one entry: the greedy path, in one compiled call where it can be
        return [greedy_search(start, scorer, make, aggregator, max_pops)]
    greedy: SearchResult | None = None
    bound: tuple[float, ...] | None = None
    if incumbent:
        greedy = complete_greedily(start, scorer, make, aggregator, 0, "greedy")
        if greedy.item is not None and greedy.score is not None:
            bound = greedy.score.key
        else:
            greedy = None
    found: list[SearchResult] = []
    compiled = not reference and getattr(scorer, "agenda", None) is not None
    agenda_search = compiled_best_first if compiled else best_first
    for state, pops, end in agenda_search(start, scorer, make, beam, max_pops, aggregator, bound):
        if end == "complete":
            found.append(SearchResult(state.frontier[0], state.score, pops, path=state.path()))
            if len(found) == k:
                break
            continue
        if found:  # the agenda ran empty or the cap was reached after the best parse: what was found stays
            break
        if end == "empty":
            if greedy is not None:  # every entry left was worse than the greedy parse: it is the best
                found.append(SearchResult(greedy.item, greedy.score, pops, path=greedy.path))
            else:
                found.append(complete_greedily(state, scorer, make, aggregator, pops, "the agenda ran empty"))
        else:  # the pop cap before any complete parse
            found.append(at_the_cap(state, greedy, scorer, make, aggregator, pops, max_pops))
    if k > 1 and greedy is not None and greedy.score is not None:
        _add(found, SearchResult(greedy.item, greedy.score, found[0].pops if found else 0, path=greedy.path))
        if len(found) < k:  # trees worse than the greedy parse, which the bound kept out
            for state, pops, end in agenda_search(start, scorer, make, beam, max_pops, aggregator, None):
                if end != "complete":
                    break
                if state.score.key > greedy.score.key:
                    _add(found, SearchResult(state.frontier[0], state.score, pops, path=state.path()))
                    if len(found) == k:
                        break
    return found[:k]


def _add(found: list[SearchResult], result: SearchResult) -> None:
    """Append ``result`` unless its tree is listed (items are interned: one tree, one object). Callers add
    results in non-decreasing key order after the first, so the list stays sorted."""
    if result.item is not None and all(other.item is not result.item for other in found):
        found.append(result)


def at_the_cap(state: State, greedy: SearchResult | None, scorer: Scorer, make: Any, aggregator: str,
               pops: int, max_pops: int) -> SearchResult:
    """The parse at the pop cap: the greedy completion of the last state popped, or the greedy parse if it
    is better."""
    why = f"no complete parse within {max_pops} popped states"
    completed = complete_greedily(state, scorer, make, aggregator, pops, why)
    if greedy is not None and greedy.score is not None and (
            completed.score is None or greedy.score.key < completed.score.key):
        return SearchResult(greedy.item, greedy.score, pops,
                            f"{why}: the greedy parse, better than completing the best state", True,
                            greedy.path)
    return completed


def best_first(start: State, scorer: Scorer, make: Any, beam: int, max_pops: int, aggregator: str,
               bound: tuple[float, ...] | None) -> Iterator[tuple[State, int, str]]:
    """The agenda search from ``start``: yields (state, pops, "complete") for each complete state popped,
    in key order, and ends with (the last state popped, pops, "empty" or "cap") unless the caller stops.
    Entries whose key is worse than ``bound`` are not offered."""
    counter = itertools.count()
    agenda: list[tuple[tuple[float, ...], int, Any]] = []
    seen: set[tuple[Item, ...]] = set()  # frontiers popped so far

    def offer(state: State) -> None:
        for first, end, label, confidence in ranked(scorer.candidates(state.frontier)):
            score = extend(aggregator, state.score, confidence)
            if bound is not None and score.key > bound:  # keys only get worse down the list
                break
            # (key, unique counter, payload): tuples compare on the key, then the counter, never the payload
            entry = (score.key, next(counter), (state, first, end, label, confidence, score))
            if len(agenda) >= beam and entry >= agenda[-1]:
                break
            bisect.insort(agenda, entry)
            if len(agenda) > beam:
                agenda.pop()

    offer(start)
    pops = 0
    state = start
    while agenda:
        _, _, (parent, first, end, label, confidence, score) = agenda.pop(0)
        item = make(label, parent.frontier[first:end])
        frontier = replaced(parent.frontier, first, end, item)
        if frontier in seen:
            continue
        seen.add(frontier)
        state = State(frontier, score, parent, (first, end, label, confidence))
        pops += 1
        if state.complete:
            yield state, pops, "complete"
            continue  # a complete state has no successors
        if pops >= max_pops:
            yield state, pops, "cap"
            return
        offer(state)
    yield state, pops, "empty"


REPORTS = {AGENDA_COMPLETE: "complete", AGENDA_CAP: "cap", AGENDA_EMPTY: "empty"}


def compiled_best_first(start: State, scorer: Scorer, make: Any, beam: int, max_pops: int, aggregator: str,
                        bound: tuple[float, ...] | None) -> Iterator[tuple[State, int, str]]:
    """:func:`best_first` in compiled calls (the scorer's ``agenda``): the same reports, each state rebuilt
    from its path as the Python search built it."""
    agenda = scorer.agenda(start.frontier, beam, max_pops, aggregator, bound)  # type: ignore[attr-defined]
    while True:
        status, at, pops = agenda.advance()
        state = replay(start, agenda.path(at), make, aggregator)
        agenda.adopt(at, state.frontier)
        yield state, pops, REPORTS[status]
        if status != AGENDA_COMPLETE:
            return


def replay(start: State, path: Sequence[Scored], make: Any, aggregator: str) -> State:
    """The state ``path`` leads to from ``start``, with every state on the way as its parent chain."""
    state = start
    for first, end, label, confidence in path:
        frontier = state.frontier
        item = make(label, frontier[first:end])
        score = extend(aggregator, state.score, confidence)
        step = (first, end, label, confidence)
        state = State(replaced(frontier, first, end, item), score, state, step)
    return state


def complete_greedily(state: State, scorer: Scorer, make: Any, aggregator: str, pops: int,
                      why: str) -> SearchResult:
    """Finish ``state`` by always taking its best candidate (ties in candidate order) until ROOT is built."""
    frontier, score, steps, done = greedy_path(state, scorer, make, aggregator)
    if done:
        return SearchResult(frontier[0], score, pops, f"{why}: completed greedily", completed=True,
                            path=state.path() + steps)
    return SearchResult(None, None, pops, f"{why}, and no parse can be completed from the best state")


def greedy_path(state: State, scorer: Scorer, make: Any,
                aggregator: str) -> tuple[tuple[Item, ...], Score, tuple[Scored, ...], bool]:
    """The greedy path from ``state``: (last frontier, its score, the inferences taken, ROOT built).

    It ends: every inference either shrinks the frontier or extends a unary chain, and a chain cannot
    repeat a label. The step bound only guards against a scorer that breaks those rules. A scorer with
    a compiled greedy search (``greedy``) runs the whole path in one call; the loop below is what it
    must equal (the tests hold them to the same items and confidences).
    """
    frontier, score = state.frontier, state.score
    bound = len(frontier) * (len(getattr(scorer, "labels", ())) + 2) + 64
    compiled = getattr(scorer, "greedy", None)
    if compiled is not None:
        frontier, taken, done = compiled(frontier, make, bound)
        for step in taken:
            score = extend(aggregator, score, step[3])
        return frontier, score, tuple(taken), done
    steps: list[Scored] = []
    while len(steps) < bound and not _complete(frontier):
        best = next(ranked(scorer.candidates(frontier)), None)
        if best is None:
            break
        first, end, label, confidence = best
        frontier = replaced(frontier, first, end, make(label, frontier[first:end]))
        score = extend(aggregator, score, confidence)
        steps.append(best)
    return frontier, score, tuple(steps), _complete(frontier)


def _complete(frontier: tuple[Item, ...]) -> bool:
    return len(frontier) == 1 and frontier[0].label == ROOT_LABEL


def greedy_search(start: State, scorer: Scorer, make: Any, aggregator: str, max_pops: int) -> SearchResult:
    """Beam 1: the greedy path, reported as the agenda search with a one-entry agenda reports it (each
    inference one popped state; at ``max_pops`` the rest of the path is the greedy completion)."""
    frontier, score, path, done = greedy_path(start, scorer, make, aggregator)
    steps = len(path)
    capped = f"no complete parse within {max_pops} popped states"
    if done:
        if steps <= max_pops:
            return SearchResult(frontier[0], score, steps, path=path)
        return SearchResult(frontier[0], score, max_pops, f"{capped}: completed greedily", completed=True,
                            path=path)
    if steps < max_pops:
        return SearchResult(None, None, steps,
                            "the agenda ran empty, and no parse can be completed from the best state")
    return SearchResult(None, None, max_pops, f"{capped}, and no parse can be completed from the best state")
