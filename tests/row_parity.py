"""Shared by the parity tests: the candidate rows ``prepare`` stores and those the parser's kernel offers.

Both are counted as (label, feature row bytes) over every state of every training tree's path, so
two counters that are equal mean the two sides offer the same candidates with the same features.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from clparse.features.space import FeatureConfig
from clparse.examples.generate import ExampleGenerator
from clparse.features.items import ItemTable
from clparse.features.state import Item, build, leaf_items
from clparse.forest import Forest
from clparse.preprocess import Preprocessed, Vocabulary
from clparse.rebuild.model import LabelEnsemble, ParserModel
from clparse.search.scorer import CompiledModel, state_rows

RowCounts = Counter[tuple[str, bytes]]


def empty_model(labels: list[str], keys: list, vocabulary: Vocabulary, constraints: bool,
                config: FeatureConfig | None = None, order: str = "random") -> ParserModel:
    """A parser model with no trees (every confidence 0) over a generator's feature ids."""
    ensembles = {label: LabelEnsemble(label, Forest.empty()) for label in labels}
    return ParserModel(1.0, ensembles, {key: i for i, key in enumerate(keys)}, vocabulary,
                       config or FeatureConfig(), 5, Path("-"), constraints, order=order)


def prepare_and_parser_rows(kept: list[Preprocessed], config: FeatureConfig, constraints: bool,
                            order: str = "random") -> tuple[ExampleGenerator, RowCounts, RowCounts]:
    """(the generator, rows ``prepare`` made, rows the parser's kernel offers on the same states)."""
    vocabulary = Vocabulary.build((w for p in kept for w in p.tree.words()), 5)
    labels = sorted({node.label for p in kept for node in p.tree.phrases()})
    generator = ExampleGenerator(labels, config, 5, 0, vocabulary.normalize, constraints=constraints,
                                 order=order)
    paths = []
    for position, result in enumerate(kept):
        tree = generator.prepare_tree(result.tree)
        if tree is not None:
            paths.append((tree, generator.add_sentence(tree, position)))
    generator.finish()
    indptr, indices = generator.sink.csr()  # type: ignore[attr-defined]
    expected: RowCounts = Counter()
    for label in labels:
        rows, _, multiplicity = generator.examples.deduplicated(label)
        for row, count in zip(rows, multiplicity):
            expected[label, indices[indptr[row]:indptr[row + 1]].tobytes()] += int(count)
    model = CompiledModel(empty_model(labels, generator.space.id_keys(), vocabulary, constraints, config,
                                      order), full_table=True)
    found: RowCounts = Counter()
    for tree, path in paths:
        frontier: list[Item] = leaf_items(tree.tagged_words(), vocabulary.normalize)
        items = ItemTable(frontier, model.symbols, 5)
        for start, end, label in path:
            for _, _, candidate_label, row in state_rows(model, items, items.frontier(frontier)):
                found[candidate_label, row.tobytes()] += 1
            first = next(i for i, x in enumerate(frontier) if x.start == start)
            last = next(i for i, x in enumerate(frontier) if x.end == end)
            frontier[first:last + 1] = [build(label, frontier[first:last + 1])]
    return generator, expected, found
