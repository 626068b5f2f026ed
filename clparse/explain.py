"""Why the parser built what it built: each constituent's confidence, taken apart into its trees.

A constituent's confidence is what its label's classifier said of the inference that built it, on the
frontier of that moment (the search's derivation, ``SearchResult.path``): Q(I) = Σ_t κ_t, one leaf
confidence κ per boosted tree of the label at Θ̂. :func:`explain` parses a sentence as ``clparse parse``
does, replays the derivation from the leaves (:mod:`clparse.search.derivation`) and, for each
constituent, computes the candidate's features the way the reference scorer does (the head child from
the label's head rule, the head-free and head-dependent features of the feature kernels, named as
:mod:`clparse.features.describe` names them), then walks every tree of the label's forest on them in
Python, without the compiled scorer. The κ it reaches, summed in tree order, are the confidence the
search used (``Constituent.total`` against ``Constituent.confidence``; the tests hold them to it).

Every tree is named by what finds it in SQL: label id and iteration (the primary key of
``iterations``), its leaf's node number (``tree_nodes.node``) and the ids of the features tested on the
way (``features.id``); :meth:`TreeContribution.sql` is a ready-to-paste ``clparse sql`` command.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clparse.errors import ClparseError, ParameterError
from clparse.features.describe import candidate_features
from clparse.features.space import feature_text
from clparse.read.ptb import format_tree, format_tree_indented
from clparse.search.aggregate import DEFAULT_AGGREGATOR
from clparse.search.derivation import constituents as replay

if TYPE_CHECKING:
    from clparse.features.state import Item
    from clparse.output import ParseResult
    from clparse.parser import Parser
    from clparse.read.tree import Tree
    from clparse.search.derivation import Step

#: The ``clparse sql`` query showing one tree's nodes; ``{label_id}`` and ``{iteration}`` name the tree.
TREE_QUERY = ("SELECT n.node, n.depth, n.feature_id, f.text AS split_on, n.true_child, n.false_child, "
              "n.confidence AS kappa, n.examples FROM tree_nodes AS n LEFT JOIN features AS f "
              "ON f.id = n.feature_id WHERE n.label_id = {label_id} AND n.iteration = {iteration} "
              "ORDER BY n.node")


@dataclass(frozen=True)
class FeatureTest:
    """One split on the way to a leaf: the feature it tests and whether the candidate has it."""

    feature_id: int  # features.id (tree_nodes.feature_id)
    name: str  # readable: ``child[head].label = VP``
    present: bool  # True: the candidate went to the node's true_child
    node: int  # the split's tree_nodes.node


@dataclass(frozen=True)
class TreeContribution:
    """One boosted tree of a label, and the leaf the candidate reached in it."""

    label: str
    label_id: int  # labels.id
    iteration: int  # iterations.iteration: the tree's place in boosting, from 1
    leaf: int  # tree_nodes.node of the leaf reached
    kappa: float  # the leaf's confidence κ, added to the candidate's confidence
    tests: tuple[FeatureTest, ...]  # the splits on the way from the root, in order

    def sql(self, db: str | Path) -> str:
        """A ``clparse sql`` command, ready to paste, listing this tree's rows of ``tree_nodes``."""
        query = TREE_QUERY.format(label_id=self.label_id, iteration=self.iteration)
        return f"clparse sql --db {shlex.quote(str(db))} {shlex.quote(query)}"


@dataclass(frozen=True)
class Constituent:
    """A phrase of the parse, its classifier's confidence and the trees it is the sum of."""

    label: str
    label_id: int
    start: int  # output tokens (every input token), end exclusive, as ``parse --format json`` counts them
    end: int
    words: tuple[str, ...]  # the output tokens it covers
    step: int  # its inference's place in the derivation, from 0 (children are built before parents)
    confidence: float  # the confidence the search used (SearchResult.path)
    total: float  # Σ κ over every tree, in tree order, computed here without the compiled scorer
    kappas: tuple[float, ...]  # each tree's κ, in iteration order (tree t is kappas[t - 1])
    top: tuple[TreeContribution, ...]  # the trees with the largest |κ|, largest first
    lowest: bool = False  # the derivation's lowest confidence: under max-min, the parse's score

    @property
    def rest(self) -> float:
        """What the trees not in ``top`` add up to."""
        shown = {t.iteration for t in self.top}
        return math.fsum(k for i, k in enumerate(self.kappas, 1) if i not in shown)


# The line that says what the parse's score is, by aggregator (clparse.search.aggregate).
RANKED_BY = {
    "sum": "The search ranked parses by the summed logistic loss of their phrases' confidences "
           "(--aggregator sum).",
    "maxmin": "The search ranked parses by their lowest confidence, then the next lowest (--aggregator "
              "maxmin).",
}


