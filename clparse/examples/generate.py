"""Training examples along one seeded random bottom-up path per tree (paper §2.1.1).

At every state on the path, every candidate inference becomes an example for
its label, y = +1 if it is correct and -1 otherwise. Feature sets are stored
once (identical sets share one *row*); each label keeps (row, y) pairs, which
:meth:`ExampleSet.deduplicated` merges into multiplicities (exact: identical
features and label always share a margin).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from clparse.examples.features import FeatureConfig, FeatureDictionary, FeatureExtractor
from clparse.examples.state import Item, Oracle, allowed_labels, build, leaf_items
from clparse.preprocess.heads import head_child_index
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


def walk_randomly(oracle: Oracle, seed: int, sentence: int,
                  visit: Callable[[Oracle], object] = lambda _: None) -> list[Inference]:
    """Build the gold tree in a random topological order, calling ``visit`` on each state before its inference.

    The next inference is drawn uniformly from the correct ones with a generator seeded by
    ``(seed, sentence)``, so a sentence's path does not depend on any other sentence.
    """
    rng = np.random.default_rng([seed, sentence])
    path: list[Inference] = []
    while not oracle.finished():
        visit(oracle)
        choices = oracle.buildable()
        item = oracle.apply(choices[int(rng.integers(len(choices)))])
        path.append((item.start, item.end, item.label))
    return path


def random_path(tree: Tree, seed: int, sentence: int) -> list[Inference]:
    """The random bottom-up path of a tree (what :meth:`ExampleGenerator.add_sentence` walks)."""
    return walk_randomly(Oracle(tree, leaf_items(tree.tagged_words())), seed, sentence)


def replay(tagged_words: Sequence[tuple[str, str]], path: Sequence[Inference]) -> Item:
    """Apply a stored path to the leaves and return the final item (for checking it rebuilds the gold tree)."""
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


@dataclass
class ExampleSet:
    """Feature rows shared by all labels, and per label the (row, y) of every example.

    Compact on purpose (GUM has ~1.4 M examples per label): a row is kept once, as the bytes of its
    sorted int32 feature ids (the same bytes object is the dictionary key), and each label's
    examples are typed arrays, not lists of Python ints.
    """

    labels: tuple[str, ...]
    rows: list[bytes] = field(default_factory=list)
    row_ids: dict[bytes, int] = field(default_factory=dict)
    examples: dict[str, tuple[array, array]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label in self.labels:
            self.examples.setdefault(label, (array("i"), array("b")))

    def row(self, features: set[int]) -> int:
        key = np.fromiter(sorted(features), dtype=np.int32, count=len(features)).tobytes()
        found = self.row_ids.get(key)
        if found is None:
            found = self.row_ids[key] = len(self.rows)
            self.rows.append(key)
        return found

    def add(self, label: str, row: int, y: int) -> None:
        rows, ys = self.examples[label]
        rows.append(row)
        ys.append(y)

    def deduplicated(self, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unique (row, y) pairs of a label with their multiplicities, sorted by (row, y)."""
        rows, ys = self.examples[label]
        pairs = np.frombuffer(rows, dtype=np.int32).astype(np.int64) * 2 + (np.frombuffer(ys, dtype=np.int8) > 0)
        unique, counts = np.unique(pairs, return_counts=True)
        return (unique // 2).astype(np.int32), np.where(unique % 2 == 1, 1, -1).astype(np.int8), \
            counts.astype(np.int32)

    def take_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`csr`, then drop the row list and its index (halves peak memory when writing)."""
        result = self.csr()
        self.rows.clear()
        self.row_ids.clear()
        return result

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The shared rows as CSR ``indptr`` (int64) and ``indices`` (int32)."""
        lengths = np.fromiter((len(r) // 4 for r in self.rows), dtype=np.int64, count=len(self.rows))
        indptr = np.zeros(len(self.rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        return indptr, np.frombuffer(b"".join(self.rows), dtype=np.int32)


@dataclass
class GenerationReport:
    sentences: int = 0
    used: int = 0
    too_wide: int = 0
    duplicate_brackets_removed: int = 0
    states: int = 0
    candidates: Counter[str] = field(default_factory=Counter)
    positives: Counter[str] = field(default_factory=Counter)


class ExampleGenerator:
    """Walks each training tree's random path and records every candidate as an example."""

    def __init__(self, labels: Sequence[str], config: FeatureConfig, dictionary: FeatureDictionary,
                 max_children: int = 5, seed: int = 0, normalize: Callable[[str], str] = str.lower) -> None:
        self.labels = tuple(sorted(labels))
        self.extractor = FeatureExtractor(config, dictionary)
        self.context = config.context
        self.max_children = max_children
        self.seed = seed
        self.normalize = normalize
        self.examples = ExampleSet(self.labels)
        self.report = GenerationReport()

    def prepare_tree(self, tree: Tree) -> Tree | None:
        """The gold tree as training sees it, or None if it cannot be built within K children."""
        tree, removed = remove_duplicate_brackets(tree)
        self.report.duplicate_brackets_removed += removed
        if widest_phrase(tree) > self.max_children:
            self.report.too_wide += 1
            return None
        return tree

    def add_sentence(self, tree: Tree, sentence: int) -> list[Inference]:
        """Generate the examples of one (prepared) gold tree; return the path taken."""
        self.report.sentences += 1
        oracle = Oracle(tree, leaf_items(tree.tagged_words(), self.normalize))
        cache: dict[tuple[int, ...], tuple[set[int], dict[int, int]]] = {}
        path = walk_randomly(oracle, self.seed, sentence, lambda state: self._add_state(state, cache))
        self.report.used += 1
        return path

    def _add_state(self, oracle: Oracle, cache: dict[tuple[int, ...], tuple[set[int], dict[int, int]]]) -> None:
        frontier = oracle.frontier
        correct = oracle.correct_keys()
        n, c = len(frontier), self.context
        self.report.states += 1
        for first in range(n):
            for end in range(first + 1, min(n, first + self.max_children) + 1):
                # Features look at the children and c context items each side: the same items (and the
                # same number of missing positions at the sentence edges) give the same features.
                key = (max(0, c - first), max(0, end + c - n)) \
                    + tuple(id(x) for x in frontier[max(0, first - c):end + c])
                entry = cache.get(key)
                if entry is None:
                    entry = cache[key] = (self.extractor.head_free(frontier, first, end), {})
                self._add_span(frontier, first, end, entry, correct)

    def _add_span(self, frontier: list[Item], first: int, end: int, entry: tuple[set[int], dict[int, int]],
                  correct: set[tuple[int, int, str]]) -> None:
        base, rows_by_head = entry
        child_labels = tuple(x.label for x in frontier[first:end])
        for label in allowed_labels(frontier, first, end, self.labels):
            head = head_child_index(label, child_labels)
            row = rows_by_head.get(head)
            if row is None:
                row = rows_by_head[head] = self.examples.row(
                    base | self.extractor.head_dependent(frontier, first, end, head))
            y = 1 if (first, end, label) in correct else -1
            self.examples.add(label, row, y)
            self.report.candidates[label] += 1
            self.report.positives[label] += y > 0
