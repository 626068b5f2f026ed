"""The one tree type clparse uses everywhere.

Span convention (fixed once, used by every module): half-open word offsets
``(start, end)`` over the *terminals* of the tree, so a tree over ``n`` words
has root span ``(0, n)``.

>>> t = Tree.preterminal("DT", "the")
>>> t.is_preterminal, t.words()
(True, ['the'])
>>> s = Tree("NP", [Tree.preterminal("DT", "the"), Tree.preterminal("NN", "dog")])
>>> sorted(s.labeled_spans())
[(0, 2, 'NP')]
>>> str(s)
'(NP (DT the) (NN dog))'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


def escape_brackets(token: str) -> str:
    """Parentheses cannot appear in PTB text: spell them -LRB- / -RRB-, as the treebank does (a word, or a
    tag such as the ``(`` of PTB .pos files).

    Only these two: ``[`` or ``{`` are harmless in PTB text, and treebanks such as GUM keep them as is.

    >>> escape_brackets("f(x)"), escape_brackets("(")
    ('f-LRB-x-RRB-', '-LRB-')
    """
    return token.replace("(", "-LRB-").replace(")", "-RRB-")


@dataclass(eq=False)
class Tree:
    """A labeled ordered tree.

    A *preterminal* has a ``word`` and no children (its label is the POS tag).
    A *phrase* has children and ``word is None``. A top-level wrapper such as
    ``( (S ...) )`` is read as a phrase with the empty label ``""``.
    """

    label: str
    children: list[Tree] = field(default_factory=list)
    word: str | None = None

    @classmethod
    def preterminal(cls, tag: str, word: str) -> Tree:
        return cls(tag, [], word)

    @property
    def is_preterminal(self) -> bool:
        return self.word is not None

    def preterminals(self) -> Iterator[Tree]:
        """Preterminals left to right (iterative: deep trees do not hit the recursion limit)."""
        stack: list[Tree] = [self]
        while stack:
            node = stack.pop()
            if node.is_preterminal:
                yield node
            else:
                stack.extend(reversed(node.children))

    def words(self) -> list[str]:
        return [p.word for p in self.preterminals()]  # type: ignore[misc]

    def tags(self) -> list[str]:
        return [p.label for p in self.preterminals()]

    def tagged_words(self) -> list[tuple[str, str]]:
        return [(p.word, p.label) for p in self.preterminals()]  # type: ignore[misc]

    def phrases(self) -> Iterator[Tree]:
        """Every non-preterminal node, pre-order."""
        stack: list[Tree] = [self]
        while stack:
            node = stack.pop()
            if not node.is_preterminal:
                yield node
                stack.extend(reversed(node.children))

    def spans(self) -> Iterator[tuple[int, int, Tree]]:
        """``(start, end, node)`` for every node (preterminals included), pre-order (iterative)."""
        out: list[tuple[int, int, Tree]] = []
        # (node, index of its placeholder in out, or -1 when first met)
        stack: list[tuple[Tree, int]] = [(self, -1)]
        position = 0
        while stack:
            node, index = stack.pop()
            if index >= 0:  # every child is done: the node ends where the last one did
                out[index] = (out[index][0], position, node)
                continue
            if node.is_preterminal:
                out.append((position, position + 1, node))
                position += 1
                continue
            stack.append((node, len(out)))
            out.append((position, position, node))  # placeholder, end filled above
            stack.extend((child, -1) for child in reversed(node.children))
        return iter(out)

    def labeled_spans(self) -> list[tuple[int, int, str]]:
        """``(start, end, label)`` of every phrase (preterminals excluded)."""
        return [(i, j, n.label) for i, j, n in self.spans() if not n.is_preterminal]

    def copy(self) -> Tree:
        """A deep copy (iterative: deep trees do not hit the recursion limit)."""
        return fold(self, lambda leaf: Tree(leaf.label, [], leaf.word),
                    lambda node, children: Tree(node.label, children, node.word))

    def __eq__(self, other: object) -> bool:
        """Same labels, words and shape (iterative, unlike the dataclass's own comparison)."""
        if not isinstance(other, Tree):
            return NotImplemented
        pairs: list[tuple[Tree, Tree]] = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if a.label != b.label or a.word != b.word or len(a.children) != len(b.children):
                return False
            pairs.extend(zip(a.children, b.children))
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass with eq=True made it

    def __len__(self) -> int:
        return sum(1 for _ in self.preterminals())

    def __str__(self) -> str:
        # The one real circle of read/: a tree prints as PTB text, and the writer lives beside the reader.
        from clparse.read.ptb import format_tree

        return format_tree(self)


def fold(tree: Tree, leaf: Callable[[Tree], T], phrase: Callable[[Tree, list[T]], T],
         enter: Callable[[Tree], Tree] | None = None) -> T:
    """Bottom-up over ``tree`` without recursion: ``leaf(node)`` for a preterminal, ``phrase(node,
    results of its children, left to right)`` for a phrase; ``enter`` may replace a phrase before its
    children are visited (its replacement's children are then the ones visited). Nodes are reached in
    pre-order, so counters kept by the callbacks see the order a recursive walk would.

    >>> from clparse.read.ptb import parse_tree
    >>> fold(parse_tree("(S (NP (DT a) (NN b)) (VB c))"), lambda n: 1, lambda n, kids: sum(kids))
    3
    """
    results: list[T] = []
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if node.is_preterminal:
            results.append(leaf(node))
        elif not expanded:
            if enter is not None:
                node = enter(node)
                if node.is_preterminal:
                    results.append(leaf(node))
                    continue
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
        else:
            count = len(node.children)
            children = results[len(results) - count:] if count else []
            del results[len(results) - count:]
            results.append(phrase(node, children))
    return results[0]
