"""Parsing under known brackets: spans that must be constituents (optionally with a label), spans that
must not be, and optionally nothing but the given brackets.

A scorer wrapper (:class:`BracketedScorer`) drops every candidate that would break a constraint, so
any search over it (best-first, greedy, k-best) returns only trees that keep them all. Spans are in
leaf positions of the search, end exclusive; a constituent over one word is a phrase over its
preterminal, never the preterminal itself (PARSEVAL does not count those).

Why dropping candidates is enough: a required span can be lost in two ways, and both are caught at
the inference that would lose it.

* A constituent *crossing* it (overlapping without nesting) is never built.
* A constituent *strictly containing* it (or ROOT, which ends every unary chain) is built only over a
  child that itself covers the whole span and is a phrase. By induction down that chain of children,
  the span then has its own constituent, and a required label must be in the unary chain of labels
  over that span when something is built over it: later nothing can be added to that chain.

Forbidden spans drop the candidates that build them (with the label, if one is given; ROOT is not a
constituent and is never forbidden). With
``complete`` only the required brackets may be built (and ROOT): given every bracket of a tree, the
search can return only that tree's labelled spans.

The constraints may still leave no complete parse (say a required span wider than the model may build
over its words); the search then ends without one, as it does when the model allows nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from clparse.errors import BracketError
from clparse.features.state import Item
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.search.scorer import CandidateArrays

__all__ = ["Bracket", "BracketError", "BracketedScorer", "Brackets"]


@dataclass(frozen=True)
class Bracket:
    start: int
    end: int  # exclusive
    label: str | None = None  # None: any label

    def crosses(self, other: Bracket) -> bool:
        return (self.start < other.start < self.end < other.end
                or other.start < self.start < other.end < self.end)

    def __str__(self) -> str:
        return f"{self.label or '*'} {self.start}:{self.end}"


@dataclass(frozen=True)
class Brackets:
    required: tuple[Bracket, ...] = ()
    forbidden: tuple[Bracket, ...] = ()
    complete: bool = False  # nothing but the required brackets (and ROOT) may be built

    def __bool__(self) -> bool:
        return bool(self.required or self.forbidden or self.complete)

    def check(self, words: int, labels: Iterable[str] | None = None) -> None:
        """Raise :class:`BracketError` (one line) if the constraints cannot hold over ``words`` words."""
        known = set(labels) if labels is not None else None
        for bracket in (*self.required, *self.forbidden):
            if not 0 <= bracket.start < bracket.end <= words:
                raise BracketError(f"bracket {bracket} is not a span of a {words}-word sentence "
                                   f"(0 <= start < end <= {words})")
            if bracket.label == ROOT_LABEL:
                raise BracketError(f"bracket {bracket}: {ROOT_LABEL} is the parser's own top node, not a "
                                   f"constituent: give the label of the phrase under it")
            if known is not None and bracket.label is not None and bracket.label not in known:
                raise BracketError(f"bracket {bracket}: the parser has no label {bracket.label!r}")
        for i, a in enumerate(self.required):
            for b in self.required[i + 1:]:
                if a.crosses(b):
                    raise BracketError(f"required brackets {a} and {b} cross: no tree has both")
            for no in self.forbidden:
                if (no.start, no.end) == (a.start, a.end) and no.label in (None, a.label):
                    raise BracketError(f"bracket {a} is both required and forbidden")


    def through(self, kept: Sequence[int]) -> Brackets:
        """The constraints over the search's leaves, given as positions of the input tokens: leaf i is input
        token ``kept[i]`` (preprocessing sets quotes and outer punctuation aside). Call :meth:`check` on the
        input's length first."""
        def leaf_span(bracket: Bracket) -> Bracket:
            inside = [i for i, token in enumerate(kept) if bracket.start <= token < bracket.end]
            if not inside:
                raise BracketError(f"bracket {bracket} holds only tokens the parser sets aside (quotation "
                                   f"marks, punctuation at the sentence's edges): it cannot be a constituent")
            return Bracket(inside[0], inside[-1] + 1, bracket.label)

        forbidden = []
        for bracket in self.forbidden:  # a span of set-aside tokens only is never built anyway
            if any(bracket.start <= token < bracket.end for token in kept):
                forbidden.append(leaf_span(bracket))
        return Brackets(tuple(leaf_span(b) for b in self.required), tuple(forbidden), self.complete)


