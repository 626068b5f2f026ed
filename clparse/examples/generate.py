"""Training examples along one bottom-up path per tree: seeded random (paper §2.1.1), or l2r/r2l (§3.5).

At every state on the path, every candidate inference becomes an example for
its label, y = +1 if it is correct and -1 otherwise. Feature sets are stored
once (identical sets share one *row*); each label keeps (row, y) pairs, which
:meth:`ExampleSet.deduplicated` merges into multiplicities (exact: identical
features and label always share a margin). The features of a whole state are
computed by one compiled call (:mod:`clparse.features.kernel`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import types
from numba.typed import Dict

from clparse.features.items import ItemTable, WindowCache
from clparse.features.kernel import MAX_CONTEXT, CandidateSpec, ExampleBuffers, row_capacity, state_examples
from clparse.features.space import FeatureConfig, FeatureSpace
from clparse.features.state import Item, Oracle, build, leaf_items
from clparse.features.symbols import CandidateRules, HeadTable, SymbolTable
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.preprocess.transforms import PUNCTUATION_TAGS
from clparse.read.tree import Tree

Inference = tuple[int, int, str]  # word span start, end, label


def remove_duplicate_brackets(tree: Tree) -> tuple[Tree, int]:
    """Drop a phrase whose unary chain below repeats its (span, label): it could never be built."""
    removed = 0

    def walk(node: Tree) -> Tree:
        nonlocal removed
        if node.is_preterminal:
            return node
        below = node
        while len(below.children) == 1 and not below.children[0].is_preterminal:
            below = below.children[0]
            if below.label == node.label:
                removed += 1
                return walk(node.children[0])
        return Tree(node.label, [walk(child) for child in node.children])

    return walk(tree), removed


def widest_phrase(tree: Tree) -> int:
    return max((len(p.children) for p in tree.phrases()), default=0)


def obeys_constraints(tree: Tree) -> bool:
    """Can the candidate constraints build this gold tree: ROOT unary, and no phrase whose first or last
    child is a punctuation terminal unless the phrase holds nothing but punctuation?"""
    if tree.label == ROOT_LABEL and len(tree.children) != 1:
        return False

    def punctuation_leaf(node: Tree) -> bool:
        return node.is_preterminal and node.label in PUNCTUATION_TAGS

    return not any(node.label != ROOT_LABEL
                   and (punctuation_leaf(node.children[0]) or punctuation_leaf(node.children[-1]))
                   and not all(t in PUNCTUATION_TAGS for _, t in node.tagged_words())
                   for node in tree.phrases())


def next_inference(oracle: Oracle, order: str, rng: np.random.Generator | None = None) -> int:
    """The gold phrase a path builds next: drawn uniformly among the buildable ones (``random``), or the
    unique rightmost (``r2l``: largest end) or leftmost (``l2r``: smallest start) one (paper §3.5).

    Two buildable gold phrases never share an end (or a start): they would nest, and the larger one
    could not be buildable yet. So the deterministic choice needs no tie-break.
    """
    choices = oracle.buildable()
    if order == "random":
        if rng is None:
            raise ValueError("a random path needs its generator")
        return choices[int(rng.integers(len(choices)))]
    if order == "r2l":
        return max(choices, key=lambda index: oracle.span(index)[1])
    if order == "l2r":
        return min(choices, key=lambda index: oracle.span(index)[0])
    raise ValueError(f"unknown item order {order!r}")


def walk_path(oracle: Oracle, seed: int, sentence: int,
              visit: Callable[[Oracle], object] = lambda _: None, order: str = "random",
              number: int = 0) -> list[Inference]:
    """Build the gold tree in ``order``, calling ``visit`` on each state before its inference.

    A random path draws the next inference uniformly from the correct ones with a generator seeded by
    ``(seed, sentence)``, so a sentence's path does not depend on any other sentence; the ``l2r`` and
    ``r2l`` paths are unique (:func:`next_inference`). Path ``number`` n > 0 of a sentence (``prepare
    --paths``) is seeded by ``(seed, sentence, n)``: path 0 is the one path of a run with one per tree.
    """
    rng = np.random.default_rng([seed, sentence] if number == 0 else [seed, sentence, number])
    path: list[Inference] = []
    while not oracle.finished():
        visit(oracle)
        item = oracle.apply(next_inference(oracle, order, rng))
        path.append((item.start, item.end, item.label))
    return path


def random_path(tree: Tree, seed: int, sentence: int, order: str = "random",
                number: int = 0) -> list[Inference]:
    """The bottom-up path of a tree (what :meth:`ExampleGenerator.add_sentence` walks as path ``number``)."""
    oracle = Oracle(tree, leaf_items(tree.tagged_words()))
    return walk_path(oracle, seed, sentence, order=order, number=number)


def replay(tagged_words: Sequence[tuple[str, str]], path: Sequence[Inference]) -> Item:
    """Apply a stored path to the leaves and return the final item (to check it rebuilds the gold tree)."""
    frontier = leaf_items(tagged_words)
    for start, end, label in path:
        first = next(i for i, item in enumerate(frontier) if item.start == start)
        last = next(i for i, item in enumerate(frontier) if item.end == end)
        frontier[first:last + 1] = [build(label, frontier[first:last + 1])]
    if len(frontier) != 1:
        raise ValueError(f"path leaves {len(frontier)} items on the frontier")
    return frontier[0]


def item_to_tree(item: Item, words: Sequence[str]) -> Tree:
    if item.is_leaf:
        return Tree.preterminal(item.label, words[item.start])
    return Tree(item.label, [item_to_tree(child, words) for child in item.children])


DEFAULT_BATCH = 1 << 24  # raw candidates (7 bytes each) held before a reduction: about 120 MB

RowSink = Callable[[np.ndarray, np.ndarray], object]  # (indptr from 0, indices) of new rows, in row-id order


class RowBuffer:
    """Keeps every new feature row in memory (tests, small runs); ``prepare`` streams them instead."""

    def __init__(self) -> None:
        self.lengths: list[np.ndarray] = []
        self.parts: list[np.ndarray] = []

    def __call__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.lengths.append(np.diff(indptr))
        self.parts.append(indices.copy())

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows as CSR ``indptr`` (int64) and ``indices`` (int32)."""
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int64)
        indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int32)
        return indptr, indices.astype(np.int32, copy=False)


