"""The best-first agenda search in compiled calls (:func:`~clparse.features.kernel.best_first_steps`).

:class:`Agenda` is one run of :func:`clparse.search.best_first.best_first` over a
:class:`~clparse.search.scorer.CandidateScorer`: it owns the search's arrays, grows them when the kernel
asks, and reads back the states the search reports. The kernel's items are interned per sentence
(:class:`Interning`, kept on the scorer), so every run of one sentence shares them and the window cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from clparse.features.arrays import grown
from clparse.features.kernel import (
    A_BEAM,
    A_BOUND_LEN,
    A_FREE,
    A_FRONT_USED,
    A_HI,
    A_INTS,
    A_KEY_USED,
    A_LAST,
    A_LEAVES,
    A_LO,
    A_MAPPED,
    A_MAX_KEY,
    A_MAX_POPS,
    A_PENDING,
    A_POPS,
    A_STATES,
    A_SUM,
    AGENDA_NEED_ROOM,
    RANK_BATCH,
    AgendaArrays,
    best_first_steps,
    new_lookup,
    row_capacity,
    span_count,
)
from clparse.features.state import Item

if TYPE_CHECKING:
    from clparse.search.scorer import CandidateScorer

Step = tuple[int, int, str, float]  # first frontier position, end position, label, confidence
FIRST_CAPACITY = 1024  # states and agenda slots at first: enough for most sentences (a growth costs a call)


class Interning:
    """A sentence's item rows named by the first row with the same label over the same children."""

    def __init__(self) -> None:
        self.lookup = new_lookup()  # hash -> newest row
        self.canon = np.zeros(0, dtype=np.int32)
        self.next = np.zeros(0, dtype=np.int32)  # the previous row with the same hash (-1: none)
        self.mapped = 0  # rows interned so far

    def room(self, rows: int) -> None:
        self.canon, self.next = grown(self.canon, rows), grown(self.next, rows, -1)


