"""The head-rule and edge tables grow with the symbol table one row at a time (with room to spare); grown
symbol by symbol they equal the tables built at once for the final symbol table."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.features.symbols import CandidateRules, HeadTable, SymbolTable
from clparse.preprocess.heads import HEAD_RULES

SYMBOLS = sorted(HEAD_RULES) + ["NP-SBJ", "PRP$", "POS", "CC", "CONJP", ",", ".", "``", "''", "-LRB-", "dog",
                                "ROOT", "X", "TOP", "NN", "S-TPC-1", "the", "UNK"]


@settings(max_examples=30, deadline=None)
@given(order=st.permutations(SYMBOLS), steps=st.lists(st.integers(1, 7), min_size=1, max_size=30))
def test_grown_tables_equal_tables_built_at_once(order: list[str], steps: list[int]) -> None:
    grown_symbols = SymbolTable()
    heads = HeadTable(grown_symbols)
    rules = CandidateRules(grown_symbols, constraints=True)
    at = 0
    for step in steps:
        for text in order[at:at + step]:
            grown_symbols.add(text)
        at += step
        heads.grow(grown_symbols)
        rules.refresh()
    for text in order[at:]:
        grown_symbols.add(text)
    heads.grow(grown_symbols)
    edge = rules.refresh()
    fresh = HeadTable(grown_symbols)
    n = len(grown_symbols)
    assert heads.size == fresh.size == n
    for name in ("parent_rule", "parent_np", "child_class", "child_pos", "child_coordinator"):
        assert np.array_equal(getattr(heads, name)[:n], getattr(fresh, name)[:n]), name
    assert np.array_equal(edge[:n], CandidateRules(grown_symbols, constraints=True).refresh()[:n])
    assert edge[:n].any()  # punctuation symbols are marked


def test_grow_says_whether_rows_were_added() -> None:
    symbols = SymbolTable()
    heads = HeadTable(symbols)
    assert not heads.grow(symbols)
    symbols.add("NP")
    before = heads.arrays()
    assert heads.grow(symbols) and heads.arrays() is not before and not heads.grow(symbols)
