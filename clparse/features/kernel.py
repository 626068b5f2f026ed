"""The compiled feature kernels: the one implementation of Tables 1-2, for ``prepare`` and the search.

A feature is coded as an integer before it is given a stored id::

    code = (slot * 3 + property) * V + value      (V: size of the code space's symbol table)

where ``slot`` is one of :data:`SLOTS` (template + item position, e.g. ``context[left-1]``),
``property`` indexes :data:`~clparse.features.space.PROPERTIES` and ``value`` is a symbol id
(:mod:`clparse.features.symbols`). A dense table maps codes to feature ids: ``prepare`` fills it in
the order features are first met (so ids are exactly what the earlier Python extractor gave), the
parser reads it (-1: a feature no training example had, or that no tree tests).

Codes are emitted in a fixed order (head-free part, then the head-dependent part of one head child;
within each, the order of the tables in docs/examples.md). That order only matters for first-seen id
assignment; a row is the sorted, de-duplicated set of ids.

The kernels take typed records (:class:`ItemArrays`, :class:`CandidateSpec`, :class:`FeatureTable`,
:class:`TreeArrays`, ...: NamedTuples of arrays and integers, below) instead of long argument lists;
the callers build each one once per model, sentence or buffer size.

Every compiled function that another one calls lives in this one file, on purpose: numba's on-disk
cache of a function is invalidated only when *its own* file changes, so a kernel calling into another
file would keep running a stale copy of its callee after that file is edited.

Scoring (the parser's side, after the feature part): a candidate's features look only at its
children and the ``context`` frontier items each side (and how many of those positions fall off the
sentence edges), so that *window* determines the scores of every label over the span. Windows are
cached per sentence (hash -> entry, the window itself kept to rule out collisions), so after an
inference only the spans whose window holds the new item are scored. Scoring a window: its head-free
feature ids are marked present and applied to the leaf masks (:class:`LeafMasks`), then for each head
child some label needs, the head-dependent ids too (applied in place, then undone for the next head
child), and each label's trees give their exit leaves' values, added tree by tree in training order
(the same additions as the row-by-row scorer, so the same floats). Only features some tree tests have
ids here (the search renumbers them 0 .. n - 1): the rest cannot change a score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

from clparse.features.numba_start import import_numba

import_numba()  # before numba's first import: without its SciPy version check
from numba import njit, types  # noqa: E402
from numba.cpython.unsafe.numbers import trailing_zeros  # noqa: E402  # count trailing zero bits (LLVM cttz)
from numba.typed import Dict  # noqa: E402

# ------------------------------------------------------------------ the records the kernels take
# Typed records of the arrays that travel together (numba compiles a NamedTuple of arrays and integers
# to a struct, so a field is read as cheaply as a separate argument). The callers build each record
# once per model, sentence or buffer size and keep it; a kernel call then passes a handful of them.
# Two costs of numba's dispatcher shape the per-state entry points (score_state, state_examples, one
# call per parser or training state): it fingerprints a NamedTuple argument by its class and field
# names as well as its values, 1-3 us per record and call, twice what the same values cost as a plain
# tuple; and a typed Dict inside a tuple is typed anew on every call (~60 us). So those two are Python
# functions that hand the records to their compiled bodies as plain tuples (which rebuild the records,
# free once compiled), and the typed Dicts (window and row lookups) stay separate arguments.


class ItemArrays(NamedTuple):
    """A sentence's items by index (:class:`~clparse.features.items.ItemTable`): what features read.

    Leaves come first, so leaf ``i`` (word ``i``) is item ``i``. Every array is int32.
    """

    label: np.ndarray  # symbol id of the item's label (a leaf's: its tag)
    tag: np.ndarray  # symbol id of the headtag
    word: np.ndarray  # symbol id of the (normalized) headword
    start: np.ndarray  # first word
    end: np.ndarray  # one past the last word
    nkids: np.ndarray  # number of children, 0 for a leaf
    kids: np.ndarray  # [item, k]: index of the k-th child (-1 past ``nkids``)
    head: np.ndarray  # position of the head child among the children, -1 for a leaf


class HeadRules(NamedTuple):
    """The Collins head rules over symbol ids (:class:`~clparse.features.symbols.HeadTable`), for
    :func:`head_index`. Indexed by symbol: ``parent_rule`` .. ``child_coordinator``; the rest are the
    rules -> passes -> label classes as CSR-like offsets. Every array is int32 but the uint8 flags."""

    parent_rule: np.ndarray  # the rule of a phrase labeled s (WRAPPER_RULE: head is the first child)
    parent_np: np.ndarray  # uint8: the NP possessive check applies to s
    child_class: np.ndarray  # index of base_label(s) among the labels the rules mention, or -1
    child_pos: np.ndarray  # uint8: base label is POS
    child_coordinator: np.ndarray  # uint8: base label is a coordinator
    rule_passes: np.ndarray  # rule r's passes are rule_passes[r] .. rule_passes[r + 1] - 1
    pass_mode: np.ndarray  # per pass: 0 left, 1 right, 2 left-any, 3 right-any
    label_offsets: np.ndarray  # pass p's label classes are label_classes[label_offsets[p] : [p + 1]]
    label_classes: np.ndarray
    pass_rank: np.ndarray  # int32 [pass, class]: the class's first place in the pass's list (NO_RANK: absent)


NO_RANK = 2**31 - 1

_F = TypeVar("_F", bound=Callable[..., Any])


def nrt_free(function: _F) -> _F:
    """Compile a kernel without numba's reference counting (NRT), which otherwise increments and decrements
    every array of its arguments (records included) atomically on every call: half of a window's scoring
    time before, as the scoring helpers are called hundreds of times per window. Only for kernels that
    create no array or typed Dict and return none (they read and write their callers' arrays), and that
    call only such kernels."""
    return njit(cache=True, nogil=True, _nrt=False)(function)  # type: ignore[call-overload,no-any-return]


class CandidateSpec(NamedTuple):
    """Which candidates a state has and how each finds its head child
    (:meth:`~clparse.features.symbols.CandidateRules.spec`)."""

    label_symbols: np.ndarray  # int32: the symbol of each label, in label order
    root: int  # index of ROOT among the labels, -1 if there is none
    max_children: int  # K: a candidate spans 1..K frontier items
    edge_stop: np.ndarray  # uint8 per symbol: a punctuation tag no span may start or end with (constraints)
    root_unary: int  # 1: ROOT only over a single item (constraints)
    order: int  # item order: 0 random paths (any span), 1 l2r, 2 r2l (see order_limits)
    heads: HeadRules


class FeatureTable(NamedTuple):
    """A feature space's code space and id table (:class:`~clparse.features.space.FeatureSpace`)."""

    flags: np.ndarray  # int64: the FeatureConfig as integers, indexed by the F_* constants
    counts: np.ndarray  # int32: the symbol of each length bucket, by count (0 .. MAX_COUNT)
    punctuation: np.ndarray  # int32: the symbols of the punctuation tags (the punctuation template)
    coarse: np.ndarray  # int32 per symbol (v of them): its coarse tag class's symbol, -1: none (coarse-tags)
    v: int  # size of the code space's symbol table: code = (slot * 3 + property) * v + symbol
    table: np.ndarray  # int32: code -> feature id, -1 for none
    keys: np.ndarray  # int64: feature id -> code (prepare assigns ids into it)
    counter: np.ndarray  # int64: [next feature id, next row id] (prepare updates it)


class TreeArrays(NamedTuple):
    """Every label's trees as one forest (:meth:`clparse.forest.Forest.join`), for scoring."""

    offsets: np.ndarray  # int64: label i's trees are roots[offsets[i] : offsets[i + 1]], in order
    roots: np.ndarray  # int64: each tree's root node
    feature: np.ndarray  # int32: the feature a node tests, -1 at a leaf
    true_child: np.ndarray  # int64
    false_child: np.ndarray  # int64
    value: np.ndarray  # float64: a leaf's confidence


class LeafMasks(NamedTuple):
    """Every tree's leaves as bits, to score a window from its present features alone (:func:`leaf_masks`;
    the exit-leaf idea of QuickScorer, Lucchese et al. 2015, here for binary features).

    A tree's leaves are numbered left to right with the *false* (absent) child on the left, and held as
    the bits of one or more 64-bit words. A split whose feature is present sends every example right, so
    it rules out the leaves of its false subtree: its entries clear those bits (one entry per word the
    subtree touches). After the entries of a window's present features, the exit leaf is the lowest bit
    left: every leaf left of it lies in the false subtree of a split on its path whose feature is
    present, and no present split's false subtree holds the exit leaf. ``walk`` 1: no masks, every tree
    is walked node by node (the reference the tests hold the masks to).
    """

    node_offsets: np.ndarray  # int64 [feature id + 1]: feature f's entries are [o[f]:o[f+1]] of the next two
    node_word: np.ndarray  # int64: the word (index into the masks) an entry clears bits of
    node_mask: np.ndarray  # uint64: all ones but the bits it clears
    word_base: np.ndarray  # int64 [tree + 1]: tree t's leaves are the bits of words word_base[t] .. [t+1]-1
    leaf_base: np.ndarray  # int64 per tree: where its leaves' values start in leaf_value
    leaf_value: np.ndarray  # float64: each tree's leaf values, left to right
    word_leaf: np.ndarray  # int64 per word: where the leaf of its lowest bit has its value in leaf_value
    walk: int  # 1: walk every tree instead


class WindowArrays(NamedTuple):
    """A sentence's window cache (:class:`~clparse.features.items.WindowCache`) but its hash lookup."""

    windows: np.ndarray  # int32 [entry, :]: positions missing left and right, item count, the items
    values: np.ndarray  # [entry, label]: scores (float64) when parsing, row ids (int64) in prepare
    entries: np.ndarray  # int64 [1]: entries in use (the last row is the scratch entry)


class ScoreBuffers(NamedTuple):
    """What :func:`score_state` works in and writes to (the search's scorer owns and reuses them)."""

    present: np.ndarray  # int32 per feature id: 1 while marked present (all 0 between calls)
    codes: np.ndarray  # int64: a window's feature codes
    touched: np.ndarray  # int32: the feature ids marked, to unmark them
    child_symbols: np.ndarray  # int32 [K]: a candidate's children's labels
    label_heads: np.ndarray  # int64 per label: its head child over the window (-1: not a candidate)
    masks: np.ndarray  # uint64 per LeafMasks word: the leaves still possible after the present features
    undo_word: np.ndarray  # int64 per LeafMasks entry: the words one head child's features changed ...
    undo_mask: np.ndarray  # uint64: ... and what they held before, to put back for the next head child
    first: np.ndarray  # int32 out: each candidate's first frontier position
    end: np.ndarray  # int32 out: one past its last
    label: np.ndarray  # int32 out: its label index
    confidence: np.ndarray  # float64 out: its score


class ExampleBuffers(NamedTuple):
    """What :func:`state_examples` works in and writes to (``prepare``'s generator owns them)."""

    codes: np.ndarray  # int64: a candidate's feature codes
    ids: np.ndarray  # int32: its sorted feature ids
    child_symbols: np.ndarray  # int32 [K]: its children's labels
    label: np.ndarray  # int16 out: each candidate's label index
    row: np.ndarray  # int32 out: its feature row id
    y: np.ndarray  # int8 out: +1 correct, -1 not
    indptr: np.ndarray  # int64 out: the new rows as CSR
    indices: np.ndarray  # int32 out


class RowBuffers(NamedTuple):
    """What :func:`candidate_rows` works in and writes to."""

    codes: np.ndarray  # int64
    ids: np.ndarray  # int32
    child_symbols: np.ndarray  # int32 [K]
    first: np.ndarray  # int32 out
    end: np.ndarray  # int32 out
    label: np.ndarray  # int32 out
    indptr: np.ndarray  # int64 out: every candidate's row as CSR
    indices: np.ndarray  # int32 out


@nrt_free
def head_index(parent: int, children: np.ndarray, n: int, heads: HeadRules) -> int:
    """Head child of a phrase labeled ``parent`` over ``children[:n]`` (symbol ids), with coordination."""
    rule = heads.parent_rule[parent]
    if rule == -1:
        return 0
    head = -1
    if heads.parent_np[parent] and heads.child_pos[children[n - 1]]:
        head = n - 1
    else:
        last_mode = 0
        for p in range(heads.rule_passes[rule], heads.rule_passes[rule + 1]):
            mode = heads.pass_mode[p]
            last_mode = mode
            lo, hi = heads.label_offsets[p], heads.label_offsets[p + 1]
            forward = mode == 0 or mode == 2
            if lo == hi:
                head = 0 if forward else n - 1
                break
            # One scan from the pass's side: "any" mode takes the first child of a listed class; otherwise
            # the child whose class comes first in the list (ties: the first met), as scanning the
            # children once per listed label, in the list's order, would find.
            best = NO_RANK
            for k in range(n):
                i = k if forward else n - 1 - k
                cls = heads.child_class[children[i]]
                if cls < 0:
                    continue
                rank = heads.pass_rank[p, cls]
                if rank < best:
                    best, head = rank, i
                    if mode >= 2 or rank == 0:
                        break
            if head >= 0:
                break
        if head < 0:
            head = 0 if (last_mode == 0 or last_mode == 2) else n - 1
    if head >= 2 and heads.child_coordinator[children[head - 1]]:
        head -= 2
    return head


# Slots: template + item position. Fixed whatever the configuration (disabled templates emit nothing).
CHILD_FIRST, CHILD_LAST, CHILD_HEAD, CHILD_HEAD_LEFT, CHILD_HEAD_RIGHT = 0, 1, 2, 3, 4
CONTEXT_LEFT = 5  # left-1 .. left-5 are 5..9
CONTEXT_RIGHT = 10  # right-1 .. right-5 are 10..14
GRAND = 15  # first.first, first.last, last.first, last.last, head.first, head.last: 15..20
#: The item groups of Table 2 that exists-tests range over, in slot order (the kernel's codes depend on it).
GROUPS = ("all", "non-head", "non-leftmost", "non-rightmost", "left-of-head", "right-of-head",
          "head-and-left", "head-and-right")
EXISTS = 21  # + group index (GROUPS order): 21..28
EXISTS_TERMINAL = 29  # 29..36
# Richer templates (issue #11, each switchable): appended, so the slots above keep their codes.
CHILD_SECOND, CHILD_SECOND_LAST, CHILD_HEAD_LEFT2, CHILD_HEAD_RIGHT2 = 37, 38, 39, 40
HEAD_OF_FIRST, HEAD_OF_LAST, HEAD_OF_HEAD = 41, 42, 43  # the head child of the first/last/head child
EXISTS_LEFT_CONTEXT, EXISTS_RIGHT_CONTEXT = 44, 45
LENGTH_CHILDREN, LENGTH_TERMINALS = 46, 47  # bucketed counts (property 0, named "count")
# Span edges (issue 27, opt-in): the span's first and last terminal, and the terminals just outside it.
SPAN_FIRST, SPAN_LAST, SPAN_BEFORE, SPAN_AFTER = 48, 49, 50, 51
# Punctuation (issue 27, opt-in): how many punctuation words the span holds, and how many of its children are
# punctuation words (bucketed counts, property 0, named "count").
PUNCT_WORDS, PUNCT_CHILDREN = 52, 53
N_SLOTS = 54
MAX_CONTEXT = 5
MAX_COUNT = 25  # counts at or above share the last bucket

# Flags array layout (FeatureConfig as integers).
F_CONTEXT, F_CHILD, F_GRANDCHILD, F_EXISTS, F_EXISTS_TERMINAL = 0, 1, 2, 3, 4
F_CHILD_EXTRA, F_HEAD_OF_CHILD, F_CONTEXT_EXISTS, F_LENGTH, F_SPAN_EDGES, F_PUNCTUATION = 5, 6, 7, 8, 9, 10


def count_bucket(count: int) -> str:
    """The value of a length feature: 1, 2, 3, 4 exactly, then 5-6, 7-9, 10-14, 15-24, 25+."""
    for low, high in ((5, 6), (7, 9), (10, 14), (15, 24)):
        if low <= count <= high:
            return f"{low}-{high}"
    return f"{MAX_COUNT}+" if count >= MAX_COUNT else str(count)


def slot_names() -> list[tuple[str, str]]:
    """(template, item) of every slot, by slot number."""

    names = [("child", "first"), ("child", "last"), ("child", "head"), ("child", "head-1"),
             ("child", "head+1")]
    names += [("context", f"left-{k}") for k in range(1, MAX_CONTEXT + 1)]
    names += [("context", f"right-{k}") for k in range(1, MAX_CONTEXT + 1)]
    names += [("grandchild", f"{a}.{b}") for a in ("first", "last", "head") for b in ("first", "last")]
    names += [("exists", g) for g in GROUPS] + [("exists-terminal", g) for g in GROUPS]
    names += [("child", "second"), ("child", "second-to-last"), ("child", "head-2"), ("child", "head+2")]
    names += [("grandchild", "first.head"), ("grandchild", "last.head"), ("grandchild", "head.head")]
    names += [("exists", "left-context"), ("exists", "right-context")]
    names += [("length", "children"), ("length", "terminals")]
    names += [("span-edge", "first"), ("span-edge", "last"), ("span-edge", "before"), ("span-edge", "after")]
    names += [("punctuation", "words"), ("punctuation", "children")]
    assert len(names) == N_SLOTS
    return names


@nrt_free
def _row_capacity(max_children: int, words: int) -> int:
    # 5 codes per item and 3 per terminal at most (3 and 2, and up to 2 and 1 coarse classes)
    return 5 * (18 + 4 * MAX_CONTEXT) + 40 * max_children + 24 * words + 40


def row_capacity(max_children: int, words: int) -> int:
    """An upper bound on the codes one candidate row emits (the compiled search checks it too:
    ``_row_capacity`` itself)."""
    return int(_row_capacity(max_children, words))


@njit(cache=True, nogil=True, inline="always")
def _code(slot: int, prop: int, symbol: int, v: int) -> int:
    if symbol >= v:  # a string the code space has never seen (parse time): no feature
        return -1
    return (slot * 3 + prop) * v + symbol


# The helpers below run per item, span or label: they take the arrays they read, not whole records
# (a record argument of a call numba does not inline costs a reference count per array it holds, unless
# the callee is compiled without reference counts: nrt_free).

@nrt_free
def _emit_coarse(out: np.ndarray, pos: int, slot: int, prop: int, symbol: int, coarse: np.ndarray,
                 v: int) -> int:
    """The code of ``symbol``'s coarse tag class in ``slot`` and ``prop``, if it has one (``coarse``: the
    class symbol per symbol, -1 for none; all -1 unless the run has the coarse-tags template)."""
    if 0 <= symbol < coarse.shape[0]:
        c = coarse[symbol]
        if c >= 0:
            out[pos] = _code(slot, prop, c, v)
            return pos + 1
    return pos


@nrt_free
def _emit_item(out: np.ndarray, pos: int, slot: int, item: int, label: np.ndarray, tag: np.ndarray,
               word: np.ndarray, coarse: np.ndarray, v: int) -> int:
    """The label, headtag and headword codes of ``item`` (-1: an absent item, ``<none>``) in ``slot``, and
    the coarse classes of a tag label and of the headtag (coarse-tags)."""
    if item < 0:
        out[pos] = _code(slot, 0, 0, v)
        out[pos + 1] = _code(slot, 1, 0, v)
        out[pos + 2] = _code(slot, 2, 0, v)
        return pos + 3
    out[pos] = _code(slot, 0, label[item], v)
    out[pos + 1] = _code(slot, 1, tag[item], v)
    out[pos + 2] = _code(slot, 2, word[item], v)
    pos = _emit_coarse(out, pos + 3, slot, 0, label[item], coarse, v)
    return _emit_coarse(out, pos, slot, 1, tag[item], coarse, v)


@nrt_free
def _emit_group(out, pos, group, frontier, first, lo, hi, skip, flags, label, tag, word,  # type: ignore[no-untyped-def]
                start, end, coarse, v):
    """``exists`` then ``exists-terminal`` over children ``lo .. hi - 1`` except ``skip``."""
    if flags[F_EXISTS]:
        for k in range(lo, hi):
            if k != skip:
                pos = _emit_item(out, pos, EXISTS + group, frontier[first + k], label, tag, word, coarse, v)
    if flags[F_EXISTS_TERMINAL]:
        slot = EXISTS_TERMINAL + group
        for k in range(lo, hi):
            if k != skip:
                item = frontier[first + k]
                for t in range(start[item], end[item]):  # leaf t is item t
                    out[pos] = _code(slot, 1, tag[t], v)
                    out[pos + 1] = _code(slot, 2, word[t], v)
                    pos = _emit_coarse(out, pos + 2, slot, 1, tag[t], coarse, v)
    return pos


@nrt_free
def _emit_grandchildren(out, pos, slot, child, nkids, kids, label, tag, word, coarse, v):  # type: ignore[no-untyped-def]
    count = nkids[child]
    pos = _emit_item(out, pos, slot, kids[child, 0] if count > 0 else -1, label, tag, word, coarse, v)
    return _emit_item(out, pos, slot + 1, kids[child, count - 1] if count > 0 else -1, label, tag, word,
                      coarse, v)


@nrt_free
def _head_child(item: int, nkids: np.ndarray, kids: np.ndarray, head: np.ndarray) -> int:
    return kids[item, head[item]] if nkids[item] > 0 else -1


@nrt_free
def emit_head_free(out: np.ndarray, frontier: np.ndarray, first: int, end: int, items: ItemArrays,
                   space: FeatureTable) -> int:
    """Codes of the features of the candidate over ``frontier[first:end]`` that do not depend on the head
    child, into ``out``; returns how many were written."""
    label, tag, word, start, end_, nkids, kids, head = items
    flags, counts, coarse, v = space.flags, space.counts, space.coarse, space.v
    n = frontier.shape[0]
    pos = 0
    m = end - first
    if flags[F_CHILD]:
        pos = _emit_item(out, pos, CHILD_FIRST, frontier[first], label, tag, word, coarse, v)
        pos = _emit_item(out, pos, CHILD_LAST, frontier[end - 1], label, tag, word, coarse, v)
    for k in range(1, flags[F_CONTEXT] + 1):
        left = frontier[first - k] if first - k >= 0 else -1
        right = frontier[end - 1 + k] if end - 1 + k < n else -1
        pos = _emit_item(out, pos, CONTEXT_LEFT + k - 1, left, label, tag, word, coarse, v)
        pos = _emit_item(out, pos, CONTEXT_RIGHT + k - 1, right, label, tag, word, coarse, v)
    if flags[F_GRANDCHILD]:
        pos = _emit_grandchildren(out, pos, GRAND, frontier[first], nkids, kids, label, tag, word, coarse, v)
        pos = _emit_grandchildren(out, pos, GRAND + 2, frontier[end - 1], nkids, kids, label, tag, word,
                                  coarse, v)
    pos = _emit_group(out, pos, 0, frontier, first, 0, m, -1, flags, label, tag, word, start, end_, coarse,
                      v)  # all
    pos = _emit_group(out, pos, 2, frontier, first, 1, m, -1, flags, label, tag, word, start, end_,
                      coarse, v)  # non-leftmost
    pos = _emit_group(out, pos, 3, frontier, first, 0, m - 1, -1, flags, label, tag, word, start, end_,
                      coarse, v)  # non-rightmost
    if flags[F_CHILD_EXTRA]:
        pos = _emit_item(out, pos, CHILD_SECOND, frontier[first + 1] if m > 1 else -1, label, tag, word,
                         coarse, v)
        pos = _emit_item(out, pos, CHILD_SECOND_LAST, frontier[end - 2] if m > 1 else -1, label, tag, word,
                         coarse, v)
    if flags[F_HEAD_OF_CHILD]:
        pos = _emit_item(out, pos, HEAD_OF_FIRST, _head_child(frontier[first], nkids, kids, head), label,
                         tag, word, coarse, v)
        pos = _emit_item(out, pos, HEAD_OF_LAST, _head_child(frontier[end - 1], nkids, kids, head), label,
                         tag, word, coarse, v)
    if flags[F_CONTEXT_EXISTS]:
        for k in range(1, flags[F_CONTEXT] + 1):
            if first - k >= 0:
                pos = _emit_item(out, pos, EXISTS_LEFT_CONTEXT, frontier[first - k], label, tag, word,
                                 coarse, v)
            if end - 1 + k < n:
                pos = _emit_item(out, pos, EXISTS_RIGHT_CONTEXT, frontier[end - 1 + k], label, tag, word,
                                 coarse, v)
    if flags[F_LENGTH]:
        terminals = end_[frontier[end - 1]] - start[frontier[first]]
        out[pos] = _code(LENGTH_CHILDREN, 0, counts[min(m, MAX_COUNT)], v)
        out[pos + 1] = _code(LENGTH_TERMINALS, 0, counts[min(terminals, MAX_COUNT)], v)
        pos += 2
    if flags[F_SPAN_EDGES]:
        pos = _emit_span_edges(out, pos, frontier, first, end, flags[F_CONTEXT], start, end_, tag, word,
                               coarse, v)
    if flags[F_PUNCTUATION]:
        pos = _emit_punctuation(out, pos, frontier, first, end, start, end_, tag, nkids, space.punctuation,
                                counts, v)
    return pos


@nrt_free
def _is_punctuation(tag_symbol: int, punctuation: np.ndarray) -> bool:
    for symbol in punctuation:  # a handful of tags: a scan beats a lookup table that grows with the symbols
        if symbol == tag_symbol:
            return True
    return False


@nrt_free
def _emit_punctuation(out, pos, frontier, first, end, start, end_, tag, nkids, punctuation, counts, v):  # type: ignore[no-untyped-def]
    """How many of the span's words, and how many of its children, are punctuation (bucketed). The
    exists-terminal template says which punctuation a span holds; only a count tells one comma from the
    three of a list or the two around an apposition."""
    words = 0
    for t in range(start[frontier[first]], end_[frontier[end - 1]]):  # leaf t is item t
        if _is_punctuation(tag[t], punctuation):
            words += 1
    children = 0
    for k in range(first, end):
        item = frontier[k]
        if nkids[item] == 0 and _is_punctuation(tag[item], punctuation):
            children += 1
    out[pos] = _code(PUNCT_WORDS, 0, counts[min(words, MAX_COUNT)], v)
    out[pos + 1] = _code(PUNCT_CHILDREN, 0, counts[min(children, MAX_COUNT)], v)
    return pos + 2


@nrt_free
def _emit_terminal(out: np.ndarray, pos: int, slot: int, leaf: int, tag: np.ndarray, word: np.ndarray,
                   coarse: np.ndarray, v: int) -> int:
    """The headtag and headword codes of leaf ``leaf`` (-1: none, ``<none>``) in ``slot``, and its tag's
    coarse class (coarse-tags)."""
    out[pos] = _code(slot, 1, tag[leaf] if leaf >= 0 else 0, v)
    out[pos + 1] = _code(slot, 2, word[leaf] if leaf >= 0 else 0, v)
    return _emit_coarse(out, pos + 2, slot, 1, tag[leaf], coarse, v) if leaf >= 0 else pos + 2


@nrt_free
def _emit_span_edges(out, pos, frontier, first, end, context, start, end_, tag, word, coarse, v):  # type: ignore[no-untyped-def]
    """The span's first and last terminal, and the terminals just before and after it. The outside ones
    are read from the nearest context items, so they need context >= 1: a window (and so the search's
    cache) holds nothing beyond its context items."""
    n = frontier.shape[0]
    pos = _emit_terminal(out, pos, SPAN_FIRST, start[frontier[first]], tag, word, coarse,
                         v)  # leaf t is item t
    pos = _emit_terminal(out, pos, SPAN_LAST, end_[frontier[end - 1]] - 1, tag, word, coarse, v)
    if context >= 1:
        before = end_[frontier[first - 1]] - 1 if first >= 1 else -1
        after = start[frontier[end]] if end < n else -1
        pos = _emit_terminal(out, pos, SPAN_BEFORE, before, tag, word, coarse, v)
        pos = _emit_terminal(out, pos, SPAN_AFTER, after, tag, word, coarse, v)
    return pos


@nrt_free
def emit_head_dependent(out: np.ndarray, pos: int, frontier: np.ndarray, first: int, end: int,
                        head_child: int, items: ItemArrays, space: FeatureTable) -> int:
    """Append the codes of the features that depend on head child ``head_child`` (a position among the
    candidate's children) at ``out[pos:]``; returns the new end."""
    label, tag, word, start, end_, nkids, kids, head = items
    flags, coarse, v = space.flags, space.coarse, space.v
    h = head_child
    m = end - first
    if flags[F_CHILD]:
        pos = _emit_item(out, pos, CHILD_HEAD, frontier[first + h], label, tag, word, coarse, v)
        pos = _emit_item(out, pos, CHILD_HEAD_LEFT, frontier[first + h - 1] if h > 0 else -1, label, tag,
                         word, coarse, v)
        pos = _emit_item(out, pos, CHILD_HEAD_RIGHT, frontier[first + h + 1] if h + 1 < m else -1,
                         label, tag, word, coarse, v)
    if flags[F_GRANDCHILD]:
        pos = _emit_grandchildren(out, pos, GRAND + 4, frontier[first + h], nkids, kids, label, tag, word,
                                  coarse, v)
    # non-head, left-of-head, right-of-head, head-and-left, head-and-right
    pos = _emit_group(out, pos, 1, frontier, first, 0, m, h, flags, label, tag, word, start, end_, coarse, v)
    pos = _emit_group(out, pos, 4, frontier, first, 0, h, -1, flags, label, tag, word, start, end_, coarse, v)
    pos = _emit_group(out, pos, 5, frontier, first, h + 1, m, -1, flags, label, tag, word, start, end_,
                      coarse, v)
    pos = _emit_group(out, pos, 6, frontier, first, 0, h + 1, -1, flags, label, tag, word, start, end_,
                      coarse, v)
    pos = _emit_group(out, pos, 7, frontier, first, h, m, -1, flags, label, tag, word, start, end_, coarse, v)
    if flags[F_CHILD_EXTRA]:
        pos = _emit_item(out, pos, CHILD_HEAD_LEFT2, frontier[first + h - 2] if h >= 2 else -1, label, tag,
                         word, coarse, v)
        pos = _emit_item(out, pos, CHILD_HEAD_RIGHT2, frontier[first + h + 2] if h + 2 < m else -1,
                         label, tag, word, coarse, v)
    if flags[F_HEAD_OF_CHILD]:
        pos = _emit_item(out, pos, HEAD_OF_HEAD, _head_child(frontier[first + h], nkids, kids, head), label,
                         tag, word, coarse, v)
    return pos


@nrt_free
def blocked_by_chain(frontier_item: int, label_symbol: int, label: np.ndarray, nkids: np.ndarray,
                     kids: np.ndarray) -> bool:
    """Is ``label_symbol`` on the item's unary chain (the item itself or a one-child descendant)?"""
    node = frontier_item
    while True:
        if label[node] == label_symbol:
            return True
        if nkids[node] != 1:
            return False
        node = kids[node, 0]


@nrt_free
def span_stopped(frontier: np.ndarray, first: int, end: int, start: np.ndarray, end_: np.ndarray,
                 tag: np.ndarray, nkids: np.ndarray, edge_stop: np.ndarray) -> bool:
    """Is the span's first or last child a punctuation terminal (and the span not all punctuation)?"""
    left, right = frontier[first], frontier[end - 1]
    if not ((nkids[left] == 0 and edge_stop[tag[left]] != 0)
            or (nkids[right] == 0 and edge_stop[tag[right]] != 0)):
        return False
    # a span of punctuation only stays (a sentence may be nothing else)
    for t in range(start[left], end_[right]):
        if edge_stop[tag[t]] == 0:
            return True
    return False


@nrt_free
def root_allowed(first: int, end: int, n: int, root_unary: int) -> bool:
    """ROOT only over the whole frontier (and, with ``root_unary``, only over a single item)."""
    return first == 0 and end == n and (root_unary == 0 or n == 1)


@nrt_free
def order_limits(frontier: np.ndarray, nkids: np.ndarray, order: int) -> tuple[int, int]:
    """(last legal first child, first legal end) of a state under an item order (paper §3.5).

    ``order`` 0 (random paths) allows every span. 2 (right-to-left): with N the leftmost phrase on
    the frontier, a span must dominate N or lie wholly left of it, i.e. start at or before N.
    1 (left-to-right) is the mirror: with N the rightmost phrase, a span must end at or after N.
    Before any phrase is built every span is legal.
    """
    n = frontier.shape[0]
    if order == 2:
        for i in range(n):
            if nkids[frontier[i]] > 0:
                return i, 1
    elif order == 1:
        for i in range(n - 1, -1, -1):
            if nkids[frontier[i]] > 0:
                return n - 1, i + 1
    return n - 1, 1


@nrt_free
def candidate_head(frontier: np.ndarray, first: int, end: int, label_symbol: int, child_symbols: np.ndarray,
                   label: np.ndarray, heads: HeadRules) -> int:
    """The head child (position among the children) of ``label_symbol`` over ``frontier[first:end]``
    (``label``: the items' labels); ``child_symbols`` is scratch of at least ``end - first``."""
    m = end - first
    for k in range(m):
        child_symbols[k] = label[frontier[first + k]]
    return head_index(label_symbol, child_symbols, m, heads)


@njit(cache=True, nogil=True)
def sorted_ids(codes: np.ndarray, count: int, table: np.ndarray, out: np.ndarray) -> int:
    """The known feature ids of ``codes[:count]``, sorted and de-duplicated into ``out``; returns how many."""
    k = 0
    for i in range(count):
        c = codes[i]
        if c >= 0:
            f = table[c]
            if f >= 0:
                out[k] = f
                k += 1
    if k == 0:
        return 0
    out[:k].sort()
    j = 1
    for i in range(1, k):
        if out[i] != out[j - 1]:
            out[j] = out[i]
            j += 1
    return j


@njit(cache=True, nogil=True)
def assign_ids(codes: np.ndarray, lo: int, hi: int, space: FeatureTable) -> None:
    """Give every code of ``codes[lo:hi]`` not yet in ``table`` the next feature id, in order (prepare)."""
    table, keys, counter = space.table, space.keys, space.counter
    for i in range(lo, hi):
        c = codes[i]
        if table[c] < 0:
            table[c] = counter[0]
            keys[counter[0]] = c
            counter[0] += 1


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M3 = np.uint64(0x165667B19E3779F9)


@njit(cache=True, nogil=True)
def row_hash(ids: np.ndarray, count: int) -> tuple[np.uint64, np.uint64]:
    """Two independent 64-bit hashes of a row (128 bits: a collision among 10^8 rows has odds ~10^-22)."""
    a = np.uint64(count) * _M1
    b = np.uint64(count) ^ _M2
    for i in range(count):
        x = np.uint64(ids[i]) + np.uint64(1)
        a = (a ^ x) * _M1
        a ^= a >> np.uint64(29)
        b = (b + x * _M3) * _M2
        b ^= b >> np.uint64(31)
    return (a, b)


# A window: (positions missing left, missing right, its frontier items); hashed, and kept to verify.
_W1 = np.uint64(0x9E3779B97F4A7C15)
_W2 = np.uint64(0xBF58476D1CE4E5B9)


@nrt_free
def _window_hash(lm: int, rm: int, frontier: np.ndarray, lo: int, hi: int) -> np.int64:
    h = (np.uint64(lm) * np.uint64(31) + np.uint64(rm) + np.uint64(1)) * _W1
    for i in range(lo, hi):
        h = (h ^ np.uint64(frontier[i] + 1)) * _W2
        h ^= h >> np.uint64(31)
    return np.int64(h & np.uint64(0x7FFFFFFFFFFFFFFF))


@nrt_free
def _store_window(win: np.ndarray, e: int, lm: int, rm: int, frontier: np.ndarray, lo: int, hi: int) -> None:
    win[e, 0], win[e, 1], win[e, 2] = lm, rm, hi - lo
    for i in range(lo, hi):
        win[e, 3 + i - lo] = frontier[i]


@nrt_free
def _same_window(win: np.ndarray, e: int, lm: int, rm: int, frontier: np.ndarray, lo: int, hi: int) -> bool:
    if win[e, 0] != lm or win[e, 1] != rm or win[e, 2] != hi - lo:
        return False
    for i in range(lo, hi):
        if win[e, 3 + i - lo] != frontier[i]:
            return False
    return True


def state_examples(frontier: np.ndarray, correct: np.ndarray, items: ItemArrays, rules: CandidateSpec,
                   space: FeatureTable, rows: Dict, lookup: Dict, cache: WindowArrays,
                   out: ExampleBuffers) -> tuple[int, int, int]:
    """Every candidate of one state as an example (prepare): label index, row id, y into ``out``.

    Spans in order (first, end), labels in the given (sorted) order; a span's head-free features
    first, then per head child (in the order the labels first need it) its head-dependent ones:
    the order the first Python extractor met features in, so ids come out the same. A window seen
    earlier in the sentence (``lookup`` and ``cache``, as in the parser's scorer) already has its
    rows per label. New rows (not in ``rows``, keyed by their 128-bit hash) get the next row id and
    are written to ``out.indptr`` / ``out.indices``. Spans that ``edge_stop`` rules out give no
    example at all. ``correct`` holds the correct candidates as (first, end, label index) rows.
    Returns (candidates, new rows, new non-zeros).
    """
    return _state_examples(frontier, correct, tuple(items), rules[:-1], tuple(rules.heads), tuple(space),
                           rows, lookup, tuple(cache), tuple(out))


@njit(cache=True, nogil=True)
def _state_examples(frontier, correct, items, rules, heads, space, rows, lookup, cache,  # type: ignore[no-untyped-def]
                    out):
    """:func:`state_examples` on its records as plain tuples (``rules`` without ``heads``)."""
    items, space, cache = ItemArrays(*items), FeatureTable(*space), WindowArrays(*cache)
    rules, out = CandidateSpec(*rules, HeadRules(*heads)), ExampleBuffers(*out)
    label, tag, _, start, end_, nkids, kids, _ = items
    label_symbols, root, max_children = rules.label_symbols, rules.root, rules.max_children
    edge_stop = rules.edge_stop
    win, label_rows, entries = cache.windows, cache.values, cache.entries
    codes, ids, child_symbols = out.codes, out.ids, out.child_symbols
    out_label, out_row, out_y, out_indptr, out_indices = out.label, out.row, out.y, out.indptr, out.indices
    counter = space.counter
    n = frontier.shape[0]
    n_labels = label_symbols.shape[0]
    context = space.flags[F_CONTEXT]
    scratch = label_rows.shape[0] - 1
    head_rows = np.empty(max_children, dtype=np.int64)
    n_cand = 0
    n_new = 0
    n_nz = 0
    out_indptr[0] = 0
    last_first, first_end = order_limits(frontier, nkids, rules.order)
    for first in range(last_first + 1):
        for end in range(max(first + 1, first_end), min(n, first + max_children) + 1):
            if span_stopped(frontier, first, end, start, end_, tag, nkids, edge_stop):
                continue
            m = end - first
            lo, hi = max(0, first - context), min(n, end + context)
            lm, rm = max(0, context - first), max(0, end + context - n)
            key = _window_hash(lm, rm, frontier, lo, hi)
            e = lookup[key] if key in lookup else -1  # noqa: SIM401 (typed Dict.get gives an Optional)
            if e >= 0 and not _same_window(win, e, lm, rm, frontier, lo, hi):
                e = scratch  # a hash collision: work without the cache
                label_rows[e, :] = -1
            elif e < 0:
                e = entries[0]
                entries[0] += 1
                lookup[key] = e
                _store_window(win, e, lm, rm, frontier, lo, hi)
                label_rows[e, :] = -1
            base = -1
            head_rows[:m] = -1
            root_here = root_allowed(first, end, n, rules.root_unary)
            for li in range(n_labels):
                symbol = label_symbols[li]
                if li == root and not root_here:
                    continue
                if m == 1 and blocked_by_chain(frontier[first], symbol, label, nkids, kids):
                    continue
                row = label_rows[e, li]
                if row < 0:
                    if base < 0:
                        base = emit_head_free(codes, frontier, first, end, items, space)
                        assign_ids(codes, 0, base, space)
                    head = candidate_head(frontier, first, end, symbol, child_symbols, label, rules.heads)
                    row = head_rows[head]
                    if row < 0:
                        stop = emit_head_dependent(codes, base, frontier, first, end, head, items, space)
                        assign_ids(codes, base, stop, space)
                        k = sorted_ids(codes, stop, space.table, ids)
                        hashed = row_hash(ids, k)
                        row = rows[hashed] if hashed in rows else -1  # noqa: SIM401
                        if row < 0:
                            row = counter[1]
                            counter[1] += 1
                            rows[hashed] = row
                            out_indices[n_nz:n_nz + k] = ids[:k]
                            n_nz += k
                            n_new += 1
                            out_indptr[n_new] = n_nz
                        head_rows[head] = row
                    label_rows[e, li] = row
                y = -1
                for c in range(correct.shape[0]):
                    if correct[c, 0] == first and correct[c, 1] == end and correct[c, 2] == li:
                        y = 1
                        break
                out_label[n_cand] = li
                out_row[n_cand] = row
                out_y[n_cand] = y
                n_cand += 1
    return n_cand, n_new, n_nz


# ------------------------------------------------------------------ the parser's side: scoring

@nrt_free
def _walk_tree(t: int, present: np.ndarray, trees: TreeArrays) -> float:
    """q^t(I): tree ``t``'s leaf value, walking from its root."""
    feature, true_child, false_child = trees.feature, trees.true_child, trees.false_child
    node = trees.roots[t]
    while feature[node] >= 0:
        node = true_child[node] if present[feature[node]] > 0 else false_child[node]
    return trees.value[node]


@nrt_free
def _sum_trees(label: int, present: np.ndarray, trees: TreeArrays, masks: np.ndarray,
               leaves: LeafMasks) -> float:
    """Q(I) = Σ_t q^t(I) over the label's trees, added in training order; a tree's exit leaf is the lowest
    bit left in its words of ``masks`` (or, with ``leaves.walk``, found by walking the tree). The additions
    are the same either way, so the same float comes out."""
    total = 0.0
    if leaves.walk:
        for t in range(trees.offsets[label], trees.offsets[label + 1]):
            total += _walk_tree(t, present, trees)
        return total
    word_base, word_leaf, leaf_value = leaves.word_base, leaves.word_leaf, leaves.leaf_value
    one = np.uint64(1)
    # Unsigned indices: numba then leaves out its negative-index wrap-around on every load (half the time).
    for t in range(np.uint64(trees.offsets[label]), np.uint64(trees.offsets[label + 1])):
        w = np.uint64(word_base[t])
        x = masks[w]
        while x == 0:  # the exit leaf's bit is never cleared, so this stops within the tree
            w += one
            x = masks[w]
        bit: np.uint64 = trailing_zeros(x)  # type: ignore[call-arg]
        total += leaf_value[np.uint64(word_leaf[w]) + bit]
    return total


@nrt_free
def _apply_masks(touched: np.ndarray, lo: int, hi: int, leaves: LeafMasks, masks: np.ndarray) -> None:
    """Rule out, in ``masks``, the leaves that the present features ``touched[lo:hi]`` send away from."""
    offsets, node_word, node_mask = leaves.node_offsets, leaves.node_word, leaves.node_mask
    for i in range(np.uint64(lo), np.uint64(hi)):  # unsigned indices: see _sum_trees
        f = np.uint64(touched[i])
        for j in range(np.uint64(offsets[f]), np.uint64(offsets[f + np.uint64(1)])):
            masks[np.uint64(node_word[j])] &= node_mask[j]


@njit(cache=True, nogil=True)
def _leaf_masks(roots, feature, true_child, false_child, value, features):  # type: ignore[no-untyped-def]
    """:func:`leaf_masks` on the forest's arrays."""
    n_trees = roots.shape[0]
    n_nodes = feature.shape[0]
    word_base = np.zeros(n_trees + 1, dtype=np.int64)
    leaf_base = np.zeros(n_trees, dtype=np.int64)
    leaf_value = np.empty(n_nodes, dtype=np.float64)
    false_lo = np.zeros(n_nodes, dtype=np.int64)  # a split's false subtree: leaves false_lo .. false_hi - 1
    false_hi = np.zeros(n_nodes, dtype=np.int64)
    tree_of = np.zeros(n_nodes, dtype=np.int64)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    true_parent = np.empty(n_nodes + 1, dtype=np.int64)  # the split whose true child the entry is, or -1
    splits = np.empty(n_nodes, dtype=np.int64)
    n_values = 0
    n_splits = 0
    n_entries = 0
    for t in range(n_trees):
        # Preorder, false child first: leaves are met left to right.
        leaf_base[t] = n_values
        top = 0
        stack[0] = roots[t]
        true_parent[0] = -1
        while top >= 0:
            node = stack[top]
            parent = true_parent[top]
            top -= 1
            if parent >= 0:
                false_hi[parent] = n_values - leaf_base[t]
            if feature[node] < 0:
                leaf_value[n_values] = value[node]
                n_values += 1
            else:
                false_lo[node] = n_values - leaf_base[t]
                tree_of[node] = t
                splits[n_splits] = node
                n_splits += 1
                top += 1
                stack[top] = true_child[node]
                true_parent[top] = node
                top += 1
                stack[top] = false_child[node]
                true_parent[top] = -1
        word_base[t + 1] = word_base[t] + (n_values - leaf_base[t] + 63) // 64
    for j in range(n_splits):
        node = splits[j]
        n_entries += (false_hi[node] - 1) // 64 - false_lo[node] // 64 + 1
    entry_feature = np.empty(n_entries, dtype=np.int64)
    entry_word = np.empty(n_entries, dtype=np.int64)
    entry_mask = np.empty(n_entries, dtype=np.uint64)
    all_ones = ~np.uint64(0)
    e = 0
    for j in range(n_splits):  # splits in tree order, so each feature's entries are too
        node = splits[j]
        lo, hi = false_lo[node], false_hi[node]
        for w in range(lo // 64, (hi - 1) // 64 + 1):
            a, b = max(lo, 64 * w) - 64 * w, min(hi, 64 * w + 64) - 64 * w  # bits a .. b-1 of word w
            width = (np.uint64(1) << np.uint64(b - a)) - np.uint64(1) if b - a < 64 else all_ones
            bits = width << np.uint64(a)
            entry_feature[e] = feature[node]
            entry_word[e] = word_base[tree_of[node]] + w
            entry_mask[e] = all_ones & ~bits
            e += 1
    offsets = np.zeros(features + 1, dtype=np.int64)
    for j in range(n_entries):
        offsets[entry_feature[j] + 1] += 1
    for f in range(features):
        offsets[f + 1] += offsets[f]
    fill = offsets[:-1].copy()
    node_word = np.empty(n_entries, dtype=np.int64)
    node_mask = np.empty(n_entries, dtype=np.uint64)
    for j in range(n_entries):
        f = entry_feature[j]
        node_word[fill[f]] = entry_word[j]
        node_mask[fill[f]] = entry_mask[j]
        fill[f] += 1
    return offsets, node_word, node_mask, word_base, leaf_base, leaf_value[:n_values].copy()


def leaf_masks(trees: TreeArrays, features: int, walk: bool = False) -> LeafMasks:
    """The forest's :class:`LeafMasks` over feature ids ``0 .. features - 1`` (``walk``: none, every tree
    is walked: the plain tree walk the tests compare the masks against)."""
    if walk:
        no_trees = np.zeros(len(trees.roots) + 1, dtype=np.int64)
        return LeafMasks(np.zeros(features + 1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                         np.zeros(0, dtype=np.uint64), no_trees, no_trees[:-1], np.zeros(0, dtype=np.float64),
                         np.zeros(0, dtype=np.int64), 1)
    offsets, word, mask, word_base, leaf_base, leaf_value = _leaf_masks(
        trees.roots, trees.feature, trees.true_child, trees.false_child, trees.value, features)
    words = np.diff(word_base)
    word_leaf = np.repeat(leaf_base - 64 * word_base[:-1], words) + 64 * np.arange(word_base[-1])
    return LeafMasks(offsets, word, mask, word_base, leaf_base, leaf_value, word_leaf.astype(np.int64), 0)


@nrt_free
def _mark(codes: np.ndarray, lo: int, hi: int, table: np.ndarray, present: np.ndarray, touched: np.ndarray,
          count: int) -> int:
    """Mark the features of ``codes[lo:hi]`` present, each new one once in ``touched`` (from ``count``):
    a feature met twice (an exists-test over two NP children) is applied to the masks once."""
    for i in range(np.uint64(lo), np.uint64(hi)):  # unsigned indices: see _sum_trees
        c = codes[i]
        if c >= 0:
            f = table[np.uint64(c)]
            if f >= 0 and present[np.uint64(f)] == 0:
                present[np.uint64(f)] = 1
                touched[count] = f
                count += 1
    return count


@nrt_free
def _label_heads(e: int, frontier: np.ndarray, first: int, end: int, root_here: bool, items: ItemArrays,
                 rules: CandidateSpec, scores: np.ndarray, buffers: ScoreBuffers) -> None:
    """Each label's head child over the window into ``buffers.label_heads`` (-1: never a candidate here,
    its score 0.0). The children's labels are read once for every label; one child is its own head."""
    label_heads, child_symbols = buffers.label_heads, buffers.child_symbols
    label, nkids, kids = items.label, items.nkids, items.kids
    label_symbols = rules.label_symbols
    m = end - first
    for k in range(m):
        child_symbols[k] = label[frontier[first + k]]
    for li in range(label_symbols.shape[0]):
        symbol = label_symbols[li]
        if (m == 1 and blocked_by_chain(frontier[first], symbol, label, nkids, kids)) or (
                li == rules.root and not root_here):
            label_heads[li] = -1
            scores[e, li] = 0.0
        elif m == 1:
            label_heads[li] = 0
        else:
            label_heads[li] = head_index(symbol, child_symbols, m, rules.heads)


@nrt_free
def _apply_logged(touched: np.ndarray, lo: int, hi: int, leaves: LeafMasks, masks: np.ndarray,
                  undo_word: np.ndarray, undo_mask: np.ndarray) -> int:
    """:func:`_apply_masks`, logging each word's value before it changes (for :func:`_undo`); returns the
    log's length. Each feature is applied once (``touched`` is de-duplicated), so the log holds at most
    one entry per LeafMasks entry."""
    offsets, node_word, node_mask = leaves.node_offsets, leaves.node_word, leaves.node_mask
    k = np.uint64(0)
    for i in range(np.uint64(lo), np.uint64(hi)):  # unsigned indices: see _sum_trees
        f = np.uint64(touched[i])
        for j in range(np.uint64(offsets[f]), np.uint64(offsets[f + np.uint64(1)])):
            w = np.uint64(node_word[j])
            undo_word[k], undo_mask[k] = w, masks[w]
            masks[w] &= node_mask[j]
            k += np.uint64(1)
    return int(k)


@nrt_free
def _undo(k: int, masks: np.ndarray, undo_word: np.ndarray, undo_mask: np.ndarray) -> None:
    """Put back the words :func:`_apply_logged` changed, newest first."""
    for i in range(k - 1, -1, -1):
        masks[np.uint64(undo_word[i])] = undo_mask[i]


@nrt_free
def _score_window(e: int, frontier: np.ndarray, first: int, end: int, root_here: bool, items: ItemArrays,
                  rules: CandidateSpec, space: FeatureTable, trees: TreeArrays, leaves: LeafMasks,
                  scores: np.ndarray, buffers: ScoreBuffers) -> None:
    """Every label's score over the window of ``frontier[first:end]`` into ``scores[e]`` (ROOT's only where
    ROOT may be built: the window decides that, as it holds the frontier's edges)."""
    present, codes, touched = buffers.present, buffers.codes, buffers.touched
    masks, undo_word, undo_mask = buffers.masks, buffers.undo_word, buffers.undo_mask
    label_heads = buffers.label_heads
    table = space.table
    m = end - first
    n_labels = label_heads.shape[0]
    _label_heads(e, frontier, first, end, root_here, items, rules, scores, buffers)
    base = emit_head_free(codes, frontier, first, end, items, space)
    marked = _mark(codes, 0, base, table, present, touched, 0)
    masks[:leaves.word_base[-1]] = ~np.uint64(0)  # the buffer may be longer than the words in use
    _apply_masks(touched, 0, marked, leaves, masks)
    for head in range(m):
        needed = False
        for li in range(n_labels):
            if label_heads[li] == head:
                needed = True
                break
        if not needed:
            continue
        stop = emit_head_dependent(codes, base, frontier, first, end, head, items, space)
        before = marked
        marked = _mark(codes, base, stop, table, present, touched, marked)
        logged = _apply_logged(touched, before, marked, leaves, masks, undo_word, undo_mask)
        for li in range(n_labels):
            if label_heads[li] == head:
                scores[e, li] = _sum_trees(li, present, trees, masks, leaves)
        _undo(logged, masks, undo_word, undo_mask)
        for i in range(before, marked):
            present[touched[i]] = 0
        marked = before
    for i in range(marked):
        present[touched[i]] = 0


def score_state(frontier: np.ndarray, items: ItemArrays, rules: CandidateSpec, space: FeatureTable,
                trees: TreeArrays, leaves: LeafMasks, lookup: Dict, cache: WindowArrays,
                out: ScoreBuffers) -> int:
    """Every candidate of the state with its confidence, in candidate order (first, end, label), into
    ``out.first`` .. ``out.confidence``.

    ``cache.entries[0]`` is the number of cached windows (``lookup``: window hash -> entry); the
    caller leaves room for one new entry per span plus a scratch row (the last) used on a hash
    collision. Returns the number of candidates.
    """
    return _score_state(frontier, tuple(items), rules[:-1], tuple(rules.heads), tuple(space), tuple(trees),
                        tuple(leaves), lookup, tuple(cache), tuple(out))


@njit(cache=True, nogil=True)
def _score_state(frontier, items, rules, heads, space, trees, leaves, lookup, cache, out):  # type: ignore[no-untyped-def]
    """:func:`score_state` on its records as plain tuples (``rules`` without ``heads``)."""
    items, space, trees = ItemArrays(*items), FeatureTable(*space), TreeArrays(*trees)
    leaves = LeafMasks(*leaves)
    rules, cache, out = CandidateSpec(*rules, HeadRules(*heads)), WindowArrays(*cache), ScoreBuffers(*out)
    label, tag, _, start, end_, nkids, kids, _ = items
    label_symbols, root, max_children = rules.label_symbols, rules.root, rules.max_children
    edge_stop = rules.edge_stop
    win, scores, entries = cache.windows, cache.values, cache.entries
    out_first, out_end, out_label, out_conf = out.first, out.end, out.label, out.confidence
    context = space.flags[F_CONTEXT]
    n = frontier.shape[0]
    n_labels = label_symbols.shape[0]
    scratch = scores.shape[0] - 1
    count = 0
    last_first, first_end = order_limits(frontier, nkids, rules.order)
    for first in range(last_first + 1):
        for end in range(max(first + 1, first_end), min(n, first + max_children) + 1):
            if span_stopped(frontier, first, end, start, end_, tag, nkids, edge_stop):
                continue
            root_here = root_allowed(first, end, n, rules.root_unary)
            lo, hi = max(0, first - context), min(n, end + context)
            lm, rm = max(0, context - first), max(0, end + context - n)
            key = _window_hash(lm, rm, frontier, lo, hi)
            e = lookup[key] if key in lookup else -1  # noqa: SIM401 (typed Dict.get gives an Optional)
            if e >= 0 and not _same_window(win, e, lm, rm, frontier, lo, hi):
                e = scratch  # a collision: score without caching
                _score_window(e, frontier, first, end, root_here, items, rules, space, trees, leaves, scores,
                              out)
            elif e < 0:
                e = entries[0]
                entries[0] += 1
                lookup[key] = e
                _store_window(win, e, lm, rm, frontier, lo, hi)
                _score_window(e, frontier, first, end, root_here, items, rules, space, trees, leaves, scores,
                              out)
            for li in range(n_labels):
                if li == root and not root_here:
                    continue
                if end - first == 1 and blocked_by_chain(frontier[first], label_symbols[li], label, nkids,
                                                         kids):
                    continue
                out_first[count] = first
                out_end[count] = end
                out_label[count] = li
                out_conf[count] = scores[e, li]
                count += 1
    return count


@njit(cache=True, nogil=True)
def candidate_rows(frontier: np.ndarray, items: ItemArrays, rules: CandidateSpec, space: FeatureTable,
                   out: RowBuffers) -> int:
    """Every candidate's feature row (sorted known ids), in candidate order, into ``out``: for the parity
    tests. Returns the number of candidates."""
    label, tag, _, start, end_, nkids, kids, _ = items
    label_symbols, root = rules.label_symbols, rules.root
    codes, ids, child_symbols = out.codes, out.ids, out.child_symbols
    out_indptr, out_indices = out.indptr, out.indices
    n = frontier.shape[0]
    count = 0
    nz = 0
    out_indptr[0] = 0
    last_first, first_end = order_limits(frontier, nkids, rules.order)
    for first in range(last_first + 1):
        for end in range(max(first + 1, first_end), min(n, first + rules.max_children) + 1):
            if span_stopped(frontier, first, end, start, end_, tag, nkids, rules.edge_stop):
                continue
            base = emit_head_free(codes, frontier, first, end, items, space)
            for li in range(label_symbols.shape[0]):
                if li == root and not root_allowed(first, end, n, rules.root_unary):
                    continue
                symbol = label_symbols[li]
                if end - first == 1 and blocked_by_chain(frontier[first], symbol, label, nkids, kids):
                    continue
                head = candidate_head(frontier, first, end, symbol, child_symbols, label, rules.heads)
                stop = emit_head_dependent(codes, base, frontier, first, end, head, items, space)
                k = sorted_ids(codes, stop, space.table, ids)
                out_indices[nz:nz + k] = ids[:k]
                nz += k
                out.first[count], out.end[count], out.label[count] = first, end, li
                count += 1
                out_indptr[count] = nz
    return count


# ------------------------------------------------------------------ the parser's side: greedy search

GREEDY_DONE, GREEDY_NEED_ROOM, GREEDY_STUCK, GREEDY_STEP_BOUND = 0, 1, 2, 3


def greedy_steps(frontier: np.ndarray, size: int, steps: np.ndarray, confidences: np.ndarray, taken: int,
                 max_steps: int, items: ItemArrays, rules: CandidateSpec, space: FeatureTable,
                 trees: TreeArrays, leaves: LeafMasks, lookup: Dict, cache: WindowArrays,
                 out: ScoreBuffers) -> tuple[int, int, int, int]:
    """Greedy search in one compiled call: take the state's best candidate (ties: the first in candidate
    order), build its item, repeat until ROOT is built over the whole frontier.

    ``frontier`` holds the state's item indices and is rewritten in place; ``size`` items exist. Each
    inference is written to ``steps[i]`` (first, end, label index) and ``confidences[i]``, from ``taken``
    on. The new items are appended to the item arrays (label, head child, headtag and headword from the
    head child, as :func:`~clparse.features.state.build` makes them). Stops before a state that could
    overflow the caller's buffers (items, window cache, codes) with ``GREEDY_NEED_ROOM``: grow them and
    call again with what came back. Returns (status, frontier length, items, steps taken).
    """
    return _greedy_steps(frontier, size, steps, confidences, taken, max_steps, tuple(items), rules[:-1],
                         tuple(rules.heads), tuple(space), tuple(trees), tuple(leaves), lookup, tuple(cache),
                         tuple(out))


@njit(cache=True, nogil=True)
def _greedy_steps(frontier, size, steps, confidences, taken, max_steps, items, rules, heads, space,  # type: ignore[no-untyped-def]
                  trees, leaves, lookup, cache, out):
    """:func:`greedy_steps` on its records as plain tuples (``rules`` without ``heads``)."""
    item_arrays, rule_record = ItemArrays(*items), CandidateSpec(*rules, HeadRules(*heads))
    buffers, windows = ScoreBuffers(*out), WindowArrays(*cache)
    label, tag, word, start, end_, nkids, kids, head_of = item_arrays
    label_symbols, root, max_children = rule_record.label_symbols, rule_record.root, rule_record.max_children
    n = frontier.shape[0]
    while True:
        if n == 1 and root >= 0 and label[frontier[0]] == label_symbols[root]:
            return GREEDY_DONE, n, size, taken
        if taken >= max_steps:
            return GREEDY_STEP_BOUND, n, size, taken
        spans = span_count(n, max_children)
        if (size >= label.shape[0] or windows.entries[0] + spans + 1 > windows.values.shape[0]
                or spans * label_symbols.shape[0] > buffers.confidence.shape[0]
                or _row_capacity(max_children, size + 1) > buffers.codes.shape[0]):
            return GREEDY_NEED_ROOM, n, size, taken
        count = _score_state(frontier[:n], items, rules, heads, space, trees, leaves, lookup, cache, out)
        if count == 0:
            return GREEDY_STUCK, n, size, taken
        best = 0
        conf = buffers.confidence
        for i in range(1, count):
            if conf[i] > conf[best]:
                best = i
        first, end, li = buffers.first[best], buffers.end[best], buffers.label[best]
        m = end - first
        h = candidate_head(frontier, first, end, label_symbols[li], buffers.child_symbols, label,
                           rule_record.heads)
        head_item = frontier[first + h]
        label[size], tag[size], word[size] = label_symbols[li], tag[head_item], word[head_item]
        start[size], end_[size] = start[frontier[first]], end_[frontier[end - 1]]
        head_of[size], nkids[size] = h, m
        for k in range(m):
            kids[size, k] = frontier[first + k]
        steps[taken, 0], steps[taken, 1], steps[taken, 2] = first, end, li
        confidences[taken] = conf[best]
        taken += 1
        frontier[first] = size
        for k in range(end, n):
            frontier[k - m + 1] = frontier[k]
        n -= m - 1
        size += 1


@nrt_free
def span_count(n: int, k: int) -> int:
    """Runs of 1..k consecutive items among n: Σ_first min(k, n - first) (the spans of a state)."""
    return n * (n + 1) // 2 if n <= k else n * k - k * (k - 1) // 2


# ------------------------------------------------------------------ the parser's side: best-first search
# The agenda search of clparse.search.best_first (its docstring: what it returns and how it breaks ties)
# in compiled calls. States are frontiers of item ids over the sentence's item table; items are interned
# (one id per label over the same child ids) and popped frontiers kept in a hash set, so two paths to one
# frontier are one state, as the Python search finds them by object identity. A key is stored per popped
# state (maxmin: its negated confidences, descending; sum: one float); an agenda entry is its parent's key
# with one value inserted, compared without building it.

AGENDA_COMPLETE, AGENDA_CAP, AGENDA_EMPTY, AGENDA_NEED_ROOM = 0, 1, 2, 3
# AgendaArrays.ints: the search's scalars (kept between calls, so the search resumes where it stopped)
A_STATES, A_FRONT_USED, A_KEY_USED, A_POPS, A_LO, A_HI, A_FREE, A_LAST, A_PENDING = 0, 1, 2, 3, 4, 5, 6, 7, 8
A_MAX_POPS, A_BEAM, A_SUM, A_BOUND_LEN, A_MAPPED, A_LEAVES, A_MAX_KEY = 9, 10, 11, 12, 13, 14, 15
A_INTS = 16
RANK_BATCH = 16  # candidates ranked by the first scan: offering usually stops within them


class AgendaArrays(NamedTuple):
    """One best-first search's state, agenda and item interning (:class:`clparse.search.agenda.Agenda`)."""

    ints: np.ndarray  # int64 [A_INTS]: the A_* scalars
    bound: np.ndarray  # float64: the incumbent's key (A_BOUND_LEN values, -1: no bound)
    st_front: np.ndarray  # int64 per state: where its frontier starts in front_pool
    st_len: np.ndarray  # int32: its frontier's length
    st_key: np.ndarray  # int64: where its key starts in key_pool
    st_klen: np.ndarray  # int32: its key's length
    st_parent: np.ndarray  # int32: the state it was built from (-1: the start)
    st_step: np.ndarray  # int32 [state, 3]: the inference that built it (first, end, label index)
    st_conf: np.ndarray  # float64: its confidence
    st_next: np.ndarray  # int32: the next popped state with the same frontier hash (-1: none)
    front_pool: np.ndarray  # int32: frontiers (item ids)
    key_pool: np.ndarray  # float64: keys
    slot_parent: np.ndarray  # int32 per agenda slot: the entry's parent state
    slot_step: np.ndarray  # int32 [slot, 3]: its inference
    slot_conf: np.ndarray  # float64: its confidence
    slot_at: np.ndarray  # int32: maxmin: where its value goes into the parent's key
    slot_value: np.ndarray  # float64: maxmin: minus the confidence; sum: the new key
    order: np.ndarray  # int32: the live slots best first, order[lo:hi]
    free: np.ndarray  # int32: a stack of free slots
    canon: np.ndarray  # int32 per item row: the first row with the same label over the same children
    item_next: np.ndarray  # int32 per item row: the next interned row with the same hash (-1: none)
    batch: np.ndarray  # int32 [RANK_BATCH]: scratch for ranking


@njit(cache=True, nogil=True)
def _entry_value(pool: np.ndarray, off: int, length: int, at: int, value: float, i: int) -> float:
    """Element ``i`` of the key ``pool[off:off + length]`` with ``value`` inserted at ``at`` (-1: none)."""
    if at < 0 or i < at:
        return pool[off + i]
    if i == at:
        return value
    return pool[off + i - 1]


@njit(cache=True, nogil=True)
def _compare_keys(pool: np.ndarray, off_a: int, len_a: int, at_a: int, value_a: float, off_b: int, len_b: int,
                  at_b: int, value_b: float, summed: bool) -> int:
    """-1, 0, 1 as key a is less than, equal to, greater than key b: Python's tuple order (a proper
    prefix is less). Maxmin keys are a pool key with one value inserted; sum keys are the values."""
    if summed:
        return -1 if value_a < value_b else (1 if value_a > value_b else 0)
    full_a, full_b = len_a + (at_a >= 0), len_b + (at_b >= 0)
    for i in range(min(full_a, full_b)):
        x = _entry_value(pool, off_a, len_a, at_a, value_a, i)
        y = _entry_value(pool, off_b, len_b, at_b, value_b, i)
        if x < y:
            return -1
        if x > y:
            return 1
    return -1 if full_a < full_b else (1 if full_a > full_b else 0)


@njit(cache=True, nogil=True)
def _compare_slots(a: int, b: int, agenda: AgendaArrays, summed: bool) -> int:
    pool, parent_a, parent_b = agenda.key_pool, agenda.slot_parent[a], agenda.slot_parent[b]
    return _compare_keys(pool, agenda.st_key[parent_a], agenda.st_klen[parent_a], agenda.slot_at[a],
                         agenda.slot_value[a], agenda.st_key[parent_b], agenda.st_klen[parent_b],
                         agenda.slot_at[b], agenda.slot_value[b], summed)


@njit(cache=True, nogil=True)
def _above_bound(slot: int, agenda: AgendaArrays, summed: bool) -> bool:
    """Is the entry's key worse than the incumbent's (``bound``, kept at the end of the key pool)?"""
    length = agenda.ints[A_BOUND_LEN]
    if length < 0:
        return False
    parent, bound = agenda.slot_parent[slot], agenda.bound
    if summed:
        return agenda.slot_value[slot] > bound[0]
    pool, off, klen, at = agenda.key_pool, agenda.st_key[parent], agenda.st_klen[parent], agenda.slot_at[slot]
    value = agenda.slot_value[slot]
    for i in range(min(klen + 1, length)):
        x = _entry_value(pool, off, klen, at, value, i)
        if x < bound[i]:
            return False
        if x > bound[i]:
            return True
    return klen + 1 > length


@njit(cache=True, nogil=True)
def _logistic_loss(z: float) -> float:
    """clparse.search.aggregate.logistic_loss, the same operations."""
    return math.log1p(math.exp(-z)) if z > -30 else -z + math.log1p(math.exp(z))


@njit(cache=True, nogil=True)
def _next_batch(conf: np.ndarray, count: int, last_conf: float, last_index: int, batch: np.ndarray) -> int:
    """The next candidates in ranked order (descending confidence, ties by index) after the candidate
    (``last_conf``, ``last_index``): up to ``len(batch)`` indices into ``batch``; returns how many."""
    size, m = batch.shape[0], 0
    for i in range(count):
        c = conf[i]
        if c > last_conf or (c == last_conf and i <= last_index):
            continue  # ranked already
        if m == size and not c > conf[batch[m - 1]]:
            continue  # a later index never beats an equal confidence
        at = m if m < size else size - 1
        while at > 0 and conf[batch[at - 1]] < c:
            at -= 1
        stop = m if m < size else size - 1
        for j in range(stop, at, -1):
            batch[j] = batch[j - 1]
        batch[at] = i
        if m < size:
            m += 1
    return m


@njit(cache=True, nogil=True)
def _offer_one(state: int, i: int, conf: np.ndarray, first: np.ndarray, end: np.ndarray, label: np.ndarray,
               agenda: AgendaArrays, summed: bool) -> bool:
    """Offer candidate ``i`` to the agenda; False if it cannot enter (nor can any ranked after it)."""
    ints, order, free = agenda.ints, agenda.order, agenda.free
    pool, off, klen = agenda.key_pool, agenda.st_key[state], agenda.st_klen[state]
    c = conf[i]
    slot = free[ints[A_FREE] - 1]  # filled in place, taken only if the entry enters
    agenda.slot_parent[slot] = state
    agenda.slot_conf[slot] = c
    if summed:
        agenda.slot_value[slot], agenda.slot_at[slot] = pool[off] + _logistic_loss(c), -1
    else:
        at = 0
        while at < klen and pool[off + at] >= -c:
            at += 1
        agenda.slot_value[slot], agenda.slot_at[slot] = -c, at
    if _above_bound(slot, agenda, summed):
        return False  # keys only get worse down the list
    lo, hi = ints[A_LO], ints[A_HI]
    if hi - lo >= ints[A_BEAM] and _compare_slots(slot, order[hi - 1], agenda, summed) >= 0:
        return False
    step = agenda.slot_step
    step[slot, 0], step[slot, 1], step[slot, 2] = first[i], end[i], label[i]
    ints[A_FREE] -= 1
    at = hi  # after every entry whose key is not greater (bisect.insort: equal keys, first offered)
    low = lo
    while low < at:
        mid = (low + at) // 2
        if _compare_slots(slot, order[mid], agenda, summed) < 0:
            at = mid
        else:
            low = mid + 1
    for k in range(hi, at, -1):
        order[k] = order[k - 1]
    order[at] = slot
    hi += 1
    if hi - lo > ints[A_BEAM]:  # the worst entry leaves
        hi -= 1
        free[ints[A_FREE]] = order[hi]
        ints[A_FREE] += 1
    ints[A_HI] = hi
    return True


@njit(cache=True, nogil=True)
def _offer(state: int, count: int, conf: np.ndarray, first: np.ndarray, end: np.ndarray, label: np.ndarray,
           agenda: AgendaArrays) -> None:
    """Offer the state's candidates best first (descending confidence, ties by index) to the agenda; stop
    at the first that cannot enter. Usually that is within the first batch ranked; past it, the rest are
    ranked by one stable sort instead of a scan over every candidate per batch."""
    summed = agenda.ints[A_SUM] != 0
    batch = agenda.batch
    m = _next_batch(conf, count, np.inf, -1, batch)
    for j in range(m):
        if not _offer_one(state, batch[j], conf, first, end, label, agenda, summed):
            return
    if m < batch.shape[0]:
        return  # every candidate offered
    ranked = np.argsort(-conf[:count], kind="mergesort")  # stable: ties by index, as the batches rank
    for j in range(m, count):
        if not _offer_one(state, ranked[j], conf, first, end, label, agenda, summed):
            return


@njit(cache=True, nogil=True)
def _ids_hash(seed: int, ids: np.ndarray, lo: int, hi: int) -> np.int64:
    h = (np.uint64(seed) + np.uint64(hi - lo) * np.uint64(31) + np.uint64(1)) * _W1
    for i in range(lo, hi):
        h = (h ^ np.uint64(ids[i] + 1)) * _W2
        h ^= h >> np.uint64(31)
    return np.int64(h)


@njit(cache=True, nogil=True)
def _find_item(h: np.int64, symbol: int, frontier: np.ndarray, first: int, end: int, items: ItemArrays,
               canon: np.ndarray, item_next: np.ndarray, intern: Dict) -> int:
    """The interned row of ``symbol`` over the (interned) items ``frontier[first:end]``, -1 if none."""
    row = intern[h] if h in intern else -1  # noqa: SIM401 (typed Dict.get gives an Optional)
    while row >= 0:
        if items.label[row] == symbol and items.nkids[row] == end - first:
            same = True
            for k in range(end - first):
                if canon[items.kids[row, k]] != frontier[first + k]:
                    same = False
                    break
            if same:
                return row
        row = item_next[row]
    return -1


@njit(cache=True, nogil=True)
def _intern_rows(lo: int, hi: int, items: ItemArrays, canon: np.ndarray, item_next: np.ndarray,
                 intern: Dict, scratch: np.ndarray) -> None:
    """Intern the item rows ``lo .. hi - 1`` (registered or appended since the last call): a row equal to
    an earlier one (the compiled greedy search appends its items unconditionally) is named by that one."""
    for row in range(lo, hi):
        m = items.nkids[row]
        canon[row], item_next[row] = row, -1
        if m == 0:
            continue  # a leaf: one row per word
        for k in range(m):
            scratch[k] = canon[items.kids[row, k]]
        h = _ids_hash(items.label[row], scratch, 0, m)
        found = _find_item(h, items.label[row], scratch, 0, m, items, canon, item_next, intern)
        if found >= 0:
            canon[row] = found
        else:
            item_next[row] = intern[h] if h in intern else -1  # noqa: SIM401
            intern[h] = row


@njit(cache=True, nogil=True)
def _build_item(size: int, li: int, frontier: np.ndarray, first: int, end: int, items: ItemArrays,
                rules: CandidateSpec, child_symbols: np.ndarray) -> None:
    """Append the item of label ``li`` over ``frontier[first:end]`` at row ``size``, as
    :func:`~clparse.features.state.build` makes it."""
    label, tag, word, start, end_, nkids, kids, head_of = items
    m = end - first
    h = candidate_head(frontier, first, end, rules.label_symbols[li], child_symbols, label, rules.heads)
    head_item = frontier[first + h]
    label[size], tag[size], word[size] = rules.label_symbols[li], tag[head_item], word[head_item]
    start[size], end_[size] = start[frontier[first]], end_[frontier[end - 1]]
    head_of[size], nkids[size] = h, m
    for k in range(m):
        kids[size, k] = frontier[first + k]


@njit(cache=True, nogil=True)
def _seen_before(h: np.int64, frontier: np.ndarray, lo: int, n: int, agenda: AgendaArrays,
                 seen: Dict) -> bool:
    """Was a state with the frontier ``frontier[lo:lo + n]`` popped already?"""
    state = seen[h] if h in seen else -1  # noqa: SIM401
    pool = agenda.front_pool
    while state >= 0:
        if agenda.st_len[state] == n:
            at, same = agenda.st_front[state], True
            for k in range(n):
                if pool[at + k] != frontier[lo + k]:
                    same = False
                    break
            if same:
                return True
        state = agenda.st_next[state]
    return False


@njit(cache=True, nogil=True)
def _agenda_room(size: int, spans: int, candidates: int, max_children: int, items: ItemArrays,
                 agenda: AgendaArrays, windows: WindowArrays, buffers: ScoreBuffers) -> bool:
    """Is there room for one more pop and the offering of its successors?"""
    ints = agenda.ints
    live = ints[A_HI] - ints[A_LO]
    entering = min(ints[A_BEAM] - live, candidates) + 1
    return not (size + 1 > items.label.shape[0] or size + 1 > agenda.canon.shape[0]
                or windows.entries[0] + spans + 1 > windows.values.shape[0]
                or candidates > buffers.confidence.shape[0]
                or _row_capacity(max_children, size + 1) > buffers.codes.shape[0]
                or ints[A_STATES] + 1 > agenda.st_len.shape[0]
                or ints[A_FRONT_USED] + ints[A_LEAVES] > agenda.front_pool.shape[0]
                or ints[A_KEY_USED] + ints[A_MAX_KEY] + 1 > agenda.key_pool.shape[0]
                or ints[A_FREE] < entering or agenda.order.shape[0] < live + entering)


def best_first_steps(size: int, agenda: AgendaArrays, intern: Dict, seen: Dict, items: ItemArrays,
                     rules: CandidateSpec, space: FeatureTable, trees: TreeArrays, leaves: LeafMasks,
                     lookup: Dict, cache: WindowArrays, out: ScoreBuffers) -> tuple[int, int]:
    """The agenda search (clparse.search.best_first.best_first) until its next report: a complete state
    popped (``AGENDA_COMPLETE``), the pop cap (``AGENDA_CAP``) or an empty agenda (``AGENDA_EMPTY``), the
    state in ``agenda.ints[A_LAST]``; or ``AGENDA_NEED_ROOM`` before a step that could overflow a buffer
    (grow them and call again). New items are appended to the item arrays from row ``size`` on. Returns
    (status, items)."""
    return _best_first_steps(size, tuple(agenda), intern, seen, tuple(items), rules[:-1], tuple(rules.heads),
                             tuple(space), tuple(trees), tuple(leaves), lookup, tuple(cache), tuple(out))


@njit(cache=True, nogil=True)
def _best_first_steps(size, agenda, intern, seen, items, rules, heads, space, trees, leaves, lookup, cache,  # type: ignore[no-untyped-def]
                      out):
    """:func:`best_first_steps` on its records as plain tuples (``rules`` without ``heads``)."""
    search, item_arrays = AgendaArrays(*agenda), ItemArrays(*items)
    rule_record, buffers = CandidateSpec(*rules, HeadRules(*heads)), ScoreBuffers(*out)
    windows = WindowArrays(*cache)
    ints, order, pool = search.ints, search.order, search.front_pool
    label_symbols, root, max_children = rule_record.label_symbols, rule_record.root, rule_record.max_children
    summed = ints[A_SUM] != 0
    _intern_rows(ints[A_MAPPED], size, item_arrays, search.canon, search.item_next, intern,
                 np.empty(item_arrays.kids.shape[1], dtype=np.int32))
    ints[A_MAPPED] = size
    spans = span_count(ints[A_LEAVES], max_children)
    while True:
        lo, hi = ints[A_LO], ints[A_HI]
        if lo > 0:  # the agenda's live entries back to the array's start
            for k in range(hi - lo):
                order[k] = order[lo + k]
            ints[A_LO], ints[A_HI] = 0, hi - lo
            lo, hi = 0, hi - lo
        if not _agenda_room(size, spans, spans * label_symbols.shape[0], max_children, item_arrays, search,
                            windows, buffers):
            ints[A_MAPPED] = size
            return AGENDA_NEED_ROOM, size
        pending = ints[A_PENDING]
        if pending >= 0:  # a popped state's successors
            ints[A_PENDING] = -1
            at, n = search.st_front[pending], search.st_len[pending]
            count = _score_state(pool[at:at + n], items, rules, heads, space, trees, leaves, lookup, cache,
                                 out)
            _offer(pending, count, buffers.confidence, buffers.first, buffers.end, buffers.label, search)
            continue
        if hi == lo:
            ints[A_MAPPED] = size
            return AGENDA_EMPTY, size
        slot = order[lo]
        ints[A_LO] = lo + 1
        search.free[ints[A_FREE]] = slot
        ints[A_FREE] += 1
        parent = search.slot_parent[slot]
        first, end, li = search.slot_step[slot, 0], search.slot_step[slot, 1], search.slot_step[slot, 2]
        at, pn = search.st_front[parent], search.st_len[parent]
        frontier = pool[at:at + pn]
        symbol = label_symbols[li]
        h = _ids_hash(symbol, frontier, first, end)
        item = _find_item(h, symbol, frontier, first, end, item_arrays, search.canon, search.item_next,
                          intern)
        if item < 0:
            _build_item(size, li, frontier, first, end, item_arrays, rule_record, buffers.child_symbols)
            search.canon[size] = size
            search.item_next[size] = intern[h] if h in intern else -1  # noqa: SIM401
            intern[h] = size
            item = size
            size += 1
        new, n = ints[A_FRONT_USED], pn - (end - first) + 1
        pool[new:new + first] = frontier[:first]
        pool[new + first] = item
        pool[new + first + 1:new + n] = frontier[end:]
        fh = _ids_hash(0, pool, new, new + n)
        if _seen_before(fh, pool, new, n, search, seen):
            continue
        state = _new_state(slot, parent, new, n, fh, search, seen, summed)
        if n == 1 and root >= 0 and item_arrays.label[item] == label_symbols[root]:
            ints[A_MAPPED] = size
            return AGENDA_COMPLETE, size
        if ints[A_POPS] >= ints[A_MAX_POPS]:
            ints[A_MAPPED] = size
            return AGENDA_CAP, size
        ints[A_PENDING] = state


@njit(cache=True, nogil=True)
def _new_state(slot: int, parent: int, front: int, n: int, fh: np.int64, search: AgendaArrays, seen: Dict,
               summed: bool) -> int:
    """Record the popped entry ``slot`` as a state (its frontier already at ``front_pool[front:]``)."""
    ints, keys = search.ints, search.key_pool
    state = ints[A_STATES]
    search.st_front[state], search.st_len[state] = front, n
    search.st_parent[state] = parent
    search.st_step[state, :] = search.slot_step[slot, :]
    search.st_conf[state] = search.slot_conf[slot]
    search.st_next[state] = seen[fh] if fh in seen else -1  # noqa: SIM401
    seen[fh] = state
    ints[A_FRONT_USED] += n
    off, poff, plen = ints[A_KEY_USED], search.st_key[parent], search.st_klen[parent]
    if summed:
        keys[off], klen = search.slot_value[slot], 1
    else:
        klen = plen + 1
        value, at = search.slot_value[slot], search.slot_at[slot]
        for i in range(klen):
            keys[off + i] = _entry_value(keys, poff, plen, at, value, i)
    search.st_key[state], search.st_klen[state] = off, klen
    ints[A_KEY_USED] += klen
    ints[A_MAX_KEY] = max(ints[A_MAX_KEY], klen)
    ints[A_STATES] += 1
    ints[A_POPS] += 1
    ints[A_LAST] = state
    return state


@njit(cache=True, nogil=True)
def new_lookup() -> Dict:
    """An empty int64 -> int64 typed Dict, for the agenda's hash sets: ~2 us a call, where ``Dict.empty``
    called from Python takes ~20 us."""
    return Dict.empty(key_type=types.int64, value_type=types.int64)
