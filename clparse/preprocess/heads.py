"""Head finding with the Collins (1999, Appendix A) head rules.

The rules are one table of data (:data:`HEAD_RULES`): for each phrase label, a
list of *passes*; each pass has a search mode and a list of child labels. The
first pass that finds a child wins.

* ``left``/``right`` (priority search): for each label of the list in turn,
  scan the children from that side; the first child with the label is the head.
* ``left-any``/``right-any`` (set search, used by Collins' NP rule): scan the
  children from that side; the first child whose label is *any* of the list.
* A pass with an empty list takes the first child from its side.

If no pass finds a child, the first child from the side of the last pass is
the head (Collins' fallback).

Labels the table lacks (documented in ``docs/preprocessing.md``):

* ``ROOT``/``TOP``/empty wrapper: the first child (the wrapper has one).
* ``NX``, ``NML``: treated like ``NP`` (nominal heads of an NP).
* ``X`` and anything else unknown: the leftmost child. These are rare in GUM
  (33 ``X`` phrases in 10,224 training trees) and a left default keeps heads
  deterministic.

Child labels are compared by their *base* label (function tags and indices
stripped), so the rules work before and after preprocessing.

>>> head_child_index("PP", ("IN", "NP"))
0
>>> head_child_index("NP", ("DT", "JJ", "NN", "POS"))
3
>>> head_child_index("VP", ("VBD", "NP", "PP"))
0
>>> head_child_index("NP", ("NP", "CC", "NP"))  # coordination: head of first conjunct
0
"""

from __future__ import annotations

from functools import lru_cache

from clparse.read.tree import Tree

LEFT, RIGHT, LEFT_ANY, RIGHT_ANY = "left", "right", "left-any", "right-any"

#: label -> passes of (direction, priority labels). Collins (1999), Table A.1.
HEAD_RULES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "ADJP": ((LEFT, ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS",
                     "DT", "FW", "RBR", "RBS", "SBAR", "RB")),),
    "ADVP": ((RIGHT, ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN")),),
    "CONJP": ((RIGHT, ("CC", "RB", "IN")),),
    "FRAG": ((RIGHT, ()),),
    "INTJ": ((LEFT, ()),),
    "LST": ((RIGHT, ("LS", ":")),),
    "NAC": ((LEFT, ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ",
                    "JJS", "JJR", "ADJP", "FW")),),
    "PP": ((RIGHT, ("IN", "TO", "VBG", "VBN", "RP", "FW")),),
    "PRN": ((LEFT, ()),),
    "PRT": ((RIGHT, ("RP",)),),
    "QP": ((LEFT, ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),),
    "RRC": ((RIGHT, ("VP", "NP", "ADVP", "ADJP", "PP")),),
    "S": ((LEFT, ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),),
    "SBAR": ((LEFT, ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG")),),
    "SBARQ": ((LEFT, ("SQ", "S", "SINV", "SBARQ", "FRAG")),),
    "SINV": ((LEFT, ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),),
    "SQ": ((LEFT, ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),),
    "UCP": ((RIGHT, ()),),
    "VP": ((LEFT, ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP")),),
    "WHADJP": ((LEFT, ("CC", "WRB", "JJ", "ADJP")),),
    "WHADVP": ((RIGHT, ("CC", "WRB")),),
    "WHNP": ((LEFT, ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),),
    "WHPP": ((RIGHT, ("IN", "TO", "FW")),),
    # Collins' special NP rule, written as passes: the POS check comes first
    # (handled in code because it looks only at the last child).
    "NP": (
        (RIGHT_ANY, ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR")),
        (LEFT, ("NP",)),
        (RIGHT_ANY, ("$", "ADJP", "PRN")),
        (RIGHT, ("CD",)),
        (RIGHT_ANY, ("JJ", "JJS", "RB", "QP")),
        (RIGHT, ()),
    ),
}

#: Labels the Collins table lacks, mapped to the rule they borrow.
BORROWED_RULES = {"NX": "NP", "NML": "NP"}
WRAPPERS = frozenset({"", "ROOT", "TOP"})
NP_LIKE = frozenset({"NP", "NX", "NML"})
#: Conjunction tags for Collins' coordination adjustment.
COORDINATORS = frozenset({"CC", "CONJP"})


def base_label(label: str) -> str:
    """Strip function tags and indices: ``NP-SBJ-1`` -> ``NP``; ``-NONE-``/``-LRB-`` stay whole.

    >>> base_label("NP-SBJ-1"), base_label("PP=2"), base_label("-LRB-"), base_label("-NONE-")
    ('NP', 'PP', '-LRB-', '-NONE-')
    """
    if label.startswith("-"):
        return label
    cut = len(label)
    for mark in ("-", "="):
        at = label.find(mark)
        if 0 < at < cut:
            cut = at
    return label[:cut]


@lru_cache(maxsize=65536)
def head_child_index(label: str, child_labels: tuple[str, ...], coordination: bool = True) -> int:
    """Index of the head child of a phrase labeled ``label`` with these children.

    With ``coordination`` (Collins 1999), a head preceded by a conjunction that
    is not the first child moves to the child before the conjunction.
    """
    if not child_labels:
        raise ValueError(f"a {label or 'wrapper'} phrase with no children has no head")
    parent = base_label(label)
    children = tuple(base_label(c) for c in child_labels)
    if parent in WRAPPERS:
        return 0
    rule_name = BORROWED_RULES.get(parent, parent)
    if rule_name in NP_LIKE and children[-1] == "POS":
        head = len(children) - 1
    else:
        passes = HEAD_RULES.get(rule_name, ((LEFT, ()),))
        head = _apply_passes(passes, children)
    if coordination and head >= 2 and children[head - 1] in COORDINATORS:
        head -= 2
    return head


def _apply_passes(passes: tuple[tuple[str, tuple[str, ...]], ...], children: tuple[str, ...]) -> int:
    forward, backward = range(len(children)), range(len(children) - 1, -1, -1)
    order_of = {LEFT: forward, LEFT_ANY: forward, RIGHT: backward, RIGHT_ANY: backward}
    for mode, labels in passes:
        order = order_of[mode]
        if not labels:
            return order[0]
        if mode in (LEFT_ANY, RIGHT_ANY):
            for i in order:
                if children[i] in labels:
                    return i
        else:
            for wanted in labels:
                for i in order:
                    if children[i] == wanted:
                        return i
    return order_of[passes[-1][0]][0]


def head_child(tree: Tree, coordination: bool = True) -> Tree:
    """The head child of a phrase."""
    labels = tuple(child.label for child in tree.children)
    return tree.children[head_child_index(tree.label, labels, coordination)]


def lexical_head(tree: Tree, coordination: bool = True) -> Tree:
    """The preterminal that heads ``tree`` (follow head children down).

    >>> from clparse.read import parse_tree
    >>> lexical_head(parse_tree("(S (NP (DT The) (NN dog)) (VP (VBD barked)))")).word
    'barked'
    """
    node = tree
    while not node.is_preterminal:
        node = head_child(node, coordination)
    return node