class ExampleSet:
    """Per label, the (row, y) of every example, merged into multiplicities batch by batch.

    Feature rows are shared by all labels and stored once: a row is identified by a 128-bit hash of
    its sorted feature ids (:func:`~clparse.features.kernel.row_hash`) and numbered in first-seen
    order; the rows themselves go to a sink as they are found. The candidates of the states are
    kept raw only until ``batch`` of them have arrived; then each label's share is reduced to its
    distinct (row, y) pairs with counts, so memory grows with the distinct examples, never with the
    raw candidates (GUM at every length has ~6 M candidates per label). Summing counts across batches
    gives exactly what one reduction over all candidates gives, whatever ``batch`` is.
    """

    def __init__(self, labels: Sequence[str], batch: int = DEFAULT_BATCH) -> None:
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self.labels = tuple(labels)
        self.batch = batch
        self.row_ids = Dict.empty(key_type=types.UniTuple(types.uint64, 2), value_type=types.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        # per label: (pair, count) pieces, pair = row * 2 + (y > 0), each piece sorted by pair
        self._pieces: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in self.labels]
        self._candidates = np.zeros(len(self.labels), dtype=np.int64)
        self._positives = np.zeros(len(self.labels), dtype=np.int64)

    def add_state(self, label: np.ndarray, row: np.ndarray, y: np.ndarray) -> None:
        self._pending.append((label, row, y))
        self._pending_size += len(label)
        if self._pending_size >= self.batch:
            self._reduce()

    def _reduce(self) -> None:
        """Fold the pending candidates into each label's distinct pairs."""
        if not self._pending:
            return
        label = np.concatenate([p[0] for p in self._pending])
        pairs = np.concatenate([p[1] for p in self._pending]).astype(np.int64) * 2
        positive = np.concatenate([p[2] for p in self._pending]) > 0
        self._pending, self._pending_size = [], 0
        size = len(self.labels)
        self._candidates += np.bincount(label, minlength=size)
        self._positives += np.bincount(label[positive], minlength=size)
        pairs += positive
        order = np.argsort(label, kind="stable")
        bounds = np.searchsorted(label[order], np.arange(size + 1))
        pairs = pairs[order]
        for i in range(size):
            part = pairs[bounds[i]:bounds[i + 1]]
            if len(part):
                unique, counts = np.unique(part, return_counts=True)
                self._pieces[i].append((unique, counts.astype(np.int64)))

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Candidates and positives per label index."""
        self._reduce()
        return self._candidates.copy(), self._positives.copy()

    def _merged(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        self._reduce()
        pieces = self._pieces[index]
        if not pieces:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(pieces) > 1:
            pairs = np.concatenate([p[0] for p in pieces])
            counts = np.concatenate([p[1] for p in pieces])
            order = np.argsort(pairs, kind="stable")
            pairs, counts = pairs[order], counts[order]
            starts = np.flatnonzero(np.r_[True, pairs[1:] != pairs[:-1]])
            pieces[:] = [(pairs[starts], np.add.reduceat(counts, starts))]
        return pieces[0]

    def deduplicated(self, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unique (row, y) pairs of a label with their multiplicities, sorted by (row, y)."""
        pairs, counts = self._merged(self.labels.index(label))
        return (pairs // 2).astype(np.int32), np.where(pairs % 2 == 1, 1, -1).astype(np.int8), \
            counts.astype(np.int32)

    def take(self, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`deduplicated`, and forget the label's examples (``prepare`` writes each label once)."""
        found = self.deduplicated(label)
        self._pieces[self.labels.index(label)] = []
        return found


@dataclass
class GenerationReport:
    sentences: int = 0
    used: int = 0
    too_wide: int = 0
    breaks_constraints: int = 0  # gold trees the candidate constraints could not build
    duplicate_brackets_removed: int = 0
    states: int = 0
    candidates: Counter[str] = field(default_factory=Counter)
    positives: Counter[str] = field(default_factory=Counter)


class ExampleGenerator:
    """Walks each training tree's random path and records every candidate as an example.

    Features come from the compiled kernel (:func:`~clparse.features.kernel.state_examples`), one
    call per state; new feature rows go to ``sink`` as they are found.
    """

    def __init__(self, labels: Sequence[str], config: FeatureConfig, max_children: int = 5, seed: int = 0,
                 normalize: Callable[[str], str] = str.lower, sink: RowSink | None = None,
                 symbols: SymbolTable | None = None, constraints: bool = False, order: str = "random",
                 batch: int = DEFAULT_BATCH, paths: int = 1) -> None:
        if paths < 1 or (paths > 1 and order != "random"):
            raise ValueError(f"paths must be 1, or more with the random order; got {paths} ({order})")
        self.labels = tuple(sorted(labels))
        self.symbols = symbols if symbols is not None else SymbolTable()
        self.label_symbols = np.array([self.symbols.add(label) for label in self.labels], dtype=np.int32)
        self.root = self.labels.index(ROOT_LABEL) if ROOT_LABEL in self.labels else -1
        self.space = FeatureSpace(config, self.symbols)
        self.heads = HeadTable(self.symbols)
        self.rules = CandidateRules(self.symbols, constraints, order)
        self.max_children = max_children
        self.seed = seed
        self.paths = paths
        self.normalize = normalize
        self.examples = ExampleSet(self.labels, batch)
        self.report = GenerationReport()
        self.sink: RowSink = sink if sink is not None else RowBuffer()
        self._buffers: dict[str, np.ndarray] = {}
        self._out: ExampleBuffers | None = None  # the kernel's record of the buffers, rebuilt when one grows
        self._spec: CandidateSpec | None = None  # the kernel's record of the candidates, rebuilt when
        self._spec_symbols = 0  # the symbol table (this was its size) or the head table changes

    @property
    def rows(self) -> int:
        """Distinct feature rows so far."""
        return int(self.space.counter[1])

    def prepare_tree(self, tree: Tree) -> Tree | None:
        """The gold tree as training sees it, or None if it cannot be built within K children."""
        tree, removed = remove_duplicate_brackets(tree)
        self.report.duplicate_brackets_removed += removed
        if widest_phrase(tree) > self.max_children:
            self.report.too_wide += 1
            return None
        if self.rules.constraints and not obeys_constraints(tree):
            self.report.breaks_constraints += 1
            return None
        return tree

    def add_sentence(self, tree: Tree, sentence: int) -> list[Inference]:
        """Generate the examples of one (prepared) gold tree along each of its ``paths`` paths; return the
        steps taken, path after path (every path builds each gold phrase once, so each has the same
        length)."""
        self.report.sentences += 1
        leaves = leaf_items(tree.tagged_words(), self.normalize)
        steps: list[Inference] = []
        for number in range(self.paths):
            # each path from a fresh table: what a state's examples hold depends on nothing but that state
            items = ItemTable(leaves, self.symbols, self.max_children)
            self.space.fit()
            if self.heads.grow(self.symbols):
                self._spec = None
            # row ids per label
            cache = WindowCache(self.max_children, MAX_CONTEXT, len(self.labels), np.int64)
            steps += walk_path(Oracle(tree, leaves), self.seed, sentence,
                               lambda state: self._add_state(state, items, cache), self.rules.order, number)
        self.report.used += 1
        return steps

    def _buffer(self, name: str, size: int, dtype: type) -> np.ndarray:
        found = self._buffers.get(name)
        if found is None or len(found) < size:
            found = self._buffers[name] = np.empty(max(size, 2 * len(found) if found is not None else size),
                                                   dtype=dtype)
            self._out = None
        return found

    def _room(self, row_size: int, candidates: int, rows: int) -> ExampleBuffers:
        """The kernel's buffers, each grown to what one state can need."""
        k = self.max_children
        codes, ids = self._buffer("codes", row_size, np.int64), self._buffer("ids", row_size, np.int32)
        children = self._buffer("children", k, np.int32)
        label, row = self._buffer("label", candidates, np.int16), self._buffer("row", candidates, np.int32)
        y = self._buffer("y", candidates, np.int8)
        indptr = self._buffer("indptr", rows + 1, np.int64)
        indices = self._buffer("indices", rows * row_size, np.int32)
        if self._out is None:
            self._out = ExampleBuffers(codes, ids, children, label, row, y, indptr, indices)
        return self._out

    def _add_state(self, oracle: Oracle, items: ItemTable, cache: WindowCache) -> None:
        frontier = items.frontier(oracle.frontier)
        label_index = {label: i for i, label in enumerate(self.labels)}
        if self.rules.order == "random":
            keys = oracle.correct_keys()
        else:  # a deterministic order: its one next inference is the only correct one (paper §3.5)
            keys = {oracle.key(next_inference(oracle, self.rules.order))}
        correct = np.array([(first, end, label_index[label]) for first, end, label in keys],
                           dtype=np.int32).reshape(-1, 3)
        n, k = len(frontier), self.max_children
        spans = sum(min(k, n - first) for first in range(n))
        row_size = row_capacity(k, items.size)
        candidates = spans * len(self.labels)
        rows = spans * min(k, len(self.labels))
        self.space.reserve_ids(rows * row_size)
        cache.room(spans)
        out = self._room(row_size, candidates, rows)
        if self._spec is None or self._spec_symbols != len(self.symbols):
            self._spec = self.rules.spec(self.label_symbols, self.root, k, self.heads.arrays())
            self._spec_symbols = len(self.symbols)
        n_cand, n_new, n_nz = state_examples(frontier, correct, items.arrays(), self._spec,
                                             self.space.arrays(), self.examples.row_ids, cache.lookup,
                                             cache.arrays(), out)
        self.report.states += 1
        self.examples.add_state(out.label[:n_cand].copy(), out.row[:n_cand].copy(), out.y[:n_cand].copy())
        if n_new:
            self.sink(out.indptr[:n_new + 1], out.indices[:n_nz])

    def finish(self) -> None:
        """Fill the report's per-label counts (call once every sentence is in)."""
        candidates, positives = self.examples.counts()
        for i, label in enumerate(self.labels):
            self.report.candidates[label] = int(candidates[i])
            self.report.positives[label] = int(positives[i])
