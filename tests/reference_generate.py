"""Reference example generation in plain Python: the oracle for the compiled ``prepare`` path.

clparse's generator before the features were compiled, kept unchanged (over the reference
extractor of tests/reference_features.py): the parity tests check that the kernel path stores the
same feature ids, rows and examples, byte for byte.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from clparse.features.space import FeatureConfig
from clparse.examples.generate import ExampleGenerator as CompiledGenerator
from clparse.examples.generate import GenerationReport, Inference, walk_path
from clparse.features.state import Item, Oracle, allowed_labels, leaf_items
from clparse.features.symbols import CandidateRules, SymbolTable
from clparse.preprocess.heads import head_child_index
from clparse.read.tree import Tree
from tests.reference_features import FeatureDictionary, FeatureExtractor


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
        pairs = (np.frombuffer(rows, dtype=np.int32).astype(np.int64) * 2
                 + (np.frombuffer(ys, dtype=np.int8) > 0))
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

    prepare_tree = CompiledGenerator.prepare_tree  # not feature code: shared
    # the reference predates the candidate constraints
    rules = CandidateRules(SymbolTable(), constraints=False)

    def add_sentence(self, tree: Tree, sentence: int) -> list[Inference]:
        """Generate the examples of one (prepared) gold tree; return the path taken."""
        self.report.sentences += 1
        oracle = Oracle(tree, leaf_items(tree.tagged_words(), self.normalize))
        cache: dict[tuple[int, ...], tuple[set[int], dict[int, int]]] = {}
        path = walk_path(oracle, self.seed, sentence, lambda state: self._add_state(state, cache))
        self.report.used += 1
        return path

    def _add_state(self, oracle: Oracle,
                   cache: dict[tuple[int, ...], tuple[set[int], dict[int, int]]]) -> None:
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
