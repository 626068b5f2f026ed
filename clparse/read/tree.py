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

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(eq=True)
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
        """``(start, end, node)`` for every node (preterminals included), pre-order."""
        out: list[tuple[int, int, Tree]] = []
        self._collect_spans(0, out)
        return iter(out)

    def _collect_spans(self, start: int, out: list[tuple[int, int, Tree]]) -> int:
        index = len(out)
        out.append((start, start, self))  # placeholder, end filled below
        if self.is_preterminal:
            end = start + 1
        else:
            end = start
            for child in self.children:
                end = child._collect_spans(end, out)
        out[index] = (start, end, self)
        return end

    def labeled_spans(self) -> list[tuple[int, int, str]]:
        """``(start, end, label)`` of every phrase (preterminals excluded)."""
        return [(i, j, n.label) for i, j, n in self.spans() if not n.is_preterminal]

    def copy(self) -> Tree:
        return Tree(self.label, [c.copy() for c in self.children], self.word)

    def __len__(self) -> int:
        return sum(1 for _ in self.preterminals())

    def __str__(self) -> str:
        from clparse.read.ptb import format_tree

        return format_tree(self)
