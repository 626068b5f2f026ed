"""Binary features of a candidate inference (paper §2.1.4, Tables 1-2): settings, keys and ids.

The features are computed by the compiled kernels of :mod:`clparse.features.kernel`, the one
implementation both ``prepare`` and the parser use; this module says what they are.

Every feature asks "does item X have property P = v?". A feature is the
tuple ``(template, item, property, value)``, e.g. ``("context", "left-1",
"headtag", "NN")``. Templates:

* ``child``: the candidate's children by position (first, last, head,
  head-1, head+1);
* ``context``: frontier items left and right of the children (left-1 is the
  nearest), ``FeatureConfig.context`` on each side;
* ``grandchild``: first/last child of the first, last and head child;
* ``exists``: some item of a Table 2 group has the property;
* ``exists-terminal``: some terminal under a group's items has the property.

Absent positions (no head-1, sentence edge, a leaf's children) have the value
``<none>``. Only the head-dependent features change with the label (the head
child comes from the label's head rule), so extraction is split in two:
the head-free part is shared by every label of a span.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from clparse.errors import ConfigurationError
from clparse.features.kernel import MAX_COUNT, N_SLOTS, FeatureTable, count_bucket, slot_names
from clparse.features.symbols import SymbolTable
from clparse.preprocess.transforms import PUNCTUATION_TAGS

NONE = "<none>"
PROPERTIES = ("label", "headtag", "headword")
TERMINAL_PROPERTIES = ("headtag", "headword")  # a terminal's label is its tag
HEAD_FREE_GROUPS = ("all", "non-leftmost", "non-rightmost")


@dataclass(frozen=True)
class FeatureConfig:
    """Which templates are on; stored with every run."""

    context: int = 2
    child: bool = True
    grandchild: bool = True
    exists: bool = True
    exists_terminal: bool = True
    # Richer templates (issue #11): on by default since the ablation (docs/accuracy.md) measured them
    # +0.60 F1 over the paper's templates; runs stored before them had none (see from_dict).
    child_extra: bool = True  # child[second], [second-to-last], [head-2], [head+2]
    head_of_child: bool = True  # grandchild[first.head], [last.head], [head.head]
    context_exists: bool = True  # exists[left-context], exists[right-context] over the context items
    length: bool = True  # length[children], length[terminals], bucketed
    # Issue 27, opt-in until measured: the span's first/last terminal and the terminals just outside it.
    span_edges: bool = False
    # Issue 27, opt-in until measured: counts of the punctuation words in the span and among its children.
    punctuation: bool = False
    # Issue 29, opt-in: beside every test of a tag, the same test of its coarse class (COARSE_TAGS), which a
    # tagger's errors inside a class (NN/NNP, VBD/VBN, VB/VBP) do not change; measured no closer to gold tags
    # from raw tokens (docs/tagger.md).
    coarse_tags: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.context <= 5:
            raise ConfigurationError(f"context must be between 0 and 5 items, got {self.context}")

    @classmethod
    def paper(cls, context: int = 2) -> FeatureConfig:
        """The paper's Tables 1-2 only (no richer template)."""
        return cls(context=context, **dict.fromkeys(TEMPLATES, False))

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        if not self.coarse_tags:  # stored (and digested) only when on: older runs' settings stay as they were
            del values["coarse_tags"]
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FeatureConfig:
        """A stored configuration; a template it does not name was off (it did not exist then)."""
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ConfigurationError(f"unknown feature settings: {', '.join(sorted(unknown))}")
        return cls(**{**dict.fromkeys(TEMPLATES, False), **values})


#: The richer templates of issue #11 (each a FeatureConfig flag, on by default), in CLI spelling order.
RICHER = ("child_extra", "head_of_child", "context_exists", "length")
#: Every switchable template: the richer ones and the opt-in ones after them.
TEMPLATES = (*RICHER, "span_edges", "punctuation", "coarse_tags")

#: The coarse class of each fine tag (coarse-tags): the universal tag set's classes (Petrov, Das and McDonald
#: 2012, its PTB mapping; GUM's GW and ADD with X), keeping only the classes of two or more tags (a class of
#: one, such as IN's, would repeat its tag's features) and leaving punctuation out.
COARSE_CLASSES = {
    "<NOUN>": ("NN", "NNS", "NNP", "NNPS"),
    "<VERB>": ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"),
    "<ADJ>": ("JJ", "JJR", "JJS"),
    "<ADV>": ("RB", "RBR", "RBS", "WRB"),
    "<PRON>": ("PRP", "PRP$", "WP", "WP$"),
    "<DET>": ("DT", "PDT", "WDT", "EX"),
    "<PRT>": ("RP", "TO", "POS"),
    "<X>": ("FW", "LS", "SYM", "UH", "GW", "ADD"),
}
COARSE_TAGS = {tag: name for name, tags in COARSE_CLASSES.items() for tag in tags}


FeatureKey = tuple[str, str, str, str]
COUNT = "count"  # the property of the counting templates
COUNTING = ("length", "punctuation")  # templates whose one property is a bucketed count


def property_name(template: str, prop: int) -> str:
    return COUNT if template in COUNTING else PROPERTIES[prop]


def feature_text(key: FeatureKey) -> str:
    """Readable form: ``context[left-1].headtag = NN``."""
    template, item, prop, value = key
    return f"{template}[{item}].{prop} = {value}"