@dataclass
class BracketedScorer:
    """A scorer's candidates without those that would break ``brackets`` (see the module's docstring).

    Built per sentence, like the scorer it wraps. It has no compiled greedy path, so the search takes
    the Python loop, which the compiled one must equal anyway.
    """

    scorer: object  # anything with candidates(frontier) -> CandidateArrays | Sequence[Scored]
    brackets: Brackets
    labels: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.labels = tuple(getattr(self.scorer, "labels", ()))

    def candidates(self, frontier: Sequence[Item]) -> CandidateArrays:
        found = arrays(self.scorer.candidates(frontier))  # type: ignore[attr-defined]
        return select(found, allowed(found, frontier, self.brackets))


def arrays(found: CandidateArrays | Sequence[tuple[int, int, str, float]]) -> CandidateArrays:
    """Candidates as arrays (a scorer may give a list of (first, end, label, confidence))."""
    if isinstance(found, CandidateArrays):
        return found
    labels = tuple(dict.fromkeys(label for _, _, label, _ in found))
    index = {label: i for i, label in enumerate(labels)}
    return CandidateArrays(np.array([c[0] for c in found], dtype=np.int64),
                           np.array([c[1] for c in found], dtype=np.int64),
                           np.array([index[c[2]] for c in found], dtype=np.int64),
                           np.array([c[3] for c in found], dtype=np.float64), labels)


def select(found: CandidateArrays, keep: np.ndarray) -> CandidateArrays:
    return CandidateArrays(found.first[keep], found.end[keep], found.label[keep], found.confidence[keep],
                           found.labels)


def allowed(found: CandidateArrays, frontier: Sequence[Item], brackets: Brackets) -> np.ndarray:
    """A mask over the candidates: True where building the candidate keeps every constraint."""
    starts = np.array([item.start for item in frontier], dtype=np.int64)
    ends = np.array([item.end for item in frontier], dtype=np.int64)
    span_start, span_end = starts[found.first], ends[found.end - 1]
    names = np.array(found.labels, dtype=object)[found.label] if len(found) else np.array([], dtype=object)
    is_root = names == ROOT_LABEL
    keep = np.ones(len(found), dtype=bool)
    for bracket in brackets.required:
        i, j = bracket.start, bracket.end
        keep &= ~(((span_start < i) & (i < span_end) & (span_end < j))
                  | ((i < span_start) & (span_start < j) & (j < span_end)))  # crossing
        exact = (span_start == i) & (span_end == j)
        contains = (span_start <= i) & (j <= span_end) & (~exact | is_root)
        if contains.any() and not _kept_below(frontier, bracket):
            keep &= ~contains
    for bracket in brackets.forbidden:
        exact = (span_start == bracket.start) & (span_end == bracket.end)
        keep &= ~(exact & ~is_root & ((names == bracket.label) if bracket.label is not None else True))
    if brackets.complete:
        listed = is_root.copy()
        for bracket in brackets.required:
            exact = (span_start == bracket.start) & (span_end == bracket.end)
            listed |= exact & ((names == bracket.label) if bracket.label is not None else True)
        keep &= listed
    return keep


def _kept_below(frontier: Sequence[Item], bracket: Bracket) -> bool:
    """Does the frontier item over the bracket's first word cover the whole span as a phrase, with the
    required label in its unary chain if it is exactly the span? (Then a constituent containing it keeps
    it.)"""
    for item in frontier:
        if item.start <= bracket.start < item.end:
            if item.is_leaf or item.end < bracket.end:
                return False
            if (item.start, item.end) == (bracket.start, bracket.end) and bracket.label is not None:
                return bracket.label in set(item.same_span_labels())
            return True
    return False
