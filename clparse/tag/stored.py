"""The POS tagger of a run: trained from the training sentences, kept as data in the database."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clparse.read import read_trees
from clparse.read.ptb import parse_tree
from clparse.store.database import Database
from clparse.store.runs import Runs
from clparse.store.taggers import Taggers

if TYPE_CHECKING:
    from clparse.tag import Tagger

NONE_TAG = "-NONE-"


def tagged_words(gold_tree: str) -> list[tuple[str, str]]:
    """A stored gold tree's tokens as the parser receives them (empty elements are not tokens)."""
    return [(w, t) for w, t in parse_tree(gold_tree).tagged_words() if t != NONE_TAG]


def ensure_tagger(db: Database | str | Path, train_files: Sequence[str | Path] = (),
                  train_sentences: Sequence[Sequence[tuple[str, str]]] | None = None) -> tuple[bool, float | None]:
    """Train and store the run's tagger unless it is there: (trained now, dev accuracy).

    A tagger sees whole sentences of any length, so it learns from every tree of ``train_files``
    (the length filter is for the parser), or from ``train_sentences`` when the caller has read them
    already; without either, from the stored training sentences. Accuracy is measured on the stored
    dev sentences.
    """
    database = Database.of(db)
    taggers, runs = Taggers(database), Runs(database)
    runs.run()  # refuses a database without a prepared run
    stored, accuracy = taggers.accuracy()
    if stored:
        return False, accuracy
    if train_sentences is not None:
        train = [list(sentence) for sentence in train_sentences]
    elif train_files:
        train = [[(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
                 for path in train_files for tree in read_trees(path)]
    else:
        train = [tagged_words(tree) for tree in runs.gold_trees("train")]
    dev = [tagged_words(tree) for tree in runs.gold_trees("dev")]
    start = time.perf_counter()
    from clparse.tag import Tagger  # NLTK (and through it scipy) only when a tagger is trained or used

    tagger = Tagger.train(train)
    seconds = time.perf_counter() - start
    accuracy = tagger.accuracy(dev) if dev else None
    taggers.store(tagger.to_json(), len(train), accuracy, seconds)
    return True, accuracy


def load_tagger(db: Database | str | Path) -> Tagger | None:
    """The run's stored tagger, or None if it has none."""
    text = Taggers(Database.of(db, readonly=True)).model()
    if text is None:
        return None
    from clparse.tag import Tagger

    return Tagger.from_json(text)