@dataclass
class Explanation:
    """A sentence's parse and, for every phrase built by a classifier, its confidence taken apart."""

    db: Path
    theta: float | dict[str, float]  # Θ̂: one for every label, or one per label
    tagged: list[tuple[str, str]]
    tree: Tree
    constituents: list[Constituent]  # in tree order (pre-order: the order of the brackets in ``ptb``)
    fallback: str | None = None  # why the tree is flat (then no classifier built a phrase of it)
    completion: str | None = None  # why the search finished greedily at the pop cap, if it did
    top: int = 3
    # how the search ranked parses (clparse.search.aggregate): what the parse's score is
    aggregator: str = DEFAULT_AGGREGATOR

    @property
    def ptb(self) -> str:
        return format_tree(self.tree)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: what the text shows, with every tree's κ and each shown tree's SQL."""
        return {
            "db": str(self.db),
            "theta": self.theta,
            "aggregator": self.aggregator,
            "tokens": [w for w, _ in self.tagged],
            "tags": [t for _, t in self.tagged],
            "ptb": self.ptb,
            "fallback": self.fallback,
            "completion": self.completion,
            "constituents": [{
                "label": c.label, "label_id": c.label_id, "start": c.start, "end": c.end,
                "words": list(c.words), "step": c.step, "confidence": c.confidence, "total": c.total,
                "lowest": c.lowest, "trees": len(c.kappas), "kappas": list(c.kappas), "rest": c.rest,
                "top": [{
                    "label_id": t.label_id, "iteration": t.iteration, "leaf": t.leaf, "kappa": t.kappa,
                    "tests": [{"feature_id": s.feature_id, "name": s.name, "present": s.present,
                               "node": s.node} for s in t.tests],
                    "sql": t.sql(self.db),
                } for t in c.top],
            } for c in self.constituents],
        }

    def format(self) -> str:
        """The text ``clparse explain`` prints: the tree, then one block per constituent in tree order.

        Tree order (pre-order, the order of the brackets) rather than by confidence: the blocks then read
        like the tree above them, parents before their children, and the phrase whose confidence is the
        parse's score under max-min (the lowest) is marked where it stands."""
        shown = f"{self.theta:g}" if isinstance(self.theta, (int, float)) else "per label"
        lines = [format_tree_indented(self.tree), ""]
        if self.fallback is not None:
            lines.append(f"a flat tree ({self.fallback}): no classifier built a phrase of it")
            return "\n".join(lines) + "\n"
        if self.completion is not None:
            lines.append(f"note: {self.completion}")
        lines += [f"Θ̂ = {shown}. A phrase's confidence is the sum over every tree of its label of κ, the "
                  "confidence of the leaf its candidate reaches;",
                  f"the trees with the largest |κ| are shown (up to {self.top}), with the features tested on "
                  "the way."]
        lines.append(RANKED_BY.get(self.aggregator, f"The search ranked parses with {self.aggregator!r}."))
        score = ": the parse's score (max-min)" if self.aggregator == "maxmin" else ""
        for c in self.constituents:
            flag = f"   <- the lowest{score}" if c.lowest else ""
            trees = f"{len(c.kappas)} tree{'' if len(c.kappas) == 1 else 's'}"  # "from 1 trees"
            lines += ["", f"{c.label} over tokens {c.start}-{c.end} \"{' '.join(c.words)}\": confidence "
                          f"{c.confidence:+.4f} from {trees}{flag}"]
            for t in c.top:
                lines.append(f"  κ {t.kappa:+.4f}  {t.label} tree {t.iteration} (label_id {t.label_id}, "
                             f"iteration {t.iteration}, leaf node {t.leaf})")
                lines += [f"      {'has  ' if s.present else 'lacks'}  {s.name}  (feature {s.feature_id})"
                          for s in t.tests]
                if not t.tests:
                    lines.append("      (a single leaf: every candidate gets its κ)")
            others = len(c.kappas) - len(c.top)
            if others:
                lines.append(f"  κ {c.rest:+.4f}  from the {others} other tree{'s' if others > 1 else ''}")
        # The SQL shows the weakest phrase's strongest tree: the one most worth a look.
        shown_trees = [t for c in sorted(self.constituents, key=lambda c: not c.lowest) for t in c.top]
        if shown_trees:
            first = shown_trees[0]
            lines += ["", f"A tree's nodes in SQL ({first.label} tree {first.iteration} here; for another, "
                          "change label_id and iteration):", first.sql(self.db)]
        return "\n".join(lines) + "\n"


def sentence_tokens(text: str, input_format: str = "tokens", name: str = "sentence",
                    line: int = 1) -> list[str] | list[tuple[str, str]]:
    """A sentence given as text: its tokens (``tokens``) or its ``word/TAG`` pairs (``tagged``), as ``clparse
    parse`` reads a line of either; an empty sentence or a token that is not word/TAG is an error naming
    ``name`` and ``line``."""
    from clparse.read.sentences import _tagged

    tokens = text.split()
    if not tokens:
        raise ClparseError("no sentence given: give its tokens as arguments or on stdin")
    if input_format == "tokens":
        return tokens
    if input_format != "tagged":
        raise ClparseError(f"unknown input format {input_format!r}; choose tokens or tagged")
    return [_tagged(token, name, line, column) for column, token in enumerate(tokens, 1)]


