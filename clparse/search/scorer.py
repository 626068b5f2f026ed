"""Confidences Q(I) of every candidate inference of a state: one compiled call per state.

:class:`CompiledModel` turns a :class:`~clparse.rebuild.model.ParserModel` into what the kernels
read (symbol ids, the code -> feature id table restricted to features some tree tests, every
label's trees as one node array), once per model. :class:`CandidateScorer` holds one sentence's
items and window cache (make one per sentence) and returns a state's candidates as arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from clparse.features.items import ItemTable, WindowCache
from clparse.features.kernel import (
    MAX_CONTEXT,
    CandidateSpec,
    RowBuffers,
    ScoreBuffers,
    TreeArrays,
    candidate_rows,
    row_capacity,
    score_state,
)
from clparse.features.space import FeatureSpace
from clparse.features.state import Item
from clparse.features.symbols import CandidateRules, HeadTable, SymbolTable
from clparse.forest import Forest
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.rebuild.model import ParserModel


@dataclass
class CandidateArrays:
    """A state's candidates in candidate order (span start, span end, label): parallel arrays."""

    first: np.ndarray
    end: np.ndarray
    label: np.ndarray  # index into ``labels``
    confidence: np.ndarray
    labels: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.first)


class CompiledModel:
    """The parts of a parser model the kernels read, built once per model."""

    def __init__(self, model: ParserModel, full_table: bool = False) -> None:
        self.model = model
        self.labels = model.labels
        self.symbols = SymbolTable()
        self.label_symbols = np.array([self.symbols.add(label) for label in self.labels], dtype=np.int32)
        self.root = self.labels.index(ROOT_LABEL) if ROOT_LABEL in self.labels else -1
        ensembles = [model.ensembles[label] for label in self.labels]
        used: set[int] = set()
        for ensemble in ensembles:
            used.update(int(f) for f in ensemble.forest.feature if f >= 0)
        # Scoring only needs the features some tree tests; full_table keeps every stored feature (rows).
        self.space = FeatureSpace.from_keys(model.features, self.symbols, model.feature_ids,
                                            keep=(lambda _: True) if full_table else used.__contains__)
        self.heads = HeadTable(self.symbols)
        self.rules = CandidateRules(self.symbols, model.constraints, model.order)
        self.presence_size = max(len(self.space), 1)
        joined, offsets = Forest.join([e.forest for e in ensembles])
        self.trees = TreeArrays(offsets, joined.roots, joined.feature, joined.true_child, joined.false_child,
                                joined.value)
        self._spec: CandidateSpec | None = None
        self._spec_symbols = 0  # the symbol table's size when _spec was built

    def spec(self) -> CandidateSpec:
        """The kernels' record of the candidates (rebuilt when parsing has grown the symbol table)."""
        if self._spec is None or self._spec_symbols != len(self.symbols):
            if self.heads.size < len(self.symbols):  # a tag or word no training tree had
                self.heads = HeadTable(self.symbols)
            self._spec = self.rules.spec(self.label_symbols, self.root, self.model.max_children,
                                         self.heads.arrays())
            self._spec_symbols = len(self.symbols)
        return self._spec


class CandidateScorer:
    """Scores the candidates of states of one sentence (make one per sentence: the cache holds its items)."""

    def __init__(self, model: ParserModel | CompiledModel) -> None:
        self.compiled = model if isinstance(model, CompiledModel) else compiled(model)
        self.labels = self.compiled.labels
        self.context = self.compiled.model.features.context
        self.max_children = self.compiled.model.max_children
        self.items: ItemTable | None = None
        self.cache = WindowCache(self.max_children, MAX_CONTEXT, len(self.labels), np.float64)  # scores
        self.present = np.zeros(self.compiled.presence_size, dtype=np.int32)
        self._out: dict[str, np.ndarray] = {}
        self._buffers: ScoreBuffers | None = None  # the kernel's record of present and _out
        self.scored = 0  # windows scored (cache misses), for reports

    def _items(self, frontier: Sequence[Item]) -> ItemTable:
        if self.items is None:  # the first state is the leaves
            self.items = ItemTable(list(frontier), self.compiled.symbols, self.max_children)
        return self.items

    def _room(self, spans: int, candidates: int, codes: int) -> ScoreBuffers:
        self.cache.room(spans)
        for name, size, dtype in (("first", candidates, np.int32), ("end", candidates, np.int32),
                                  ("label", candidates, np.int32), ("conf", candidates, np.float64),
                                  ("codes", codes, np.int64), ("touched", codes, np.int32),
                                  ("children", self.max_children, np.int32),
                                  ("label_heads", len(self.labels), np.int64)):
            found = self._out.get(name)
            if found is None or len(found) < size:
                self._out[name] = np.empty(max(size, 2 * len(found) if found is not None else size),
                                           dtype=dtype)
                self._buffers = None
        if self._buffers is None:
            out = self._out
            self._buffers = ScoreBuffers(self.present, out["codes"], out["touched"], out["children"],
                                         out["label_heads"], out["first"], out["end"], out["label"],
                                         out["conf"])
        return self._buffers

    def candidates(self, frontier: Sequence[Item]) -> CandidateArrays:
        """Every candidate of the state with its confidence, in the fixed order (first, end, label).

        The arrays are views of buffers reused by the next call: use them before calling again.
        """
        items = self._items(frontier)
        ids = items.frontier(frontier)
        n, k = len(ids), self.max_children
        spans = span_count(n, k)
        out = self._room(spans, spans * len(self.labels), row_capacity(k, items.size))
        cache, c = self.cache, self.compiled
        before = len(cache)
        count = score_state(ids, items.arrays(), c.spec(), c.space.arrays(), c.trees, cache.lookup,
                            cache.arrays(), out)
        self.scored += len(cache) - before
        return CandidateArrays(out.first[:count], out.end[:count], out.label[:count], out.confidence[:count],
                               self.labels)


def span_count(n: int, k: int) -> int:
    """Runs of 1..k consecutive items among n: Σ_first min(k, n - first)."""
    return n * (n + 1) // 2 if n <= k else n * k - k * (k - 1) // 2


def compiled(model: ParserModel) -> CompiledModel:
    """The model's compiled form, built on first use and kept on the model."""
    found = getattr(model, "_compiled", None)
    if found is None:
        found = CompiledModel(model)
        model._compiled = found  # type: ignore[attr-defined]
    return found


def state_rows(model: CompiledModel, items: ItemTable,
               frontier: np.ndarray) -> list[tuple[int, int, str, np.ndarray]]:
    """The feature row (sorted ids) of every candidate of a state, as the search's kernels compute it.

    For the parity test against the rows ``prepare`` stored; ``model`` must be built with
    ``full_table=True`` so that every stored feature has its id.
    """
    n, k = len(frontier), model.model.max_children
    spans = span_count(n, k)
    size = row_capacity(k, items.size)
    candidates = spans * len(model.labels)
    out = RowBuffers(np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int32),
                     np.empty(k, dtype=np.int32), np.empty(candidates, dtype=np.int32),
                     np.empty(candidates, dtype=np.int32),
                     np.empty(candidates, dtype=np.int32), np.zeros(candidates + 1, dtype=np.int64),
                     np.empty(candidates * size, dtype=np.int32))
    count = candidate_rows(frontier, items.arrays(), model.spec(), model.space.arrays(), out)
    return [(int(out.first[i]), int(out.end[i]), model.labels[out.label[i]],
             out.indices[out.indptr[i]:out.indptr[i + 1]].copy()) for i in range(count)]