class Agenda:
    """One best-first search from ``frontier`` (the scorer's sentence), reported state by state."""

    def __init__(self, scorer: CandidateScorer, frontier: Sequence[Item], beam: int, max_pops: int,
                 aggregator: str, bound: tuple[float, ...] | None) -> None:
        self.scorer = scorer
        self.items = scorer._items(frontier)
        ids = self.items.frontier(frontier)
        n = len(ids)
        self.spans = span_count(n, scorer.max_children)
        self.interning = scorer.interning
        self.seen = new_lookup()  # frontier hash -> newest state
        states = min(max_pops, FIRST_CAPACITY) + 1
        slots = min(beam, FIRST_CAPACITY) + 1
        self.ints = np.zeros(A_INTS, dtype=np.int64)
        self.ints[A_MAX_POPS], self.ints[A_BEAM], self.ints[A_SUM] = max_pops, beam, aggregator == "sum"
        self.ints[A_LEAVES], self.ints[A_FREE], self.ints[A_PENDING] = n, slots, 0
        self.ints[A_STATES], self.ints[A_FRONT_USED] = 1, n
        self.ints[A_BOUND_LEN] = -1 if bound is None else len(bound)
        self.bound = np.array(bound or (), dtype=np.float64)
        self.st_front, self.st_len = np.zeros(states, dtype=np.int64), np.zeros(states, dtype=np.int32)
        self.st_key, self.st_klen = np.zeros(states, dtype=np.int64), np.zeros(states, dtype=np.int32)
        self.st_parent = np.full(states, -1, dtype=np.int32)
        self.st_next = np.full(states, -1, dtype=np.int32)
        self.st_step, self.st_conf = np.zeros((states, 3), dtype=np.int32), np.zeros(states, dtype=np.float64)
        self.front_pool = np.zeros(max(n * states, 1), dtype=np.int32)
        self.front_pool[:n], self.st_len[0] = ids, n  # state 0: the start
        self.key_pool = np.zeros(16 * states, dtype=np.float64)
        if aggregator == "sum":  # the start's key (0.0,); maxmin's is empty
            self.st_klen[0], self.ints[A_KEY_USED], self.ints[A_MAX_KEY] = 1, 1, 1
        self.slot_parent = np.zeros(slots, dtype=np.int32)
        self.slot_step = np.zeros((slots, 3), dtype=np.int32)
        self.slot_conf, self.slot_value = np.zeros(slots, dtype=np.float64), np.zeros(slots, dtype=np.float64)
        self.slot_at = np.zeros(slots, dtype=np.int32)
        self.order = np.zeros(slots + 1, dtype=np.int32)
        self.free = np.arange(slots, dtype=np.int32)
        self.batch = np.zeros(RANK_BATCH, dtype=np.int32)
        self._arrays: AgendaArrays | None = None

    def arrays(self) -> AgendaArrays:
        if self._arrays is None:
            self._arrays = AgendaArrays(self.ints, self.bound, self.st_front, self.st_len, self.st_key,
                                        self.st_klen, self.st_parent, self.st_step, self.st_conf,
                                        self.st_next,
                                        self.front_pool, self.key_pool, self.slot_parent, self.slot_step,
                                        self.slot_conf, self.slot_at, self.slot_value, self.order, self.free,
                                        self.interning.canon, self.interning.next, self.batch)
        return self._arrays

    def advance(self) -> tuple[int, int, int]:
        """Search on to the next report: (status, the state reported, pops so far)."""
        scorer, items, cache = self.scorer, self.items, self.scorer.cache
        c = scorer.compiled
        before = len(cache)
        self.ints[A_MAPPED] = self.interning.mapped
        while True:
            self._room()
            out = scorer._room(self.spans, self.spans * len(scorer.labels),
                               row_capacity(scorer.max_children, len(items.label)))
            status, items.size = best_first_steps(items.size, self.arrays(), self.interning.lookup, self.seen,
                                                  items.arrays(), c.spec(), c.features, c.trees,
                                                  c.leaves, cache.lookup, cache.arrays(), out)
            self.interning.mapped = int(self.ints[A_MAPPED])
            if status != AGENDA_NEED_ROOM:
                break
        scorer.scored += len(cache) - before
        return status, int(self.ints[A_LAST]), int(self.ints[A_POPS])

    def _room(self) -> None:
        """Room for one more pop and its offering (what the kernel's ``_agenda_room`` checks)."""
        ints, items = self.ints, self.items
        items.reserve(items.size + 32)  # margins: each growth costs one more call
        self.scorer.cache.room(4 * self.spans)
        self.interning.room(len(items.label))
        states = int(ints[A_STATES]) + 1
        if states > len(self.st_len):
            for name in ("st_front", "st_len", "st_key", "st_klen", "st_step", "st_conf"):
                setattr(self, name, grown(getattr(self, name), states))
            self.st_parent = grown(self.st_parent, states, -1)
            self.st_next = grown(self.st_next, states, -1)
        self.front_pool = grown(self.front_pool, int(ints[A_FRONT_USED] + ints[A_LEAVES]))
        self.key_pool = grown(self.key_pool, int(ints[A_KEY_USED] + ints[A_MAX_KEY]) + 1)
        live = int(ints[A_HI] - ints[A_LO])
        entering = min(int(ints[A_BEAM]) - live, self.spans * len(self.scorer.labels)) + 1
        if ints[A_FREE] < entering:  # new slots, all free
            old = len(self.slot_parent)
            size = old + entering - int(ints[A_FREE])
            for name in ("slot_parent", "slot_step", "slot_conf", "slot_at", "slot_value"):
                setattr(self, name, grown(getattr(self, name), size))
            added = len(self.slot_parent) - old
            self.free = grown(self.free, len(self.slot_parent))
            self.free[ints[A_FREE]:ints[A_FREE] + added] = np.arange(old, old + added, dtype=np.int32)
            ints[A_FREE] += added
        self.order = grown(self.order, max(live + entering, len(self.slot_parent) + 1))
        self._arrays = None

    def path(self, state: int) -> list[Step]:
        """The inferences from the start to ``state``, in order."""
        steps: list[Step] = []
        labels = self.scorer.labels
        while state > 0:
            first, end, label = (int(x) for x in self.st_step[state])
            steps.append((first, end, labels[label], float(self.st_conf[state])))
            state = int(self.st_parent[state])
        steps.reverse()
        return steps

    def adopt(self, state: int, frontier: Sequence[Item]) -> None:
        """Name ``frontier`` (the Python items of ``state``) by the kernel's rows, so that scoring it later
        finds the windows cached."""
        at = int(self.st_front[state])
        index = self.items.index
        for item, row in zip(frontier, self.front_pool[at:at + len(frontier)].tolist()):
            index.setdefault(item, row)