def explain(parser: Parser, sentence: Any, top: int = 3) -> Explanation:
    """Parse ``sentence`` (tokens, ``(word, tag)`` pairs or a string, as :meth:`Parser.parse` takes it) and
    explain every constituent's confidence by the ``top`` trees with the largest |κ|."""
    # a fraction or a bool failed later as "slice indices must be integers" (or True took 1 in silence)
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ParameterError("top", f"must be a whole number ≥ 0, got {top!r}")
    stored = getattr(parser, "stored", None)  # a CombinedParser: `clparse combine`'s database
    if stored is not None:
        members = ", ".join(m.source + (f"@{m.theta}" if m.theta not in (None, "best") else "")
                            for m in stored.members)
        raise ClparseError("explain takes one parser's database; this is a combination (clparse combine), "
                           f"whose trees are its members': explain a member ({members})")
    if parser.source is None:
        raise ClparseError("explain needs a parser opened from a database (Parser.from_db): the trees' "
                           "ids are read from it")
    result = parser.parse(sentence)
    model = parser.model
    theta: float | dict[str, float] = dict(model.label_thetas) if model.label_thetas else model.theta
    explanation = Explanation(parser.source, theta, list(result.tagged), result.tree, [], result.fallback,
                              result.completion, top, parser.options.aggregator)
    derivation = result.trees[0].derivation
    if derivation is None:  # a flat tree: no inference built it
        return explanation
    leaves, path, _ = derivation
    explanation.constituents = _explain_path(parser, result, leaves, path, top)
    return explanation


def _explain_path(parser: Parser, result: ParseResult, leaves: Sequence[Item], path: Sequence[Step],
                  top: int) -> list[Constituent]:
    from clparse.store.database import Database

    model = parser.model
    with Database(parser.source or "", readonly=True) as database, database.raw() as connection:
        label_ids = {str(name): int(i) for i, name in connection.execute("SELECT id, name FROM labels")}
    # Features no tree tests cannot change a walk: only the tested ones need an id.
    id_of = {feature_text(key): i for key, i in model.for_scoring().feature_ids.items()}
    name_of = {i: text for text, i in id_of.items()}
    built: list[tuple[Item, Constituent]] = []
    frontier = tuple(leaves)
    for step, ((item, confidence), (first, end, label, _)) in enumerate(zip(replay(leaves, path), path)):
        # The candidate's features on the frontier of that moment: head from the label's rule (item.head).
        texts = candidate_features(frontier, first, end, item.head, model.features)
        row = {id_of[t] for t in texts if t in id_of}
        kappas, trees = _walk(model.ensembles[label].forest, row, name_of, label, label_ids[label])
        total = 0.0
        for kappa in kappas:  # in tree order, one addition each: the additions the scorer makes
            total += kappa
        chosen = tuple(sorted(trees, key=lambda t: (-abs(t.kappa), t.iteration))[:top])
        built.append((item, Constituent(label, label_ids[label], item.start, item.end, (), step, confidence,
                                        total, kappas, chosen)))
        frontier = frontier[:first] + (item,) + frontier[end:]
    # Pre-order of the parse's phrases: by start, longer spans first, and in a unary chain the later
    # inference (the parent) first. Positions then move to the output tokens, where set-aside tokens are
    # back (restore_tokens only inserts preterminals, so the phrases correspond one for one).
    built.sort(key=lambda pair: (pair[0].start, -pair[0].end, -pair[1].step))
    phrases = [(s, e, node.label) for s, e, node in result.tree.spans() if not node.is_preterminal]
    if [label for _, _, label in phrases] != [c.label for _, c in built]:
        raise ClparseError(f"the output tree {format_tree(result.tree)} does not hold the searched phrases "
                           "(a defect)")
    words = [w for w, _ in result.tagged]
    out = [dataclasses.replace(c, start=s, end=e, words=tuple(words[s:e]))
           for (s, e, _), (_, c) in zip(phrases, built)]
    if out:
        weakest = min(range(len(out)), key=lambda i: (out[i].confidence, out[i].step))
        out[weakest] = dataclasses.replace(out[weakest], lowest=True)
    return out


def _walk(forest: Any, row: set[int], name_of: dict[int, str], label: str,
          label_id: int) -> tuple[tuple[float, ...], list[TreeContribution]]:
    """Every tree of ``forest`` walked node by node on the feature set ``row``: the κ reached in each, in
    order, and each tree's path. A forest's tree t is iteration t + 1; a node's number in its tree is its
    index less the tree's root index (trees are stored from node 0, breadth-first, in node order)."""
    feature, true_child, false_child, value = (forest.feature.tolist(), forest.true_child.tolist(),
                                               forest.false_child.tolist(), forest.value.tolist())
    kappas: list[float] = []
    trees: list[TreeContribution] = []
    for t, root in enumerate(forest.roots.tolist()):
        node, tests = root, []
        while feature[node] >= 0:
            present = feature[node] in row
            tests.append(FeatureTest(feature[node], name_of.get(feature[node], f"feature {feature[node]}"),
                                     present, node - root))
            node = true_child[node] if present else false_child[node]
        kappas.append(value[node])
        trees.append(TreeContribution(label, label_id, t + 1, node - root, value[node], tuple(tests)))
    return tuple(kappas), trees
