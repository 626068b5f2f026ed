"""A sentence's items as integer arrays, for the compiled feature kernels.

Search and example generation build :class:`~clparse.features.state.Item` objects (their identity
is what makes states equal); this table gives every item an integer index and stores what the
features read: label, headtag and headword as symbol ids, span, children and head child. Leaves
are registered first, so leaf ``i`` (word ``i``) is item ``i``: the terminals under an item are the
items ``start .. end - 1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from clparse.features.arrays import grown
from clparse.features.kernel import ItemArrays, WindowArrays, new_lookup
from clparse.features.state import Item
from clparse.features.symbols import SymbolTable


class ItemTable:
    """Items of one sentence, indexed in registration order (leaves first)."""

    def __init__(self, leaves: Sequence[Item], symbols: SymbolTable, max_children: int) -> None:
        # Unseen strings (a tag the training data never had) get new symbols: the head rules still
        # need them, and the feature kernels give symbols past the code space no feature.
        self.symbols = symbols
        self.max_children = max_children
        self.index: dict[Item, int] = {}
        capacity = max(16, 4 * len(leaves))
        self.label = np.zeros(capacity, dtype=np.int32)
        self.tag = np.zeros(capacity, dtype=np.int32)
        self.word = np.zeros(capacity, dtype=np.int32)
        self.start = np.zeros(capacity, dtype=np.int32)
        self.end = np.zeros(capacity, dtype=np.int32)
        self.head = np.full(capacity, -1, dtype=np.int32)
        self.nkids = np.zeros(capacity, dtype=np.int32)
        # Wider than K: a gold phrase in a too-wide tree is never registered, but a caller's own
        # items may be; children past K are never read by a feature of a K-bounded candidate.
        self.kids = np.full((capacity, max(1, max_children)), -1, dtype=np.int32)
        self.size = 0
        self._arrays: ItemArrays | None = None  # the kernels' record, rebuilt when an array is replaced
        for position, leaf in enumerate(leaves):
            if leaf.start != position or not leaf.is_leaf:
                raise ValueError("leaves must be given in order, leaf i spanning word i")
            self.register(leaf)

    def _symbol(self, text: str) -> int:
        return self.symbols.add(text)

    def _grow(self) -> None:
        capacity = 2 * len(self.label)
        for name in ("label", "tag", "word", "start", "end", "head", "nkids", "kids"):
            setattr(self, name, grown(getattr(self, name), capacity, -1 if name in ("head", "kids") else 0))
        self._arrays = None

    def reserve(self, capacity: int) -> None:
        """Room for at least ``capacity`` items (the compiled search appends items itself)."""
        while len(self.label) < capacity:
            self._grow()

    def adopt(self, item: Item, index: int) -> None:
        """Name ``item`` as the item the compiled search appended at ``index`` (its rows are filled).

        An item already registered keeps its first index (the appended copy is left unused). The label
        and head child are checked against the appended row: the search and :func:`build` must agree.
        """
        if int(self.head[index]) != item.head or int(self.label[index]) != self.symbols.add(item.label):
            raise AssertionError(f"the compiled search built {item.label} over {item.start}..{item.end} "
                                 "differently from features.state.build")
        self.index.setdefault(item, index)

    def register(self, item: Item) -> int:
        """The item's index, registering it (and its children first) if new."""
        found = self.index.get(item)
        if found is not None:
            return found
        children = [self.register(child) for child in item.children]
        if self.size == len(self.label):
            self._grow()
        i = self.size
        self.label[i] = self._symbol(item.label)
        self.tag[i] = self._symbol(item.headtag)
        self.word[i] = self._symbol(item.headword)
        self.start[i], self.end[i], self.head[i] = item.start, item.end, item.head
        self.nkids[i] = len(children)
        if len(children) > self.kids.shape[1]:
            wider = np.full((len(self.kids), len(children)), -1, dtype=np.int32)
            wider[:, :self.kids.shape[1]] = self.kids
            self.kids = wider
            self._arrays = None
        self.kids[i, :len(children)] = children
        self.size += 1
        self.index[item] = i
        return i

    def frontier(self, items: Sequence[Item]) -> np.ndarray:
        """Indices of a frontier's items (registering new ones)."""
        index = self.index
        out = np.empty(len(items), dtype=np.int32)
        for position, item in enumerate(items):
            found = index.get(item)
            out[position] = self.register(item) if found is None else found
        return out

    def arrays(self) -> ItemArrays:
        """The kernels' record of the items (the same object until an array is grown)."""
        if self._arrays is None:
            self._arrays = ItemArrays(self.label, self.tag, self.word, self.start, self.end, self.nkids,
                                      self.kids, self.head)
        return self._arrays


class WindowCache:
    """Per sentence: what the kernels computed for each *window* (a span's children and context items).

    ``lookup`` maps a window's hash to an entry; ``windows[e]`` keeps the window itself (to verify a
    hit), ``values[e]`` one value per label (scores when parsing, row ids in ``prepare``). The
    kernels fill it; :meth:`room` grows it before a call (a state adds at most one entry per span,
    and the last row is the kernels' scratch entry for a hash collision).
    """

    def __init__(self, max_children: int, max_context: int, labels: int, dtype: type) -> None:
        self.lookup = new_lookup()  # a compiled call: Dict.empty from Python costs ~0.15 ms a sentence
        self.entries = np.zeros(1, dtype=np.int64)
        self.windows = np.zeros((0, 3 + max_children + 2 * max_context), dtype=np.int32)
        self.values: np.ndarray = np.zeros((0, labels), dtype=dtype)
        self._arrays: WindowArrays | None = None

    def __len__(self) -> int:
        return int(self.entries[0])

    def room(self, spans: int) -> None:
        need = len(self) + spans + 1
        if need > len(self.values):
            size = max(need, 2 * len(self.values), 256)
            windows = np.zeros((size, self.windows.shape[1]), dtype=np.int32)
            windows[:len(self.windows)] = self.windows
            values = np.zeros((size, self.values.shape[1]), dtype=self.values.dtype)
            values[:len(self.values)] = self.values
            self.windows, self.values = windows, values
            self._arrays = None

    def arrays(self) -> WindowArrays:
        """The kernels' record of the cache but ``lookup`` (the same object until :meth:`room` grows it)."""
        if self._arrays is None:
            self._arrays = WindowArrays(self.windows, self.values, self.entries)
        return self._arrays
