"""``clparse quickstart``: the pipeline so far, end to end, on the bundled sample.

It grows with the project: today it reads and preprocesses the sample,
prepares the training database ``db/quickstart.sqlite`` (every training
example with its features), and scores a trivial right-branching baseline on
the dev sample with the EVALB-exact scorer (unlabeled brackets: the baseline
has no labels to offer), so every step's output is visible.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clparse.data import sample_path
from clparse.evaluate import EvalbParams, evaluate
from clparse.evaluate.report import format_summary
from clparse.preprocess import PreprocessConfig, PreprocessReport, Vocabulary, preprocess_treebank
from clparse.read import read_trees
from clparse.read.stats import treebank_stats
from clparse.read.tree import Tree


def right_branching(words_and_tags: list[tuple[str, str]], label: str = "X") -> Tree:
    """The classic baseline: every suffix of the sentence is a phrase."""
    leaves = [Tree.preterminal(tag, word) for word, tag in words_and_tags]
    tree = leaves[-1]
    for leaf in reversed(leaves[:-1]):
        tree = Tree(label, [leaf, tree])
    return Tree("ROOT", [tree])


def run_quickstart(echo: Callable[[str], object] = print, db: Path = Path("db/quickstart.sqlite")) -> None:
    config = PreprocessConfig(max_words=15)
    train_report = PreprocessReport()
    train = list(preprocess_treebank(read_trees(sample_path("train")), config, train_report))
    echo(f"== bundled GUM sample: {sample_path('train')}")
    echo(train_report.format())
    echo("")
    echo(treebank_stats(p.tree for p in train).format())
    vocabulary = Vocabulary.build((w for p in train for w in p.tree.words()), min_count=5)
    echo(f"\n== vocabulary: {len(vocabulary)} words seen at least 5 times (the rest become UNK)")

    from clparse.store.database import init_database
    from clparse.store.prepare import prepare
    from clparse.store.sql import run_query

    init_database(db, echo=echo)
    summary = prepare(db, [sample_path("train")], [sample_path("dev")])
    echo(f"\n== training database: {summary.message}")
    echo(f"   positive rate per label (clparse sql --db {db} \"SELECT ...\"):")
    echo(run_query(db, "SELECT name, candidates, positives, "
                       "round(100.0 * positives / candidates, 2) AS positive_pct, examples AS distinct_examples "
                       "FROM labels ORDER BY positives DESC LIMIT 8"))

    dev_gold = [t for t in read_trees(sample_path("dev"))]
    baseline = [right_branching(t.tagged_words()) for t in dev_gold]
    echo("\n== right-branching baseline on the dev sample, unlabeled brackets, scored like EVALB:")
    echo(format_summary(evaluate(dev_gold, baseline, EvalbParams(labeled=False))))
