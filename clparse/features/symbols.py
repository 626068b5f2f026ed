"""Strings as integers for the compiled kernels: one symbol table per run, and the head rules over it.

Every string a feature can take as its value (labels, tags, normalized headwords, ``<none>``) gets a
symbol id. The Collins head rules (:mod:`clparse.preprocess.heads`) are compiled into arrays over
those ids, so the kernels find a candidate's head child without calling back into Python
(:func:`clparse.features.kernel.head_index`, which must agree with
:func:`~clparse.preprocess.heads.head_child_index` on every input: a property test checks it).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from clparse.features.arrays import grown
from clparse.features.kernel import NO_RANK, CandidateSpec, HeadRules
from clparse.preprocess.heads import (
    BORROWED_RULES,
    COORDINATORS,
    HEAD_RULES,
    LEFT,
    LEFT_ANY,
    NP_LIKE,
    RIGHT,
    RIGHT_ANY,
    WRAPPERS,
    base_label,
)
from clparse.preprocess.transforms import PUNCTUATION_TAGS

NONE = "<none>"
_MODES = {LEFT: 0, RIGHT: 1, LEFT_ANY: 2, RIGHT_ANY: 3}
_DEFAULT_RULE = ((LEFT, ()),)
WRAPPER_RULE = -1  # parent rule id of ROOT/TOP/"": the head is the first child


class SymbolTable:
    """String <-> dense id; id 0 is ``<none>``. Grows on :meth:`add`; :meth:`get` never grows it."""

    def __init__(self, strings: Iterable[str] = ()) -> None:
        self.strings: list[str] = [NONE]
        self.ids: dict[str, int] = {NONE: 0}
        for s in strings:
            self.add(s)

    def add(self, s: str) -> int:
        found = self.ids.get(s)
        if found is None:
            found = self.ids[s] = len(self.strings)
            self.strings.append(s)
        return found

    def get(self, s: str) -> int:
        return self.ids.get(s, -1)

    def __len__(self) -> int:
        return len(self.strings)


class HeadTable:
    """The head rules as arrays indexed by symbol id (built for a symbol table; :meth:`grow` follows it).

    * ``parent_rule[s]``: the rule a phrase labeled ``s`` uses (:data:`WRAPPER_RULE` for wrappers);
      ``parent_np[s]``: 1 if the NP possessive check applies.
    * ``child_class[s]``: index of ``base_label(s)`` among the labels the rules mention, or -1;
      ``child_pos[s]``, ``child_coordinator[s]``: base label is POS / a coordinator.
    * rules -> passes -> label classes as CSR-like offsets.

    The per-symbol arrays have room for more symbols than the table holds (``size`` rows are filled): a
    symbol table grows one new word at a time while sentences are parsed or prepared, and rebuilding every
    row each time cost a pass over the whole table per new symbol (a tenth of the time at beam 1000 on
    GUM dev). Growing fills only the new rows, doubling the room when it runs out.
    """

    def __init__(self, symbols: SymbolTable) -> None:
        mentioned = sorted({label for passes in HEAD_RULES.values()
                            for _, labels in passes for label in labels})
        self._class_of = {label: i for i, label in enumerate(mentioned)}
        rule_names = sorted(HEAD_RULES) + ["<default>"]
        self._rule_id = {name: i for i, name in enumerate(rule_names)}
        pass_mode: list[int] = []
        label_offsets = [0]
        label_classes: list[int] = []
        rule_passes = [0]
        for name in rule_names:
            for mode, labels in HEAD_RULES.get(name, _DEFAULT_RULE):
                pass_mode.append(_MODES[mode])
                label_classes.extend(self._class_of[label] for label in labels)
                label_offsets.append(len(label_classes))
            rule_passes.append(len(pass_mode))
        self.rule_passes = np.array(rule_passes, dtype=np.int32)
        self.pass_mode = np.array(pass_mode, dtype=np.int32)
        self.label_offsets = np.array(label_offsets, dtype=np.int32)
        self.label_classes = np.array(label_classes, dtype=np.int32)
        # pass_rank[p, c]: where class c first comes in pass p's list (NO_RANK: not in it), so a pass picks
        # its head child in one scan of the children instead of one scan per listed label.
        self.pass_rank = np.full((len(pass_mode), len(mentioned)), NO_RANK, dtype=np.int32)
        for p in range(len(pass_mode)):
            for q in range(label_offsets[p + 1] - 1, label_offsets[p] - 1, -1):  # backwards: first wins
                self.pass_rank[p, label_classes[q]] = q - label_offsets[p]
        self.size = 0
        self.parent_rule = np.empty(0, dtype=np.int32)
        self.parent_np = np.zeros(0, dtype=np.uint8)
        self.child_class = np.full(0, -1, dtype=np.int32)
        self.child_pos = np.zeros(0, dtype=np.uint8)
        self.child_coordinator = np.zeros(0, dtype=np.uint8)
        self.grow(symbols)

    def grow(self, symbols: SymbolTable) -> bool:
        """Fill the rows of the symbols added to ``symbols`` since the last call; True if there were any
        (then :meth:`arrays` is a new record, and records built from the old one are stale)."""
        n = len(symbols)
        if n <= self.size:
            return False
        # room for twice as many: amortised, a row is filled once
        self.parent_rule = grown(self.parent_rule, n)
        self.parent_np = grown(self.parent_np, n)
        self.child_class = grown(self.child_class, n, -1)
        self.child_pos = grown(self.child_pos, n)
        self.child_coordinator = grown(self.child_coordinator, n)
        for s in range(self.size, n):
            base = base_label(symbols.strings[s])
            if base in WRAPPERS:
                self.parent_rule[s] = WRAPPER_RULE
                self.parent_np[s] = 0
            else:
                name = BORROWED_RULES.get(base, base)
                self.parent_rule[s] = self._rule_id.get(name, self._rule_id["<default>"])
                self.parent_np[s] = name in NP_LIKE
            self.child_class[s] = self._class_of.get(base, -1)
            self.child_pos[s] = base == "POS"
            self.child_coordinator[s] = base in COORDINATORS
        self.size = n
        self._arrays = HeadRules(self.parent_rule, self.parent_np, self.child_class, self.child_pos,
                                 self.child_coordinator, self.rule_passes, self.pass_mode, self.label_offsets,
                                 self.label_classes, self.pass_rank)
        return True

    def arrays(self) -> HeadRules:
        """The record :func:`~clparse.features.kernel.head_index` takes (a new one after :meth:`grow`)."""
        return self._arrays


ITEM_ORDERS = ("random", "l2r", "r2l")  # paper §3.5: random paths, or a strict left-/right-to-left item order


class CandidateRules:
    """Which candidates exist beyond the paper's (issue #11): the kernels' ``edge_stop`` and ``root_unary``.

    With ``constraints`` on, a candidate's first or last child may not be a punctuation terminal unless
    the span is all punctuation (after Table 3's punctuation raising no other gold phrase has one), and
    ROOT may only be built over a single item (the gold ROOT is always unary). Off, every span and ROOT
    over the whole frontier are candidates, as in the paper.

    ``order`` (paper §3.5): under ``l2r`` or ``r2l`` only spans the deterministic order allows are
    candidates (:func:`~clparse.features.kernel.order_limits`), in ``prepare`` and in the search alike.
    """

    def __init__(self, symbols: SymbolTable, constraints: bool, order: str = "random") -> None:
        if order not in ITEM_ORDERS:
            raise ValueError(f"item order must be one of {', '.join(ITEM_ORDERS)}, got {order!r}")
        self.symbols = symbols
        self.constraints = constraints
        self.root_unary = int(constraints)
        self.order = order
        self.order_code = ITEM_ORDERS.index(order)  # the kernels' ``order``: 0 any span, 1 l2r, 2 r2l
        self.edge_stop = np.zeros(0, dtype=np.uint8)
        self._edge_filled = 0  # rows of edge_stop filled (the array has room for more)
        self._spec: CandidateSpec | None = None
        self.refresh()

    def refresh(self) -> np.ndarray:
        """The per-symbol edge array, its new rows filled if the symbol table has grown (with room to spare,
        as :meth:`HeadTable.grow` does: only a new array when the room runs out)."""
        n = len(self.symbols)
        if self._edge_filled < n:
            self.edge_stop = grown(self.edge_stop, n)
            for s in range(self._edge_filled, n):
                self.edge_stop[s] = self.constraints and self.symbols.strings[s] in PUNCTUATION_TAGS
            self._edge_filled = n
        return self.edge_stop

    def spec(self, label_symbols: np.ndarray, root: int, max_children: int,
             heads: HeadRules) -> CandidateSpec:
        """The kernels' record of the candidates: over ``label_symbols`` (ROOT the ``root``-th, -1 for none),
        1..``max_children`` items, heads from ``heads``. The same object while its parts stay the same
        (:meth:`refresh` replaces ``edge_stop`` when the symbol table grows)."""
        edge_stop = self.refresh()
        found = self._spec
        if (found is None or found.edge_stop is not edge_stop or found.heads is not heads
                or found.label_symbols is not label_symbols or found.root != root
                or found.max_children != max_children):
            found = self._spec = CandidateSpec(label_symbols, root, max_children, edge_stop, self.root_unary,
                                               self.order_code, heads)
        return found
