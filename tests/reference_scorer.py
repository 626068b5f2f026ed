"""Reference scorer in plain Python: clparse's scorer before the compiled kernels, kept as an oracle.

The parity tests check that the compiled scorer (clparse.search.scorer) gives exactly these
confidences, bit for bit, on every state of real searches.

Confidences Q(I) of every candidate inference of a state, with a cache shared across states.

A candidate's features look only at its children and ``context`` frontier items on each side, so
two candidates over the same items (the same objects) at the same distance from the sentence
edges have the same features. States of one search share items, so the cache, keyed by those
items, serves every state that contains them. Features unseen in training have no id and are
dropped (no tree can test them). Candidates are scored in one batch per label.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from clparse.features.state import Item, allowed_labels
from clparse.preprocess.heads import head_child_index
from clparse.rebuild.model import ParserModel
from tests.reference_features import FeatureDictionary, FeatureExtractor, FeatureKey

Scored = tuple[int, int, str, float]

# The head rules are a pure function of the label and the children's labels: memoize them.
# first frontier position, end position, label, confidence
_head = lru_cache(maxsize=65_536)(head_child_index)


class KnownFeatures(FeatureDictionary):
    """The training run's feature ids, read-only: an unseen feature maps to -1."""

    def __init__(self, ids: dict[FeatureKey, int]) -> None:
        super().__init__()
        self.ids = ids

    def id(self, key: FeatureKey) -> int:
        return self.ids.get(key, -1)


class MemoizedExtractor(FeatureExtractor):
    """Feature extraction with each item's contribution computed once per slot or group.

    In a search the same item sits in many candidates' children and context; its ids for a given
    slot (``context[left-1]``) or group (``exists[non-head]``) never change, so they are memoized
    (keyed by the item object, which the cache keeps alive for the sentence).
    """

    def __init__(self, config: Any, dictionary: FeatureDictionary) -> None:
        super().__init__(config, dictionary)
        self._items: dict[tuple[str, str, Item | None], frozenset[int]] = {}
        self._groups: dict[tuple[str, Item], frozenset[int]] = {}

    def _item_features(self, out: set[int], template: str, slot: str, item: Item | None) -> None:
        key = (template, slot, item)
        found = self._items.get(key)
        if found is None:
            part: set[int] = set()
            super()._item_features(part, template, slot, item)
            found = self._items[key] = frozenset(part)
        out |= found

    def _group_features(self, out: set[int], group: str, items: Sequence[Item]) -> None:
        for item in items:
            key = (group, item)
            found = self._groups.get(key)
            if found is None:
                part: set[int] = set()
                super()._group_features(part, group, (item,))
                found = self._groups[key] = frozenset(part)
            out |= found


class CandidateScorer:
    """Scores the candidates of states of one sentence (make one per sentence: the cache holds items)."""

    def __init__(self, model: ParserModel) -> None:
        self.model = model
        self.labels = model.labels
        self.extractor = MemoizedExtractor(model.features, KnownFeatures(model.feature_ids))
        self.context = model.features.context
        self.max_children = model.max_children
        self.cache: dict[tuple[object, ...], dict[str, float]] = {}
        self.scored = 0  # candidates scored (cache misses), for reports

    def _key(self, frontier: Sequence[Item], first: int, end: int) -> tuple[object, ...]:
        c, n = self.context, len(frontier)
        return (max(0, c - first), max(0, end + c - n), *frontier[max(0, first - c):end + c])

    def candidates(self, frontier: Sequence[Item]) -> list[Scored]:
        """Every candidate of the state with its confidence, in the fixed order (first, end, label)."""
        n = len(frontier)
        spans = [(first, end) for first in range(n)
                 for end in range(first + 1, min(n, first + self.max_children) + 1)]
        missing = [(first, end) for first, end in spans if self._key(frontier, first, end) not in self.cache]
        if missing:
            self._score(frontier, missing)
        out: list[Scored] = []
        for first, end in spans:
            scores = self.cache[self._key(frontier, first, end)]
            out.extend((first, end, label, scores[label]) for label in allowed_labels(frontier, first, end,
                                                                                        self.labels))
        return out

    def _score(self, frontier: Sequence[Item], spans: list[tuple[int, int]]) -> None:
        batches: dict[str, tuple[list[tuple[object, ...]], list[np.ndarray]]] = {}
        for first, end in spans:
            key = self._key(frontier, first, end)
            base = self.extractor.head_free(frontier, first, end)
            by_head: dict[int, np.ndarray] = {}
            child_labels = tuple(x.label for x in frontier[first:end])
            for label in allowed_labels(frontier, first, end, self.labels):
                head = _head(label, child_labels)
                row = by_head.get(head)
                if row is None:
                    ids = base | self.extractor.head_dependent(frontier, first, end, head)
                    ids.discard(-1)
                    row = by_head[head] = np.array(sorted(ids), dtype=np.int32)
                keys, rows = batches.setdefault(label, ([], []))
                keys.append(key)
                rows.append(row)
            self.cache[key] = {}
        for label, (keys, rows) in batches.items():
            indptr = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum([len(r) for r in rows], out=indptr[1:])
            scores = self.model.ensembles[label].score(indptr, np.concatenate(rows))
            self.scored += len(rows)
            for key, score in zip(keys, scores):
                self.cache[key][label] = float(score)
