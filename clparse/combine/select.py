"""The combined tree: the constituents with ω(c) ≥ ρ, then the non-crossing subset of largest total weight.

Every kept weight is positive, so a larger set of compatible constituents always weighs more: ρ is what
holds precision up (Chen & Kit 2012 §3). The subset is found by CKY over spans: a span's weight is the
sum of its kept labels' weights, and any set of nested-or-disjoint spans extends to a binary bracketing,
so the best binary bracketing's weighted spans are the best compatible set. All labels kept on a chosen
span are kept (a unary chain; EVALB scores each).

The output tree holds every token of the reference member's tree (the member with the largest λ): if
one member's tree has exactly the chosen brackets it is returned as it is (so one member with K = 1
gives its own parse back), otherwise the tree is built over the scored words and the punctuation is put
back as the parser puts back the tokens it sets aside.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from clparse.combine.votes import SentenceVotes
from clparse.evaluate.evalb import EvalbParams
from clparse.preprocess.pipeline import ROOT_LABEL, RemovedToken
from clparse.read.tree import Tree
from clparse.search.restore import restore_tokens


@numba.njit(cache=True)
def best_bracketing(words: int, weight: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """Chosen spans (a boolean matrix [start, end]) of the binary bracketing of largest total weight;
    ties go to the leftmost split."""
    best = np.zeros((words + 1, words + 1))
    split = np.zeros((words + 1, words + 1), dtype=np.int64)
    for length in range(1, words + 1):
        for i in range(0, words - length + 1):
            j = i + length
            inner = 0.0
            if length > 1:
                inner = -1.0
                for m in range(i + 1, j):
                    value = best[i, m] + best[m, j]
                    if value > inner:
                        inner, split[i, j] = value, m
            best[i, j] = weight[i, j] + inner
    chosen = np.zeros((words + 1, words + 1), dtype=np.bool_)
    if words == 0:
        return chosen
    stack = [(0, words)]
    while stack:
        i, j = stack.pop()
        if weight[i, j] > 0.0:
            chosen[i, j] = True
        if j - i > 1:
            stack.append((i, split[i, j]))
            stack.append((split[i, j], j))
    return chosen


def choose(votes: SentenceVotes, omega: np.ndarray, threshold: float) -> np.ndarray:
    """Indices of the chosen constituents (ω ≥ ρ, in the best compatible set)."""
    kept = omega >= threshold
    if votes.words == 0 or not kept.any():
        return np.flatnonzero(np.zeros(len(omega), dtype=bool))
    weight = np.zeros((votes.words + 1, votes.words + 1))
    np.add.at(weight, (votes.spans[kept, 0], votes.spans[kept, 1]), omega[kept])
    chosen = best_bracketing(votes.words, weight)
    return np.flatnonzero(kept & chosen[votes.spans[:, 0], votes.spans[:, 1]])


def combined_tree(votes: SentenceVotes, chosen: np.ndarray, omega: np.ndarray, member_weights: np.ndarray,
                  params: EvalbParams = EvalbParams()) -> Tree:
    """The output tree of the chosen constituents (see the module's docstring)."""
    wanted = sorted((int(votes.spans[c, 0]), int(votes.spans[c, 1]), votes.labels[c]) for c in chosen)
    first = np.cumsum([0] + [len(trees) for trees in votes.trees])  # a member's first tree in votes.brackets
    for member in np.argsort(-member_weights, kind="stable"):
        for rank, (tree, _) in enumerate(votes.trees[member]):
            if votes.brackets[first[member] + rank] == wanted:
                return tree
    reference = _reference(votes, member_weights)
    tagged = reference.tagged_words()
    deleted = set(params.delete_labels)
    kept = [i for i, (_, tag) in enumerate(tagged) if tag not in deleted]
    chain = [(int(votes.spans[c, 0]), int(votes.spans[c, 1]), float(omega[c]), votes.labels[c])
             for c in chosen]
    tree = _build([tagged[i] for i in kept], chain)
    removed = [RemovedToken(i, word, tag, "evalb") for i, (word, tag) in enumerate(tagged) if tag in deleted]
    return restore_tokens(tree, kept, removed)


def _reference(votes: SentenceVotes, member_weights: np.ndarray) -> Tree:
    for member in np.argsort(-member_weights, kind="stable"):
        if votes.trees[member]:
            return votes.trees[member][0][0]
    raise ValueError("no member has a tree for this sentence")


def _build(tagged: Sequence[tuple[str, str]], constituents: Sequence[tuple[int, int, float, str]]) -> Tree:
    """ROOT over the chosen constituents (start, end, weight, label: nested spans), the heaviest label of a
    unary chain on top."""
    # outer spans first; on one span the heaviest label first (it becomes the top of the chain)
    ranked = sorted(constituents, key=lambda c: (c[0], -c[1], -c[2], c[3]))
    order = [(s, e, label) for s, e, _, label in ranked]
    root = Tree(ROOT_LABEL, [])
    open_nodes: list[tuple[int, int, Tree]] = [(0, len(tagged), root)]
    position = 0

    def add_words_until(end: int) -> None:
        nonlocal position
        while position < end:
            while open_nodes[-1][1] <= position:
                open_nodes.pop()
            open_nodes[-1][2].children.append(Tree.preterminal(tagged[position][1], tagged[position][0]))
            position += 1

    for start, end, label in order:
        add_words_until(start)
        while open_nodes[-1][1] < end:  # laminar, outer first: the deepest node reaching ``end`` holds it
            open_nodes.pop()
        node = Tree(label, [])
        open_nodes[-1][2].children.append(node)
        open_nodes.append((start, end, node))
    add_words_until(len(tagged))
    return root
