"""Read a prepared database from Python: sentences, labels, and a label's examples as arrays.

Usage::

    data = TrainingData("db/clparse.sqlite")
    X, y, multiplicity = data.label_matrix("NP")   # scipy CSR (rows: distinct examples), int8, int32
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]  # no stubs installed

from clparse.read.ptb import parse_tree
from clparse.read.tree import Tree
from clparse.store.database import DEFAULT_DB, Database
from clparse.store.runs import Runs


@dataclass
class StoredSentence:
    id: int
    split: str
    position: int
    words: list[str]
    gold_tree: Tree
    tree: Tree
    trained: bool
    path: list[tuple[int, int, str]]  # the first of ``paths``
    paths: list[list[tuple[int, int, str]]]  # every path examples were generated along (prepare --paths)


class TrainingData:
    """The prepared run of a database (read-only)."""

    def __init__(self, path: str | Path = DEFAULT_DB) -> None:
        self.path = Path(path)
        self.runs = Runs(Database(self.path, readonly=True))
        self.run_id, self.config = self.runs.run()

    def labels(self) -> list[str]:
        return self.runs.labels()

    def sentences(self, split: str = "train") -> Iterator[StoredSentence]:
        count = int(self.config.get("settings", {}).get("paths", 1))  # a run before --paths: one
        for row in self.runs.sentences(split):
            steps = list(row["path"])  # the paths one after another, each building every phrase once
            size = len(steps) // count
            paths = [steps[i * size:(i + 1) * size] for i in range(count)] if steps else []
            yield StoredSentence(row["id"], row["split"], row["position"], row["words"].split(" "),
                                 parse_tree(row["gold_tree"]), parse_tree(row["tree"]), bool(row["trained"]),
                                 paths[0] if paths else [], paths)

    def feature_count(self) -> int:
        return self.runs.feature_count()

    def feature_rows(self) -> sp.csr_matrix:
        """All distinct feature sets (shared by every label) as a binary CSR matrix."""
        indptr, indices = self.runs.feature_rows()
        return sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr),
                             shape=(len(indptr) - 1, self.feature_count()))

    def label_examples(self, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row ids into :meth:`feature_rows`, y in {-1, +1}, multiplicity) of a label's distinct examples."""
        _, rows, ys, counts = self.runs.label_examples(label)
        return rows, ys, counts

    def label_matrix(self, label: str,
                     rows: sp.csr_matrix | None = None) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """A label's examples as (X, y, multiplicity); pass ``rows`` to reuse :meth:`feature_rows` across
        labels."""
        ids, ys, counts = self.label_examples(label)
        matrix = (rows if rows is not None else self.feature_rows())[ids]
        return matrix, ys, counts


__all__ = ["StoredSentence", "TrainingData"]
