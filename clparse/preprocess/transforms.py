"""The tree transforms of the paper's Table 3, one function each.

Every transform takes a phrase tree (wrappers already removed) and returns
``(new_tree, changes)``: the new tree (``None`` if nothing is left) and how
many nodes it changed, for the preprocessing report. Transforms never mutate
their input; they build new phrase nodes but *reuse preterminal objects*, so
the pipeline can tell which tokens a step removed by object identity.

Punctuation means the tags EVALB's COLLINS.prm ignores (``, : . `` ''``), so
moving or removing it never changes a scored bracket. ``-LRB-``/``-RRB-``,
``HYPH``, ``NFP`` and ``SYM`` are words like any other (EVALB scores them).

No transform recurses (:func:`~clparse.read.tree.fold` walks the tree with a stack), so a tree nested
thousands of levels deep is preprocessed like any other.
"""

from __future__ import annotations

from collections.abc import Callable

from clparse.preprocess.heads import base_label
from clparse.read.tree import Tree, fold

PUNCTUATION_TAGS = frozenset({",", ":", ".", "``", "''"})
QUOTE_TAGS = frozenset({"``", "''"})
EMPTY_ELEMENT_TAG = "-NONE-"

Transform = Callable[[Tree], "tuple[Tree | None, int]"]


def _same(node: Tree) -> Tree:
    return node


def is_punctuation(node: Tree) -> bool:
    return node.is_preterminal and node.label in PUNCTUATION_TAGS


def _relabel(tree: Tree, new_label: Callable[[str], str]) -> tuple[Tree | None, int]:
    """Copy ``tree`` with every phrase label passed through ``new_label``; count the changes."""
    changes = 0

    def phrase(node: Tree, children: list[Tree]) -> Tree:
        nonlocal changes
        label = new_label(node.label)
        changes += label != node.label
        return Tree(label, children)

    return fold(tree, _same, phrase), changes


def strip_function_tags(tree: Tree) -> tuple[Tree | None, int]:
    """``NP-SBJ-1`` -> ``NP``, ``PP=2`` -> ``PP``; tags such as ``-NONE-``/``-LRB-`` are untouched.

    >>> from clparse.read import parse_tree
    >>> t, n = strip_function_tags(parse_tree("(S (NP-SBJ-1 (-NONE- *)) (VP (VBD left)))"))
    >>> str(t), n
    ('(S (NP (-NONE- *)) (VP (VBD left)))', 1)
    """
    return _relabel(tree, base_label)


def _delete_leaves(tree: Tree, doomed: Callable[[Tree], bool]) -> tuple[Tree | None, int]:
    """Remove preterminals for which ``doomed`` holds, then phrases left without children."""
    removed = 0

    def leaf(node: Tree) -> Tree | None:
        nonlocal removed
        if doomed(node):
            removed += 1
            return None
        return node

    def phrase(node: Tree, children: list[Tree | None]) -> Tree | None:
        nonlocal removed
        kept = [c for c in children if c is not None]
        if not kept:
            removed += 1
            return None
        return Tree(node.label, kept)

    return fold(tree, leaf, phrase), removed


def delete_empty_elements(tree: Tree) -> tuple[Tree | None, int]:
    """Remove ``-NONE-`` elements (traces, null complementizers) and phrases left empty.

    >>> from clparse.read import parse_tree
    >>> t, n = delete_empty_elements(parse_tree("(S (NP (-NONE- *)) (VP (VBD left)))"))
    >>> str(t), n
    ('(S (VP (VBD left)))', 2)
    """
    return _delete_leaves(tree, lambda leaf: leaf.label == EMPTY_ELEMENT_TAG)


def prt_to_advp(tree: Tree) -> tuple[Tree | None, int]:
    """Relabel ``PRT`` as ``ADVP`` (Magerman 1995); EVALB treats them as equal anyway."""
    return _relabel(tree, lambda label: "ADVP" + label[3:] if base_label(label) == "PRT" else label)


