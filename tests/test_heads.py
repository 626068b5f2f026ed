"""Collins head rules on hand-checked trees (heads worked out by hand from Collins 1999, Table A.1)."""

from __future__ import annotations

import pytest

from clparse.preprocess.heads import HEAD_RULES, base_label, head_child_index, lexical_head
from clparse.read import parse_tree


@pytest.mark.parametrize(
    ("label", "children", "head"),
    [
        ("S", ("NP-SBJ", "VP", "."), 1),  # VP before NP in S's priority list
        ("S", ("PP", ",", "NP", "VP"), 3),
        ("VP", ("VBD", "NP", "PP"), 0),
        ("VP", ("MD", "VP"), 0),  # MD precedes VP in the list: "will (go home)" is headed by "will"
        ("VP", ("ADVP", "VBN", "PP"), 1),
        ("PP", ("IN", "NP"), 0),
        ("PP", ("RB", "IN", "NP"), 1),
        ("SBAR", ("IN", "S"), 0),
        ("SBAR", ("WHNP", "S"), 0),
        ("ADJP", ("RB", "JJ"), 1),
        ("ADVP", ("RB", "RB"), 1),  # ADVP searches from the right
        ("NP", ("DT", "JJ", "NN"), 2),
        ("NP", ("DT", "NN", "NN"), 2),  # rightmost noun
        ("NP", ("NNP", "POS"), 1),  # possessive: last child
        ("NP", ("NP", "PP"), 0),  # no noun tag among children: leftmost NP
        ("NP", ("NP", ",", "NP", ","), 0),
        ("NP", ("DT", "CD"), 1),
        ("NP", ("DT", "JJ"), 1),
        ("NP", ("DT", "PRP"), 1),  # nothing matches: last child
        ("NP", ("NN", "CC", "NN"), 0),  # coordination: head moves before the conjunction
        ("NX", ("NN", "NN"), 1),  # NX borrows the NP rule
        ("ROOT", ("S",), 0),
        ("FRAG", ("NP", "PP", "."), 2),  # FRAG: rightmost child (punctuation included, as Collins)
        ("INTJ", ("UH", "UH"), 0),
        ("X", ("NN", "IN"), 0),  # unknown label: leftmost
        ("WHNP", ("WDT", "NN"), 0),
        ("PRT", ("RP",), 0),
    ],
)
def test_head_child_index(label: str, children: tuple[str, ...], head: int) -> None:
    assert head_child_index(label, children) == head


def test_qp_priority_order() -> None:
    # QP's priority list is $ IN NNS NN JJ RB DT CD ...: with no $, IN, NNS, NN or JJ, RB beats CD.
    assert head_child_index("QP", ("RB", "CD", "TO", "CD")) == 0
    assert head_child_index("QP", ("$", "CD", "CD")) == 0


def test_coordination_can_be_switched_off() -> None:
    assert head_child_index("NP", ("NN", "CC", "NN"), coordination=False) == 2


def test_function_tags_do_not_change_heads() -> None:
    assert head_child_index("S-TPC-1", ("NP-SBJ-2", "VP")) == head_child_index("S", ("NP", "VP"))


def test_lexical_heads_on_a_hand_checked_tree() -> None:
    tree = parse_tree(
        "(S (NP-SBJ (DT The) (JJ old) (NN man)) (VP (MD will) (VP (VB give) (PRT (RP up)) "
        "(NP (PRP$ his) (NNS dogs)))) (. .))"
    )
    assert lexical_head(tree).word == "will"
    vp_inner = tree.children[1].children[1]
    assert lexical_head(vp_inner).word == "give"
    assert lexical_head(tree.children[0]).word == "man"
    assert lexical_head(vp_inner.children[2]).word == "dogs"


def test_empty_phrase_has_no_head() -> None:
    with pytest.raises(ValueError):
        head_child_index("NP", ())


def test_table_is_data_for_every_collins_label() -> None:
    expected = {"ADJP", "ADVP", "CONJP", "FRAG", "INTJ", "LST", "NAC", "NP", "PP", "PRN", "PRT", "QP", "RRC",
                "S", "SBAR", "SBARQ", "SINV", "SQ", "UCP", "VP", "WHADJP", "WHADVP", "WHNP", "WHPP"}
    assert expected == set(HEAD_RULES)
    assert base_label("-RRB-") == "-RRB-"
