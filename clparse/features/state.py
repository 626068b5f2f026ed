"""Parser states, candidate inferences, and which candidates are correct (paper §2.1.1).

An *item* is a leaf (a word with its tag) or a phrase built by an inference.
A *state* is the set of items built so far; its *frontier* is the items with
no parent, left to right. An inference picks 1..K consecutive frontier items
and a label and builds an item over them. Conventions (see docs/examples.md):

* a candidate may not duplicate the (span, label) of an item already in the
  state (paper §3 restriction b), so unary chains cannot loop;
* ``ROOT`` may only be built over the whole frontier, and building it
  completes the parse;
* a candidate is *correct* iff it is a gold phrase not yet built whose gold
  children are exactly the chosen frontier items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from clparse.preprocess.heads import head_child_index
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.read.tree import Tree


@dataclass(frozen=True, eq=False)
class Item:
    """A node of a (partial) parse. Identity matters: two items are equal only if they are the same object."""

    label: str
    start: int
    end: int
    headword: str
    headtag: str
    children: tuple[Item, ...] = ()
    head: int = -1  # index of the head child; -1 for a leaf

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def terminals(self) -> Iterator[Item]:
        if self.is_leaf:
            yield self
        else:
            for child in self.children:
                yield from child.terminals()

    def same_span_labels(self) -> Iterator[str]:
        """Labels of this item and the unary chain below it (all share its span)."""
        node: Item | None = self
        while node is not None:
            yield node.label
            node = node.children[0] if len(node.children) == 1 else None


def leaf_items(tagged_words: Sequence[tuple[str, str]],
               normalize: Callable[[str], str] = str.lower) -> list[Item]:
    """The initial frontier: label = tag, headword = normalized word, headtag = tag."""
    return [Item(tag, i, i + 1, normalize(word), tag) for i, (word, tag) in enumerate(tagged_words)]


def replaced(frontier: tuple[Item, ...], first: int, end: int, item: Item) -> tuple[Item, ...]:
    """The frontier after an inference: ``item`` in place of ``frontier[first:end]``, its children."""
    return frontier[:first] + (item,) + frontier[end:]


def build(label: str, children: Sequence[Item]) -> Item:
    """The item an inference builds; its head child comes from the Collins rules keyed on ``label``."""
    head = head_child_index(label, tuple(c.label for c in children))
    h = children[head]
    return Item(label, children[0].start, children[-1].end, h.headword, h.headtag, tuple(children), head)


def interner() -> Callable[[str, tuple[Item, ...]], Item]:
    """``make(label, children)``: :func:`build`, but one object per distinct item (the same label over the
    same child objects), so states reached along different paths share items and a scorer's cache, keyed
    by item objects, serves them all."""
    interned: dict[tuple[object, ...], Item] = {}

    def make(label: str, children: tuple[Item, ...]) -> Item:
        key = (label, *children)
        item = interned.get(key)
        if item is None:
            item = interned[key] = build(label, children)
        return item

    return make


@dataclass(frozen=True)
class Candidate:
    """Build ``label`` over frontier items ``first .. last`` (inclusive-exclusive: ``first:end``)."""

    first: int
    end: int
    label: str


def allowed_labels(frontier: Sequence[Item], first: int, end: int, labels: Sequence[str]) -> Iterator[str]:
    """The labels a candidate over ``frontier[first:end]`` may take, in the order given.

    Not a label already on that span (one-item runs only: the item's unary chain), and ``ROOT`` only
    over the whole frontier.
    """
    blocked = set(frontier[first].same_span_labels()) if end == first + 1 else set()
    whole = first == 0 and end == len(frontier)
    for label in labels:
        if label not in blocked and (whole or label != ROOT_LABEL):
            yield label


def candidates(frontier: Sequence[Item], labels: Iterable[str], max_children: int) -> Iterator[Candidate]:
    """Every candidate inference of a state, in a fixed order (span start, span end, label)."""
    labels = tuple(labels)
    n = len(frontier)
    for first in range(n):
        for end in range(first + 1, min(n, first + max_children) + 1):
            for label in allowed_labels(frontier, first, end, labels):
                yield Candidate(first, end, label)


@dataclass
class GoldNode:
    """A phrase of the gold tree, with the indices of its gold children (phrases or leaves)."""

    label: str
    start: int
    end: int
    children: list[int]  # indices into the combined node list: leaves 0..n-1, phrases n..


def gold_nodes(tree: Tree) -> tuple[int, list[GoldNode]]:
    """Number the gold tree: leaves 0..n-1, then phrases in post-order (children before parents)."""
    phrases: list[GoldNode] = []
    n_words = len(tree.words())
    next_leaf = 0

    def walk(node: Tree) -> int:
        nonlocal next_leaf
        if node.is_preterminal:
            next_leaf += 1
            return next_leaf - 1
        kids = [walk(child) for child in node.children]
        starts = [_start(k) for k in kids]
        ends = [_end(k) for k in kids]
        phrases.append(GoldNode(node.label, starts[0], ends[-1], kids))
        return n_words + len(phrases) - 1

    def _start(index: int) -> int:
        return index if index < n_words else phrases[index - n_words].start

    def _end(index: int) -> int:
        return index + 1 if index < n_words else phrases[index - n_words].end

    walk(tree)
    return n_words, phrases


class Oracle:
    """Tracks a gold tree against a state: which candidates are correct, and building them."""

    def __init__(self, tree: Tree, frontier: list[Item]) -> None:
        self.n_words, self.phrases = gold_nodes(tree)
        # gold node index -> the item built for it (leaves are built from the start)
        self.built: dict[int, Item] = {i: item for i, item in enumerate(frontier)}
        self.frontier = list(frontier)
        self._parent: dict[int, int] = {}
        self._parent_pending: dict[int, int] = {}  # gold phrase index -> children not yet built
        for p, node in enumerate(self.phrases):
            for k in node.children:
                self._parent[k] = self.n_words + p
            self._parent_pending[self.n_words + p] = sum(1 for k in node.children if k not in self.built)

    def buildable(self) -> list[int]:
        """Gold phrases not built whose children are all built: the correct inferences, in gold order."""
        return [index for index, pending in self._parent_pending.items()
                if pending == 0 and index not in self.built]

    def correct_keys(self) -> set[tuple[int, int, str]]:
        """Correct candidates as (first frontier position, end position, label)."""
        return {self.key(index) for index in self.buildable()}

    def key(self, index: int) -> tuple[int, int, str]:
        """Buildable gold phrase ``index`` as a candidate: (first frontier position, end position, label)."""
        node = self.phrases[index - self.n_words]
        kid = self.built[node.children[0]]
        first = next(i for i, item in enumerate(self.frontier) if item is kid)
        return first, first + len(node.children), node.label

    def span(self, index: int) -> tuple[int, int]:
        """The word span (start, end) of gold phrase ``index``."""
        node = self.phrases[index - self.n_words]
        return node.start, node.end

    def apply(self, index: int) -> Item:
        """Build gold phrase ``index`` (must be buildable) and update the frontier."""
        node = self.phrases[index - self.n_words]
        kids = [self.built[k] for k in node.children]
        first = next(i for i, item in enumerate(self.frontier) if item is kids[0])
        item = build(node.label, kids)
        self.frontier[first:first + len(kids)] = [item]
        self.built[index] = item
        if index in self._parent:
            self._parent_pending[self._parent[index]] -= 1
        return item

    def finished(self) -> bool:
        return len(self.built) == self.n_words + len(self.phrases)
