"""Confidences Q(I) of every candidate inference of a state: one compiled call per state.

:class:`CompiledModel` turns a :class:`~clparse.rebuild.model.ParserModel` into what the kernels
read (symbol ids, the code -> feature id table restricted to features some tree tests, every
label's trees as one node array), once per model. :class:`CandidateScorer` holds one sentence's
items and window cache (make one per sentence) and returns a state's candidates as arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from clparse.features.items import ItemTable, WindowCache
from clparse.features.kernel import (
    MAX_CONTEXT,
    CandidateSpec,
    LeafMasks,
    RowBuffers,
    ScoreBuffers,
    TreeArrays,
    GREEDY_DONE,
    GREEDY_NEED_ROOM,
    candidate_rows,
    greedy_steps,
    leaf_masks,
    row_capacity,
    span_count,
    score_state,
)
from clparse.features.space import FeatureSpace
from clparse.features.state import Item, replaced
from clparse.features.symbols import CandidateRules, HeadTable, SymbolTable
from clparse.forest import Forest
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.rebuild.model import ParserModel
from clparse.search.agenda import Agenda, Interning


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

    def __init__(self, model: ParserModel, full_table: bool = False, walk: bool = False) -> None:
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
        joined, offsets = Forest.join([e.forest for e in ensembles])
        # The kernels score in their own numbering of the features some tree tests (0 .. n - 1: 5,081 of
        # 148,689 stored ids in the GUM model), so that the per-feature arrays read at random for every
        # window (presence, leaf-mask offsets) stay small enough for the cache. ``space`` keeps the stored
        # ids (candidate rows).
        tested = np.unique(joined.feature[joined.feature >= 0])
        renumber = np.full(max(len(self.space), 1), -1, dtype=np.int32)
        renumber[tested] = np.arange(len(tested), dtype=np.int32)
        self.features = self.space.arrays()._replace(table=_renumbered(self.space.table, renumber))
        self.presence_size = max(len(tested), 1)
        self.trees = TreeArrays(offsets, joined.roots, _renumbered(joined.feature, renumber),
                                joined.true_child, joined.false_child, joined.value)
        # Trees are scored by their leaf masks (walk: node by node, the reference the tests hold them to).
        self.leaves: LeafMasks = leaf_masks(self.trees, self.presence_size, walk)
        self._spec: CandidateSpec | None = None
        self._spec_symbols = 0  # the symbol table's size when _spec was built

    def spec(self) -> CandidateSpec:
        """The kernels' record of the candidates (rebuilt when parsing has grown the symbol table)."""
        if self._spec is None or self._spec_symbols != len(self.symbols):
            self.heads.grow(self.symbols)  # a tag or word no training tree had
            self._spec = self.rules.spec(self.label_symbols, self.root, self.model.max_children,
                                         self.heads.arrays())
            self._spec_symbols = len(self.symbols)
        return self._spec


def _renumbered(ids: np.ndarray, renumber: np.ndarray) -> np.ndarray:
    """Feature ids through ``renumber`` (stored id -> the search's), -1 (no feature) left as it is."""
    return np.where(ids >= 0, renumber[np.maximum(ids, 0)], -1).astype(np.int32)


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
        self.interning = Interning()  # the compiled agenda's item names, shared by its runs on the sentence

    def _items(self, frontier: Sequence[Item]) -> ItemTable:
        if self.items is None:  # the first state is the leaves
            self.items = ItemTable(list(frontier), self.compiled.symbols, self.max_children)
        return self.items

    def _room(self, spans: int, candidates: int, codes: int) -> ScoreBuffers:
        self.cache.room(spans)
        leaves = self.compiled.leaves
        for name, size, dtype in (("first", candidates, np.int32), ("end", candidates, np.int32),
                                  ("label", candidates, np.int32), ("conf", candidates, np.float64),
                                  ("codes", codes, np.int64), ("touched", codes, np.int32),
                                  ("children", self.max_children, np.int32),
                                  ("label_heads", len(self.labels), np.int64),
                                  ("masks", leaves.word_base[-1], np.uint64),
                                  ("undo_word", len(leaves.node_word), np.int64),
                                  ("undo_mask", len(leaves.node_word), np.uint64)):
            found = self._out.get(name)
            if found is None or len(found) < size:
                self._out[name] = np.empty(max(size, 2 * len(found) if found is not None else size),
                                           dtype=dtype)
                self._buffers = None
        if self._buffers is None:
            out = self._out
            self._buffers = ScoreBuffers(self.present, out["codes"], out["touched"], out["children"],
                                         out["label_heads"], out["masks"], out["undo_word"], out["undo_mask"],
                                         out["first"], out["end"], out["label"], out["conf"])
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
        count = score_state(ids, items.arrays(), c.spec(), c.features, c.trees, c.leaves, cache.lookup,
                            cache.arrays(), out)
        self.scored += len(cache) - before
        return CandidateArrays(out.first[:count], out.end[:count], out.label[:count], out.confidence[:count],
                               self.labels)

    def agenda(self, frontier: Sequence[Item], beam: int, max_pops: int, aggregator: str,
               bound: tuple[float, ...] | None) -> Agenda:
        """The best-first agenda search from ``frontier`` in compiled calls (:class:`Agenda`)."""
        return Agenda(self, frontier, beam, max_pops, aggregator, bound)

    def greedy(self, frontier: Sequence[Item], make: Callable[[str, tuple[Item, ...]], Item],
               max_steps: int) -> tuple[tuple[Item, ...], list[tuple[int, int, str, float]], bool]:
        """Greedy search from ``frontier`` in compiled calls (:func:`~clparse.features.kernel.greedy_steps`):
        always the best candidate, ties in candidate order, at most ``max_steps`` inferences.

        Returns the last frontier (its items made by ``make``, as the Python search makes them), the
        inferences in order as (first, end, label, confidence), and whether ROOT was built.
        """
        items = self._items(frontier)
        ids = items.frontier(frontier)
        first_new = items.size
        steps = np.empty((max(max_steps, 1), 3), dtype=np.int32)
        confidences = np.empty(max(max_steps, 1), dtype=np.float64)
        n, size, taken, k = len(ids), items.size, 0, self.max_children
        c, cache = self.compiled, self.cache
        before = len(cache)
        while True:
            spans = span_count(n, k)
            items.reserve(size + n + 16)
            out = self._room(spans, spans * len(self.labels), row_capacity(k, len(items.label)))
            status, n, size, taken = greedy_steps(ids[:n], size, steps, confidences, taken, max_steps,
                                                  items.arrays(), c.spec(), c.features, c.trees,
                                                  c.leaves, cache.lookup, cache.arrays(), out)
            items.size = size
            if status != GREEDY_NEED_ROOM:
                break
        self.scored += len(cache) - before
        built = tuple(frontier)
        path: list[tuple[int, int, str, float]] = []
        for step, confidence in zip(range(taken), confidences[:taken].tolist()):
            first, end, label = (int(x) for x in steps[step])
            item = make(self.labels[label], built[first:end])
            items.adopt(item, first_new + step)
            built = replaced(built, first, end, item)
            path.append((first, end, self.labels[label], confidence))
        return built, path, status == GREEDY_DONE


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
