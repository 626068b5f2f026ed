"""The POS tagger of a run: trained from the stored training sentences, kept as JSON in ``taggers``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from clparse.errors import DatabaseError
from clparse.read import read_trees
from clparse.read.ptb import parse_tree
from clparse.store import schema
from clparse.store.database import open_engine
from clparse.store.stamps import now

if TYPE_CHECKING:
    from clparse.tag import Tagger

NONE_TAG = "-NONE-"


def _tagged(gold_tree: str) -> list[tuple[str, str]]:
    """A stored gold tree's tokens as the parser receives them (empty elements are not tokens)."""
    return [(w, t) for w, t in parse_tree(gold_tree).tagged_words() if t != NONE_TAG]


def ensure_tagger(db: str | Path, train_files: Sequence[str | Path] = (),
                  train_sentences: Sequence[Sequence[tuple[str, str]]] | None = None) -> tuple[bool, float | None]:
    """Train and store the run's tagger unless it is there: (trained now, dev accuracy).

    A tagger sees whole sentences of any length, so it learns from every tree of ``train_files``
    (the length filter is for the parser), or from ``train_sentences`` when the caller has read them
    already; without either, from the stored training sentences. Accuracy is measured on the stored
    dev sentences.
    """
    engine = open_engine(db)
    s, tg = schema.sentences, schema.taggers
    with engine.connect() as connection:
        run_id = connection.execute(sa.select(schema.runs.c.id)).scalar()
        if run_id is None:
            raise DatabaseError(f"{db}: no prepared run")
        existing = connection.execute(sa.select(tg.c.dev_accuracy).where(tg.c.run_id == run_id)).first()
        if existing is not None:
            return False, existing[0]
        rows = connection.execute(sa.select(s.c.split, s.c.gold_tree).where(s.c.run_id == run_id)
                                  .order_by(s.c.split, s.c.position)).all()
    if train_sentences is not None:
        train = [list(sentence) for sentence in train_sentences]
    elif train_files:
        train = [[(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
                 for path in train_files for tree in read_trees(path)]
    else:
        train = [_tagged(tree) for split, tree in rows if split == "train"]
    dev = [_tagged(tree) for split, tree in rows if split == "dev"]
    start = time.perf_counter()
    from clparse.tag import Tagger  # NLTK (and through it scipy) only when a tagger is trained or used

    tagger = Tagger.train(train)
    seconds = time.perf_counter() - start
    accuracy = tagger.accuracy(dev) if dev else None
    with engine.begin() as connection:
        connection.execute(tg.insert().values(run_id=run_id, model_json=tagger.to_json(), train_sentences=len(train),
                                              dev_accuracy=accuracy, seconds=seconds, created_at=now()))
    engine.dispose()
    return True, accuracy


def load_tagger(db: str | Path) -> Tagger | None:
    engine = open_engine(db, readonly=True)
    with engine.connect() as connection:
        text = connection.execute(sa.select(schema.taggers.c.model_json)).scalar()
    engine.dispose()
    if text is None:
        return None
    from clparse.tag import Tagger

    return Tagger.from_json(text)
