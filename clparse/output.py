"""What a parse gives back, and its output formats: ``parse --format ptb|pretty|json`` (issues 28 and 29).

A :class:`ParseResult` holds a sentence's tokens and tags, for running text each token's
character offsets and characters, and its trees best first (:class:`ParsedTree`: one, or the K best with
``SearchOptions(kbest=K)``). Each tree has its score and, per phrase, the confidence of the classifier
that built it (:class:`Constituent`). :func:`to_dict` is *the* serialisation: ``--format json`` writes
it and :func:`from_dict` reads it back. ``--jobs`` and ``--dask`` send a leaner form between processes
(:func:`clparse.parse_jobs.plain`: each tree's PTB text and its phrases' confidences), which gives the
same bytes in every format. docs/output.md has the schema.

Positions: a constituent's ``start``/``end`` count the *output* tokens (every input token, in order,
after the tokens preprocessing set aside were put back), end exclusive; its confidence belongs to the
tree node (phrases in pre-order), not to a span, because a phrase grows by the punctuation put back
into it while its classifier saw the span without it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clparse.read.ptb import format_tree, format_tree_indented, iter_trees_from_lines
from clparse.read.tree import Tree

if TYPE_CHECKING:
    from clparse.features.state import Item
    from clparse.search.aggregate import Score
    from clparse.search.derivation import Step

FORMATS = ("ptb", "pretty", "json")

#: What the search left to replay a tree's confidences from: (leaves, path, ROOT item).
Derivation = tuple["Sequence[Item]", "Sequence[Step]", "Item"]


@dataclass(frozen=True)
class Constituent:
    """A phrase of an output tree: ``label`` over output tokens ``start``..``end`` (end exclusive)."""

    label: str
    start: int
    end: int
    confidence: float | None  # its classifier's confidence; None: no classifier built it (a flat tree's ROOT)
    share: float | None = None  # with k-best: the fraction of the K trees holding this labelled span
    chars: tuple[int, int] | None = None  # text input: the characters it covers, [start, end)


def score_value(score: Score | None) -> float | None:
    """One number per tree, larger is better: minus the first element of the search's sort key. Under
    max-min that is the lowest confidence of the derivation (ties are broken by the next lowest: see
    ``confidences``); under ``sum`` it is -Σ ln(1 + e^-c)."""
    if score is None or not score.key:
        return None
    return -float(score.key[0])


@dataclass
class ParsedTree:
    """One tree of a sentence, with its score and its phrases' confidences (computed when first asked:
    plain PTB output never needs them)."""

    tree: Tree
    score: float | None = None  # :func:`score_value`; None for a flat fallback tree
    confidences: tuple[float, ...] = ()  # the derivation's confidences, ascending
    derivation: Derivation | None = field(default=None, repr=False, compare=False)
    phrase_confidences: list[float | None] | None = field(default=None, repr=False)

    def confidence_per_phrase(self) -> list[float | None]:
        """Per phrase of ``tree`` in pre-order (:meth:`Tree.phrases`), its classifier's confidence."""
        if self.phrase_confidences is None:
            self.phrase_confidences = (_replay(self.tree, *self.derivation) if self.derivation is not None
                                       else [None for _ in self.tree.phrases()])
        return self.phrase_confidences


def _replay(tree: Tree, leaves: Sequence[Item], path: Sequence[Step], root: Item) -> list[float | None]:
    """The path's confidences on the phrases of ``tree``, the output tree made from ``root``.

    Putting set-aside tokens back only inserts preterminals, so the phrases of ``tree`` in pre-order are
    the phrase items of ``root`` in pre-order, one for one: each gets the confidence of its item (named
    by label and span in leaf positions, as :func:`clparse.search.derivation.confidences` names them).
    """
    from clparse.search.derivation import confidences

    by_span = confidences(leaves, path)
    items: list[Item] = []
    stack = [root]
    while stack:
        item = stack.pop()
        if not item.is_leaf:
            items.append(item)
            stack.extend(reversed(item.children))
    phrases = [node.label for node in tree.phrases()]
    if phrases != [item.label for item in items]:  # restore_tokens changed the phrases: a defect
        raise AssertionError(f"output tree {format_tree(tree)} does not hold the searched phrases")
    found = [by_span.get((item.label, item.start, item.end)) for item in items]
    return [None if c is None else float(c) for c in found]


def constituents(result: ParseResult, index: int = 0) -> list[Constituent]:
    """The phrases of the result's tree ``index`` (0: the best) in pre-order, with their confidences, their
    share of the k-best trees (when k-best was asked) and their characters (text input)."""
    tree = result.trees[index]
    spans = [(start, end, node.label) for start, end, node in tree.tree.spans() if not node.is_preterminal]
    counts = _span_counts(result) if result.kbest > 1 else None
    out = []
    for (start, end, label), confidence in zip(spans, tree.confidence_per_phrase()):
        share = counts[(label, start, end)] / len(result.trees) if counts is not None else None
        chars = None
        if result.offsets is not None and end > start:
            chars = (result.offsets[start][0], result.offsets[end - 1][1])
        out.append(Constituent(label, start, end, confidence, share, chars))
    return out


def _span_counts(result: ParseResult) -> Counter[tuple[str, int, int]]:
    """How many of the result's trees hold each labelled span (once per tree)."""
    counts: Counter[tuple[str, int, int]] = Counter()
    for parsed in result.trees:
        counts.update({(node.label, start, end) for start, end, node in parsed.tree.spans()
                       if not node.is_preterminal})
    return counts


