"""Output trees: from the search's items to PTB trees over *every* input token.

Preprocessing drops some tokens before parsing (quotation marks, outermost punctuation); EVALB
compares against the original sentence, so they are put back: each into the lowest phrase that
has material on both sides of it, or, at a sentence edge, into the top phrase under ROOT.
"""

from __future__ import annotations

from collections.abc import Sequence

from clparse.features.state import Item
from clparse.preprocess.pipeline import ROOT_LABEL, RemovedToken
from clparse.read.tree import Tree


def item_tree(item: Item, words: Sequence[str]) -> Tree:
    """The tree an item spans, with the given words at the leaves (word i is leaf i)."""
    if item.is_leaf:
        return Tree.preterminal(item.label, words[item.start])
    return Tree(item.label, [item_tree(child, words) for child in item.children])


def flat_tree(tagged: Sequence[tuple[str, str]]) -> Tree:
    """The fallback parse: every token directly under ROOT (no phrase brackets)."""
    return Tree(ROOT_LABEL, [Tree.preterminal(tag, word) for word, tag in tagged])


def restore_tokens(tree: Tree, kept_positions: Sequence[int], removed: Sequence[RemovedToken]) -> Tree:
    """Put ``removed`` tokens back into ``tree`` (whose leaf i was original token ``kept_positions[i]``)."""
    if not removed:
        return tree
    leaves = list(tree.preterminals())
    index_of = {id(leaf): kept_positions[i] for i, leaf in enumerate(leaves)}
    result = _copy(tree, index_of)
    for token in sorted(removed, key=lambda t: t.index):
        _insert(result, token)
    return strip_indices(result)


def _copy(node: Tree, index_of: dict[int, int]) -> Tree:
    if node.is_preterminal:
        leaf = Tree.preterminal(node.label, node.word or "")
        leaf._index = index_of[id(node)]  # type: ignore[attr-defined]
        return leaf
    return Tree(node.label, [_copy(child, index_of) for child in node.children])


def _first(node: Tree) -> int:
    return node._index if node.is_preterminal else _first(node.children[0])  # type: ignore[attr-defined]


def _last(node: Tree) -> int:
    return node._index if node.is_preterminal else _last(node.children[-1])  # type: ignore[attr-defined]


def _insert(root: Tree, token: RemovedToken) -> None:
    leaf = Tree.preterminal(token.tag, token.word)
    leaf._index = token.index  # type: ignore[attr-defined]
    node = root
    # Under ROOT, go down to the top phrase (a lone top phrase takes edge tokens too).
    while len(node.children) == 1 and not node.children[0].is_preterminal:
        node = node.children[0]
    while True:  # descend while one child covers the token's position strictly inside it
        inside = [c for c in node.children if not c.is_preterminal and _first(c) < token.index < _last(c)]
        if not inside:
            break
        node = inside[0]
    position = sum(1 for c in node.children if _last(c) < token.index)
    node.children.insert(position, leaf)


def strip_indices(tree: Tree) -> Tree:
    """A clean copy (without the bookkeeping attribute restore_tokens adds)."""
    if tree.is_preterminal:
        return Tree.preterminal(tree.label, tree.word or "")
    return Tree(tree.label, [strip_indices(c) for c in tree.children])
