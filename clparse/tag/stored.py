"""The POS tagger of a run: trained from the training sentences, kept as data in the database.

``kind`` ``crf`` (the default since it measured best: 96.18 % on GUM dev against 95.02 %, and
96.57 % with feature set 3, docs/tagger.md) keeps CRFsuite's model bytes, with a feature set 2 or 3
model's lexicon, in a blob; ``perceptron`` keeps NLTK's weights as JSON text. Neither is a
pickle: loading a stored tagger runs no code from the database.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from clparse.errors import ConfigurationError
from clparse.read import read_trees
from clparse.read.ptb import parse_tree
from clparse.store.database import Database
from clparse.store.runs import Runs
from clparse.store.taggers import Taggers
from clparse.tag.jackknife import NONE_TAG, TaggerSpec

__all__ = ["NONE_TAG", "PosTagger", "ensure_tagger", "load_tagger", "tagged_words"]


class PosTagger(Protocol):
    """What the parser and calibration use of a tagger (both kinds have it)."""

    def tag(self, words: Sequence[str]) -> list[str]: ...

    def accuracy(self, sentences: Sequence[Sequence[tuple[str, str]]]) -> float: ...


def tagged_words(gold_tree: str) -> list[tuple[str, str]]:
    """A stored gold tree's tokens as the parser receives them (empty elements are not tokens)."""
    return [(w, t) for w, t in parse_tree(gold_tree).tagged_words() if t != NONE_TAG]


def ensure_tagger(db: Database | str | Path, train_files: Sequence[str | Path] = (),
                  train_sentences: Sequence[Sequence[tuple[str, str]]] | None = None,
                  spec: TaggerSpec = TaggerSpec(),
                  on_iteration: Callable[[int], object] | None = None) -> tuple[bool, float | None]:
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
    train = [sentence for sentence in train if sentence]
    dev = [s for s in (tagged_words(tree) for tree in runs.gold_trees("dev")) if s]
    start = time.perf_counter()
    tagger = spec.train(train, on_iteration)
    seconds = time.perf_counter() - start
    accuracy = tagger.accuracy(dev) if dev else None  # type: ignore[attr-defined]
    model = tagger.to_bytes() if spec.kind == "crf" else tagger.to_json()  # type: ignore[attr-defined]
    taggers.store(spec.kind, model, len(train), accuracy, seconds)
    return True, accuracy


def load_tagger(db: Database | str | Path) -> PosTagger | None:
    """The run's stored tagger, or None if it has none."""
    found = Taggers(Database.of(db, readonly=True)).model()
    if found is None:
        return None
    kind, model = found
    if kind == "crf" and isinstance(model, bytes):
        from clparse.tag.crf import CrfTagger

        return CrfTagger.from_bytes(model)
    if kind == "perceptron" and isinstance(model, str):
        from clparse.tag.perceptron import Tagger

        return Tagger.from_json(model)
    raise ConfigurationError(f"{Database.of(db, readonly=True).path}: stored tagger of unknown kind "
                             f"{kind!r}; a newer clparse made it")