class FeatureSpace:
    """Feature codes over one symbol table (see :mod:`clparse.features.kernel`), and their ids.

    ``table[code]`` is a feature's id (-1: none yet); ``keys[id]`` its code. ``prepare`` assigns ids
    as features are first met (:meth:`assign`); the parser builds the table from the stored keys
    (:meth:`from_keys`). The code space has room for ``v`` symbols; :meth:`fit` widens it (recoding
    every assigned id) when the symbol table outgrows it.
    """

    def __init__(self, config: FeatureConfig, symbols: SymbolTable, room: int | None = None) -> None:
        self.config = config
        self.symbols = symbols
        self.v = max(room or 0, len(symbols), 1)
        self.flags = np.array([config.context, config.child, config.grandchild, config.exists,
                               config.exists_terminal, config.child_extra, config.head_of_child,
                               config.context_exists, config.length, config.span_edges, config.punctuation],
                              dtype=np.int64)
        self.slots = slot_names()
        # Symbols of the length buckets, index = count (registered before the code space is sized).
        counting = config.length or config.punctuation
        self.counts = np.array([symbols.add(count_bucket(k)) if counting else 0
                                for k in range(MAX_COUNT + 1)], dtype=np.int32)
        # Symbols of the punctuation tags, registered like the buckets (a tag never seen in training then
        # has a symbol no feature uses).
        self.punctuation = np.array([symbols.add(t) for t in sorted(PUNCTUATION_TAGS)] if config.punctuation
                                    else [], dtype=np.int32)
        # The fine tags and their classes, registered like the punctuation tags (coarse-tags).
        self._coarse_pairs = ([(symbols.add(t), symbols.add(c)) for t, c in sorted(COARSE_TAGS.items())]
                              if config.coarse_tags else [])
        self.v = max(self.v, len(symbols))
        self.coarse = self._coarse_array()
        self.table = np.full(N_SLOTS * 3 * self.v, -1, dtype=np.int32)
        self.keys = np.zeros(1024, dtype=np.int64)
        self.counter = np.zeros(2, dtype=np.int64)  # [next feature id, next row id] (kernels update it)
        self._arrays: FeatureTable | None = None

    def _coarse_array(self) -> np.ndarray:
        coarse = np.full(self.v, -1, dtype=np.int32)
        for tag, name in self._coarse_pairs:
            coarse[tag] = name
        return coarse

    def __len__(self) -> int:
        """Number of feature ids assigned."""
        return int(self.counter[0])

    def fit(self) -> None:
        """Make room in the code space for every symbol, recoding the ids assigned so far."""
        if len(self.symbols) <= self.v:
            return
        old_v, self.v = self.v, max(2 * self.v, len(self.symbols))
        codes = self.keys[:len(self)]
        slot_prop, symbol = np.divmod(codes, old_v)
        self.keys[:len(self)] = slot_prop * self.v + symbol
        self.table = np.full(N_SLOTS * 3 * self.v, -1, dtype=np.int32)
        self.table[self.keys[:len(self)]] = np.arange(len(self), dtype=np.int32)
        self.coarse = self._coarse_array()
        self._arrays = None

    def reserve_ids(self, more: int) -> None:
        """Room in ``keys`` for ``more`` new ids (a kernel call can add at most that many)."""
        need = len(self) + more
        if need > len(self.keys):
            keys = np.zeros(max(need, 2 * len(self.keys)), dtype=np.int64)
            keys[:len(self)] = self.keys[:len(self)]
            self.keys = keys
            self._arrays = None

    def arrays(self) -> FeatureTable:
        """The kernels' record of the code space and ids (the same object until :meth:`fit` or
        :meth:`reserve_ids` replaces an array)."""
        if self._arrays is None:
            self._arrays = FeatureTable(self.flags, self.counts, self.punctuation, self.coarse, self.v,
                                        self.table, self.keys, self.counter)
        return self._arrays

    def key(self, code: int) -> FeatureKey:
        slot_prop, symbol = divmod(int(code), self.v)
        slot, prop = divmod(slot_prop, 3)
        template, item = self.slots[slot]
        return template, item, property_name(template, prop), self.symbols.strings[symbol]

    def id_keys(self) -> list[FeatureKey]:
        """The key of every assigned id, by id."""
        return [self.key(c) for c in self.keys[:len(self)]]

    def code(self, key: FeatureKey) -> int | None:
        """The code of a stored feature key (None for a key no slot or property has)."""
        template, item, prop, value = key
        try:
            slot = self.slots.index((template, item))
            p = 0 if template in COUNTING and prop == COUNT else PROPERTIES.index(prop)
        except ValueError:
            return None
        symbol = self.symbols.get(value)
        return None if not 0 <= symbol < self.v else (slot * 3 + p) * self.v + symbol

    @classmethod
    def from_keys(cls, config: FeatureConfig, symbols: SymbolTable, ids: dict[FeatureKey, int],
                  keep: Callable[[int], bool] = lambda _: True) -> FeatureSpace:
        """The stored features of a run (the ones ``keep`` accepts; the rest map to -1), read-only."""
        for template, item, prop, value in ids:
            symbols.add(value)
        space = cls(config, symbols)
        space.reserve_ids(len(ids))
        for key, fid in ids.items():
            code = space.code(key)
            if code is not None and keep(fid):
                space.table[code] = fid
        space.counter[0] = max(ids.values(), default=-1) + 1
        return space
