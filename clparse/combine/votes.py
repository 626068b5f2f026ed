"""Constituent votes of several parsers' k-best lists (Chen & Kit 2012 §3, after Fossum & Knight 2009).

A constituent c is a labelled span; its weight is ω(c) = Σ_i Σ_k λ_i δ(c, t_ik) f(t_ik): member i's
weight λ_i, times f of each of its K trees that contains c. Spans are counted as EVALB counts them:
over the words it scores (punctuation left out) and with its labels (function tags cut), so two members
that only attach a comma differently vote for the same constituent, and ω is about the brackets F1
scores.

f(t_ik) is the tree's share of its list: a softmax of the members' tree scores (what their search ranks by:
minus the summed loss of the tree's derivation, or under max-min its lowest confidence; every member with
the same aggregator) at a temperature τ; τ → ∞ gives every tree
of the list the same share, τ → 0 all of it to the best tree. Each list's f sums to 1, so ω(c) ≤ Σ λ_i.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from clparse.evaluate.evalb import EvalbParams, score_view
from clparse.read.tree import Tree

Scored = tuple[Tree, float]  # a tree and its score (higher is better)


@dataclass
class SentenceVotes:
    """One sentence's candidate constituents and which member trees hold them."""

    words: int  # words EVALB scores
    spans: np.ndarray  # (constituents, 2): start, end over the scored words
    labels: list[str]  # per constituent
    occurrence: np.ndarray  # 1, or k for the k-th bracket of one labelled span in a tree (see collect)
    # one row per (constituent, member, rank) where the member's tree at that rank holds the constituent
    holder_constituent: np.ndarray
    holder_tree: np.ndarray  # index into ``scores`` / ``tree_member``
    scores: np.ndarray  # every member tree's score, members in order, best first
    tree_member: np.ndarray  # the member of each tree
    trees: list[list[Scored]]  # the members' lists, as given
    # every tree's scored brackets, sorted (start, end, label), members in order: what combined_tree compares
    brackets: list[list[tuple[int, int, str]]]

    @property
    def constituents(self) -> int:
        return len(self.labels)


def collect(lists: Sequence[Sequence[Scored]], params: EvalbParams = EvalbParams()) -> SentenceVotes:
    """The votes of one sentence: ``lists[i]`` is member i's k-best list (best first; may be empty).

    A tree can hold one labelled span twice as EVALB sees it (``(S (S ...) .)``: the period is not
    scored), and EVALB then counts two brackets; so a constituent is a labelled span and an occurrence
    number, and such a tree votes for occurrences 1 and 2.
    """
    index: dict[tuple[int, int, str, int], int] = {}  # (start, end, label, occurrence) -> constituent
    holders: list[tuple[int, int]] = []
    scores: list[float] = []
    members: list[int] = []
    tree_brackets: list[list[tuple[int, int, str]]] = []
    words = -1
    for member, trees in enumerate(lists):
        for tree, score in trees:
            view = score_view(tree, params)
            if words < 0:
                words = len(view.words)
            elif len(view.words) != words:
                raise ValueError(f"member {member}'s tree has {len(view.words)} scored words, an earlier "
                                 f"tree {words}: the members parsed different tokens")
            tree_index = len(scores)
            scores.append(score)
            members.append(member)
            tree_brackets.append(sorted((b.start, b.end, b.label) for b in view.brackets))
            for bracket, count in Counter(tree_brackets[-1]).items():
                for occurrence in range(1, count + 1):  # δ is 0 or 1 per tree and occurrence
                    holders.append((index.setdefault((*bracket, occurrence), len(index)), tree_index))
    spans = np.array([[s, e] for s, e, _, _ in index], dtype=np.int64).reshape(-1, 2)
    holder = np.array(holders, dtype=np.int64).reshape(-1, 2)
    return SentenceVotes(max(words, 0), spans, [label for _, _, label, _ in index],
                         np.array([k for _, _, _, k in index], dtype=np.int64), holder[:, 0], holder[:, 1],
                         np.array(scores, dtype=np.float64), np.array(members, dtype=np.int64),
                         [list(trees) for trees in lists], tree_brackets)


def tree_shares(scores: np.ndarray, tree_member: np.ndarray, members: int, temperature: float) -> np.ndarray:
    """f(t_ik): each tree's softmax share of its member's list at ``temperature``."""
    shares = np.zeros(len(scores))
    for member in range(members):
        mine = tree_member == member
        if not mine.any():
            continue
        z = scores[mine] / temperature
        z = np.exp(z - z.max())  # the best tree's term is 1: no overflow
        shares[mine] = z / z.sum()
    return shares


def weights(votes: SentenceVotes, member_weights: np.ndarray, temperature: float) -> np.ndarray:
    """ω(c) for every candidate constituent of the sentence."""
    f = tree_shares(votes.scores, votes.tree_member, len(member_weights), temperature)
    per_holder = member_weights[votes.tree_member[votes.holder_tree]] * f[votes.holder_tree]
    return np.bincount(votes.holder_constituent, weights=per_holder, minlength=votes.constituents)