def remove_quotation_marks(tree: Tree) -> tuple[Tree | None, int]:
    """Remove tokens tagged ``````/``''`` and phrases left empty (Bikel 2004)."""
    return _delete_leaves(tree, lambda leaf: leaf.label in QUOTE_TAGS)


def raise_punctuation(tree: Tree) -> tuple[Tree | None, int]:
    """Move punctuation at the left or right edge of a phrase up, out of that phrase (Bikel 2004).

    Repeated bottom-up, so punctuation ends as high as it can go without
    changing the words' order. A phrase made only of punctuation stays as it is.

    >>> from clparse.read import parse_tree
    >>> t, n = raise_punctuation(parse_tree("(S (NP (NNP John) (, ,)) (VP (VBD left) (. .)))"))
    >>> str(t), n
    ('(S (NP (NNP John)) (, ,) (VP (VBD left)) (. .))', 2)
    """
    moved = 0

    def lift(node: Tree, lifted: list[list[Tree]]) -> list[Tree]:
        """The nodes that replace ``node`` in its parent: leading punctuation, node, trailing."""
        nonlocal moved
        children = [child for nodes in lifted for child in nodes]
        if node is tree:  # the top phrase has no parent to raise anything into
            return [Tree(node.label, children)]
        start, end = 0, len(children)
        while start < end and is_punctuation(children[start]):
            start += 1
        while end > start and is_punctuation(children[end - 1]):
            end -= 1
        if start == end:  # only punctuation: nothing to raise it out of
            return [Tree(node.label, children)]
        moved += start + len(children) - end
        return children[:start] + [Tree(node.label, children[start:end])] + children[end:]

    if tree.is_preterminal:
        return tree, 0
    return fold(tree, lambda leaf: [leaf], lift)[0], moved


def remove_outermost_punctuation(tree: Tree) -> tuple[Tree | None, int]:
    """Remove the punctuation tokens before the first and after the last other word.

    A sentence made only of punctuation is left as it is (there would be nothing to parse).
    """
    leaves = list(tree.preterminals())
    first = next((i for i, leaf in enumerate(leaves) if not is_punctuation(leaf)), None)
    if first is None:
        return tree, 0
    last = max(i for i, leaf in enumerate(leaves) if not is_punctuation(leaf))
    doomed = {id(leaf) for leaf in leaves[:first] + leaves[last + 1:]}
    if not doomed:
        return tree, 0
    return _delete_leaves(tree, lambda leaf: id(leaf) in doomed)


def remove_unary_self_projections(tree: Tree) -> tuple[Tree | None, int]:
    """Collapse ``(X (X ...))`` into ``(X ...)``: two items with one span and one label.

    >>> from clparse.read import parse_tree
    >>> t, n = remove_unary_self_projections(parse_tree("(S (NP (NP (NN it))) (VP (VBZ is)))"))
    >>> str(t), n
    ('(S (NP (NN it)) (VP (VBZ is)))', 1)
    """
    collapsed = 0

    def enter(node: Tree) -> Tree:
        nonlocal collapsed
        while len(node.children) == 1 and not node.children[0].is_preterminal \
                and node.children[0].label == node.label:
            node = node.children[0]
            collapsed += 1
        return node

    return fold(tree, _same, lambda node, children: Tree(node.label, children), enter), collapsed


#: Table 3's tree steps, in the paper's order: (name, transform).
STEPS: tuple[tuple[str, Transform], ...] = (
    ("strip_function_tags", strip_function_tags),
    ("delete_empty_elements", delete_empty_elements),
    ("prt_to_advp", prt_to_advp),
    ("remove_quotation_marks", remove_quotation_marks),
    ("raise_punctuation", raise_punctuation),
    ("remove_outermost_punctuation", remove_outermost_punctuation),
    ("remove_unary_self_projections", remove_unary_self_projections),
)
STEP_NAMES = tuple(name for name, _ in STEPS)
