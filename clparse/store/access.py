"""Read a prepared database from Python: sentences, labels, and a label's examples as arrays.

Usage::

    data = TrainingData("db/clparse.sqlite")
    X, y, multiplicity = data.label_matrix("NP")   # scipy CSR (rows: distinct examples), int8, int32
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]  # no stubs installed
import sqlalchemy as sa

from clparse.errors import DatabaseError
from clparse.read.ptb import parse_tree
from clparse.read.tree import Tree
from clparse.store import schema
from clparse.store.database import DEFAULT_DB, open_engine


@dataclass
class StoredSentence:
    id: int
    split: str
    position: int
    words: list[str]
    gold_tree: Tree
    tree: Tree
    trained: bool
    path: list[tuple[int, int, str]]


class TrainingData:
    """The prepared run of a database (read-only)."""

    def __init__(self, path: str | Path = DEFAULT_DB) -> None:
        self.path = Path(path)
        self.engine = open_engine(self.path, readonly=True)
        with self.engine.connect() as connection:
            run = connection.execute(sa.select(schema.runs)).mappings().first()
        if run is None:
            raise DatabaseError(f"{self.path}: no prepared run; run `clparse prepare --db {self.path} ...` first")
        self.run_id: int = run["id"]
        self.config: dict[str, Any] = json.loads(run["config_json"])

    def labels(self) -> list[str]:
        with self.engine.connect() as connection:
            return list(connection.execute(sa.select(schema.labels.c.name).where(
                schema.labels.c.run_id == self.run_id).order_by(schema.labels.c.name)).scalars())

    def sentences(self, split: str = "train") -> Iterator[StoredSentence]:
        s, p = schema.sentences, schema.inference_paths
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(s).where(s.c.run_id == self.run_id, s.c.split == split)
                                      .order_by(s.c.position)).mappings().all()
            for row in rows:
                path = connection.execute(sa.select(p.c.start, p.c.end, p.c.label).where(
                    p.c.sentence_id == row["id"]).order_by(p.c.step)).all()
                yield StoredSentence(row["id"], row["split"], row["position"], row["words"].split(" "),
                                     parse_tree(row["gold_tree"]), parse_tree(row["tree"]), bool(row["trained"]),
                                     [tuple(x) for x in path])  # type: ignore[misc]

    def feature_count(self) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(schema.features).where(
                schema.features.c.run_id == self.run_id)).scalar_one())

    def feature_rows(self) -> sp.csr_matrix:
        """All distinct feature sets (shared by every label) as a binary CSR matrix."""
        fr = schema.feature_rows
        indptrs, indices = [np.zeros(1, dtype=np.int64)], []
        offset = 0
        with self.engine.connect() as connection:
            for row in connection.execute(sa.select(fr).where(fr.c.run_id == self.run_id).order_by(fr.c.chunk)):
                part = np.frombuffer(row.indptr_int64, dtype="<i8")
                indptrs.append(part[1:] + offset)
                offset += int(part[-1])
                indices.append(np.frombuffer(row.indices_int32, dtype="<i4"))
        indptr = np.concatenate(indptrs)
        data = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
        return sp.csr_matrix((np.ones(len(data), dtype=np.int8), data, indptr),
                             shape=(len(indptr) - 1, self.feature_count()))

    def label_examples(self, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row ids into :meth:`feature_rows`, y in {-1, +1}, multiplicity) of a label's distinct examples."""
        lb, le = schema.labels, schema.label_examples
        with self.engine.connect() as connection:
            label_id = connection.execute(sa.select(lb.c.id).where(lb.c.run_id == self.run_id,
                                                                    lb.c.name == label)).scalar()
            if label_id is None:
                raise DatabaseError(f"{self.path}: no label {label!r}; labels are {', '.join(self.labels())}")
            chunks = connection.execute(sa.select(le).where(le.c.label_id == label_id).order_by(le.c.chunk)).all()
        rows = np.concatenate([np.frombuffer(c.row_int32, dtype="<i4") for c in chunks])
        ys = np.concatenate([np.frombuffer(c.y_int8, dtype="i1") for c in chunks])
        counts = np.concatenate([np.frombuffer(c.multiplicity_int32, dtype="<i4") for c in chunks])
        return rows, ys, counts

    def label_matrix(self, label: str, rows: sp.csr_matrix | None = None) -> tuple[sp.csr_matrix, np.ndarray,
                                                                                   np.ndarray]:
        """A label's examples as (X, y, multiplicity); pass ``rows`` to reuse :meth:`feature_rows` across labels."""
        ids, ys, counts = self.label_examples(label)
        matrix = (rows if rows is not None else self.feature_rows())[ids]
        return matrix, ys, counts


def known_tags(db: str | Path = DEFAULT_DB) -> set[str]:
    """Every POS tag the run's features know (a tag outside this set is an unseen value to the parser),
    plus the punctuation tags preprocessing sets aside and puts back (they never reach the features)."""
    from clparse.preprocess import PUNCTUATION_TAGS
    from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG

    f = schema.features
    engine = open_engine(db, readonly=True)
    try:
        with engine.connect() as connection:
            seen = set(connection.execute(sa.select(f.c.value).distinct().where(f.c.property == "headtag")).scalars())
    finally:
        engine.dispose()
    return seen | PUNCTUATION_TAGS | {EMPTY_ELEMENT_TAG}