def to_dict(result: ParseResult) -> dict[str, Any]:
    """The result as JSON-ready data (docs/output.md)."""
    return {
        "tokens": [w for w, _ in result.tagged],
        "tags": [t for _, t in result.tagged],
        "offsets": None if result.offsets is None else [list(span) for span in result.offsets],
        "text": None if result.text is None else list(result.text),
        "fallback": result.fallback,
        "completion": result.completion,
        "pops": result.pops,
        "aggregator": result.aggregator,
        "trees": [{
            "ptb": format_tree(parsed.tree),
            "score": parsed.score,
            "confidences": list(parsed.confidences),
            "constituents": [{"label": c.label, "start": c.start, "end": c.end,
                              "chars": None if c.chars is None else list(c.chars),
                              "confidence": c.confidence, "share": c.share}
                             for c in constituents(result, i)],
        } for i, parsed in enumerate(result.trees)],
    }


def from_dict(data: dict[str, Any], kbest: int | None = None) -> ParseResult:
    """The :class:`ParseResult` of :func:`to_dict`'s data (trees read back from their PTB
    text, which gives the same text again; ``(ROOT)`` is the empty sentence's tree). ``kbest``: the K
    the parse was asked for; None reads from the data whether it was above 1 (its ``share`` values), which
    is all the output depends on, so :func:`to_dict` and :func:`format_result` give the same again."""
    if kbest is None:
        # k-best data has a share on every constituent (each tree has at least its ROOT); with kbest 1
        # assumed, a K-best line read back lost its shares and was written in the one-tree format
        shared = any(c.get("share") is not None for entry in data["trees"] for c in entry["constituents"])
        kbest = max(2, len(data["trees"])) if shared else 1
    trees = []
    for entry in data["trees"]:
        (tree,) = iter_trees_from_lines([entry["ptb"]], "<result>", allow_empty=True)
        trees.append(ParsedTree(tree, entry["score"], tuple(entry["confidences"]),
                                phrase_confidences=[c["confidence"] for c in entry["constituents"]]))
    offsets = data["offsets"]
    return ParseResult(trees[0].tree, list(zip(data["tokens"], data["tags"])), data["fallback"], data["pops"],
                       data["completion"], trees=trees,
                       offsets=None if offsets is None else [(s, e) for s, e in offsets],
                       text=data["text"], kbest=kbest, aggregator=data.get("aggregator"))


@dataclass
class ParseResult:
    """A sentence's parse: tokens and tags, its trees best first (``tree`` is the best), and for running
    text where each token is in the input. :meth:`to_dict` is its JSON form (docs/output.md)."""

    tree: Tree  # ROOT over every input token
    tagged: list[tuple[str, str]]
    fallback: str | None = None  # why the tree is flat, if it is
    pops: int = 0
    completion: str | None = None  # why the search finished greedily (the pop cap), if it did
    trees: list[ParsedTree] = field(default_factory=list)  # best first, distinct; trees[0].tree is tree
    offsets: list[tuple[int, int]] | None = None  # text input: each token's characters, [start, end)
    text: list[str] | None = None  # text input: each token's characters as the input has them
    kbest: int = 1  # the K asked for (the list may be shorter)
    # what the scores mean: the search's aggregator ("sum", "maxmin"); None where no search ranked the
    # trees (a combination's vote)
    aggregator: str | None = None

    def __post_init__(self) -> None:
        if not self.trees:
            self.trees = [ParsedTree(self.tree)]

    @property
    def score(self) -> float | None:
        """The best tree's score (:func:`clparse.output.score_value`); None for a flat tree."""
        return self.trees[0].score

    def constituents(self, index: int = 0) -> list[Constituent]:
        """Tree ``index``'s phrases with their confidences (:func:`clparse.output.constituents`)."""
        return constituents(self, index)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    def __str__(self) -> str:
        return format_tree(self.tree)

    def to_nltk(self) -> Any:
        import nltk

        return nltk.Tree.fromstring(format_tree(self.tree))


def format_result(result: ParseResult, fmt: str, number: int) -> str:
    """Sentence ``number``'s output in ``fmt``, ending in a line break.

    ``ptb``: the tree on one line; with k-best (K > 1) one line per tree, ``score<TAB>tree`` (``nan`` for
    a flat tree, which has no score), and an empty line after the sentence. ``pretty``: the tree indented
    (readable back as PTB text) and an empty line; with k-best each tree after a ``#`` line naming
    sentence, rank and score. ``json``: :func:`to_dict` on one line.
    """
    if fmt == "json":
        return json.dumps(to_dict(result), ensure_ascii=False) + "\n"
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if result.kbest == 1:
        tree = result.trees[0].tree
        return format_tree(tree) + "\n" if fmt == "ptb" else format_tree_indented(tree) + "\n\n"
    parts = []
    for rank, parsed in enumerate(result.trees, 1):
        score = "nan" if parsed.score is None else repr(parsed.score)
        if fmt == "ptb":
            parts.append(f"{score}\t{format_tree(parsed.tree)}\n")
        else:
            why = f" (flat tree: {result.fallback})" if result.fallback else ""
            parts.append(f"# sentence {number}, tree {rank} of {len(result.trees)}, score {score}{why}\n"
                         f"{format_tree_indented(parsed.tree)}\n\n")
    return "".join(parts) + ("\n" if fmt == "ptb" else "")
