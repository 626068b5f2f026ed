"""Hypothesis strategies shared by the tests: random trees over small label and word sets."""

from __future__ import annotations

from hypothesis import strategies as st

from clparse.read.tree import Tree

PHRASE_LABELS = ["S", "NP", "VP", "PP", "ADJP", "ADVP", "PRT", "SBAR", "NP-SBJ", "PP-TMP-1"]
TAGS = ["DT", "NN", "VBD", "IN", "JJ", "RB", ",", ".", "``", "''", ":", "-LRB-", "-RRB-", "-NONE-"]
WORDS = ["the", "dog", "Barked", "in", "big", "very", ",", ".", "``", "''", "*T*-1", "-LRB-", "a.b"]


@st.composite
def preterminals(draw: st.DrawFn) -> Tree:
    return Tree.preterminal(draw(st.sampled_from(TAGS)), draw(st.sampled_from(WORDS)))


def trees(max_leaves: int = 12) -> st.SearchStrategy[Tree]:
    """Random phrase trees (no wrapper); every phrase has at least one child."""
    return st.recursive(
        preterminals(),
        lambda kids: st.builds(Tree, st.sampled_from(PHRASE_LABELS), st.lists(kids, min_size=1, max_size=4)),
        max_leaves=max_leaves,
    ).filter(lambda t: not t.is_preterminal)
