"""The prepared run: its settings, files, sentences, vocabulary, features, labels and examples.

``RunWriter`` is how ``prepare`` writes a run (inside one transaction, so a failure leaves the
database as it was); ``Runs`` reads it back as plain rows and arrays.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa

from clparse.errors import DatabaseError
from clparse.store import blobs, reading, schema
from clparse.store.database import DAMAGED, Database
from clparse.store.stamps import now

CHUNK_ROWS = 65_536  # rows per feature-matrix blob: ~30 MB, well under SQLite's 1 GB blob limit
FeatureKey = tuple[str, str, str, str]  # (template, item, property, value)


class RunWriter:
    """Writes one run inside the caller's transaction (see :meth:`Runs.writing`)."""

    def __init__(self, connection: sa.Connection) -> None:
        self.connection = connection
        self.run_id = 0

    def start(self, digest: str, version: str, config: Mapping[str, Any]) -> int:
        self.run_id = int(self.connection.execute(schema.runs.insert().values(
            created_at=now(), clparse_version=version, input_digest=digest,
            config_json=json.dumps(config, sort_keys=True), status="prepared", seconds=0.0,
        )).inserted_primary_key[0])  # type: ignore[index]
        return self.run_id

    def add_files(self, files: Iterable[tuple[str, str, str, int]]) -> None:
        """(split, path, sha256, trees) per treebank file."""
        self.connection.execute(schema.treebank_files.insert(), [
            {"run_id": self.run_id, "split": split, "path": path, "sha256": sha, "trees": trees}
            for split, path, sha, trees in files])

    def add_sentence(self, row: Mapping[str, Any]) -> int:
        """A sentence row (the ``sentences`` columns but ``id`` and ``run_id``); returns its id."""
        return int(self.connection.execute(schema.sentences.insert().values(run_id=self.run_id, **row)
                                           ).inserted_primary_key[0])  # type: ignore[index]

    def add_feature_rows(self, chunk: int, first_row: int, indptr: np.ndarray, indices: np.ndarray) -> None:
        row = {"run_id": self.run_id, "chunk": chunk, "first_row": first_row, "row_count": len(indptr) - 1,
               "indptr_int64": blobs.encode("indptr_int64", indptr),
               "indices_int32": blobs.encode("indices_int32", indices)}
        self.connection.execute(schema.feature_rows.insert().values(
            **row, sha256=blobs.row_checksum("feature_rows", row)))

    def add_paths(self, paths: Iterable[tuple[int, Sequence[tuple[int, int, str]]]]) -> None:
        """(sentence id, [(start, end, label), ...]) per trained sentence: its inference path (with
        ``prepare --paths N``, its N paths one after another)."""
        self.connection.execute(schema.inference_paths.insert(), [
            {"sentence_id": sentence_id, "step": step, "start": s, "end": e, "label": label}
            for sentence_id, path in paths for step, (s, e, label) in enumerate(path)])

    def add_vocabulary(self, rows: Iterable[tuple[str, int]]) -> None:
        self.connection.execute(schema.vocabulary.insert(), [
            {"run_id": self.run_id, "word": w, "count": c} for w, c in rows])

    def add_features(self, keys: Sequence[FeatureKey], texts: Sequence[str], row_counts: np.ndarray) -> None:
        """Feature id i is ``keys[i]``; ``row_counts[i]`` distinct rows hold it."""
        self.connection.execute(schema.features.insert(), [
            {"run_id": self.run_id, "id": i, "template": k[0], "item": k[1], "property": k[2], "value": k[3],
             "text": text, "row_count": int(row_counts[i])} for i, (k, text) in enumerate(zip(keys, texts))])

    def add_label(self, name: str, candidates: int, positives: int, rows: np.ndarray, ys: np.ndarray,
                  counts: np.ndarray) -> None:
        """A label and its distinct examples (row into feature_rows, y, multiplicity), in blob chunks."""
        label_id = self.connection.execute(schema.labels.insert().values(
            run_id=self.run_id, name=name, candidates=candidates, positives=positives,
            examples=len(rows))).inserted_primary_key[0]  # type: ignore[index]
        for chunk, first in enumerate(range(0, max(len(rows), 1), CHUNK_ROWS)):
            part = slice(first, first + CHUNK_ROWS)
            row = {"label_id": label_id, "chunk": chunk, "first_example": first,
                   "example_count": len(rows[part]), "row_int32": blobs.encode("row_int32", rows[part]),
                   "y_int8": blobs.encode("y_int8", ys[part]),
                   "multiplicity_int32": blobs.encode("multiplicity_int32", counts[part])}
            self.connection.execute(schema.label_examples.insert().values(
                **row, sha256=blobs.row_checksum("label_examples", row)))

    def finish(self, seconds: float) -> None:
        self.connection.execute(schema.runs.update().where(schema.runs.c.id == self.run_id)
                                .values(seconds=seconds))


class Runs:
    """The run of one database, read as plain rows and arrays."""

    def __init__(self, db: Database | str | Path, *, readonly: bool = True) -> None:
        self.db = Database.of(db, readonly=readonly)

    @property
    def path(self) -> Path:
        return self.db.path

    # ------------------------------------------------------------------ writing

    def treebank_files(self) -> list[tuple[str, str, str]]:
        """(split, path, sha256) of every treebank file the run was prepared from, in the order given."""
        table = schema.treebank_files
        with self.db.reading() as connection:
            rows = connection.execute(sa.select(table.c.split, table.c.path, table.c.sha256)
                                      .order_by(table.c.id)).all()
        return [(str(split), str(path), str(sha)) for split, path, sha in rows]

    def existing(self) -> tuple[int, str] | None:
        """(run id, input digest) of the run already prepared here, if any."""
        with self.db.reading() as connection:
            row = connection.execute(sa.select(schema.runs.c.id, schema.runs.c.input_digest)).first()
        return None if row is None else (int(row[0]), str(row[1]))

    @contextmanager
    def writing(self) -> Iterator[RunWriter]:
        """A writer for a new run; all of it is committed at the end of the block, or none of it."""
        with self.db.transaction() as connection:
            yield RunWriter(connection)

    # ------------------------------------------------------------------ reading

    def run(self) -> tuple[int, dict[str, Any]]:
        """(run id, config) of the prepared run; refused if there is none."""
        with self.db.raw() as connection:
            return reading.run(connection, self.path)

    def config(self) -> dict[str, Any]:
        return self.run()[1]

    def labels(self) -> list[str]:
        with self.db.raw() as connection:
            return reading.labels(connection)

    def sentences(self, split: str) -> list[dict[str, Any]]:
        """The split's sentence rows in order, each with its inference ``path`` [(start, end, label), ...]."""
        s, p = schema.sentences, schema.inference_paths
        with self.db.reading() as connection:
            rows = [dict(r) for r in connection.execute(sa.select(s).where(s.c.split == split)
                                                        .order_by(s.c.position)).mappings()]
            paths: dict[int, list[tuple[int, int, str]]] = {}
            for sentence_id, start, end, label in connection.execute(
                    sa.select(p.c.sentence_id, p.c.start, p.c.end, p.c.label)
                    .where(p.c.sentence_id.in_(sa.select(s.c.id).where(s.c.split == split)))
                    .order_by(p.c.sentence_id, p.c.step)):
                paths.setdefault(sentence_id, []).append((start, end, label))
        for row in rows:
            row["path"] = paths.get(row["id"], [])
        return rows

    def gold_trees(self, split: str) -> list[str]:
        """The split's gold trees (bracketed text) in order."""
        s = schema.sentences
        with self.db.reading() as connection:
            return list(connection.execute(sa.select(s.c.gold_tree).where(s.c.split == split)
                                           .order_by(s.c.position)).scalars())

    def vocabulary(self) -> list[tuple[str, int]]:
        with self.db.raw() as connection:
            return reading.vocabulary(connection)

    def feature_ids(self) -> dict[FeatureKey, int]:
        with self.db.raw() as connection:
            return reading.feature_ids(connection)

    def feature_count(self) -> int:
        with self.db.reading() as connection:
            return int(connection.execute(sa.select(sa.func.count())
                                          .select_from(schema.features)).scalar_one())

    def feature_values(self, prop: str) -> set[str]:
        """Every value features test of property ``prop`` (e.g. the POS tags of ``headtag``)."""
        with self.db.raw() as connection:
            return reading.feature_values(connection, prop)

    def mean_candidates(self) -> float:
        """Candidate examples per label, averaged over labels."""
        with self.db.reading() as connection:
            return float(connection.execute(sa.select(sa.func.avg(schema.labels.c.candidates))).scalar()
                         or 0.0)

    def feature_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, indices) of every distinct feature row, as one CSR structure (checked as
        :meth:`feature_row_chunks` checks it)."""
        indptrs, indices = [np.zeros(1, dtype=np.int64)], []
        offset = 0
        for _, _, part, ids in self.feature_row_chunks():
            indptrs.append(part[1:] + offset)
            offset += int(part[-1])
            indices.append(ids)
        joined = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
        return np.concatenate(indptrs), joined

    def feature_row_chunks(self, n_features: int | None = None
                           ) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
        """(first row, row count, indptr, indices) per stored chunk, in order (streamed).

        Each chunk is checked before it is handed out, so compiled code never indexes with damaged
        arrays: its checksum, that it starts where the previous one ended, that ``indptr`` has
        row_count + 1 offsets rising from 0 to the length of ``indices``, and that every feature id
        is in 0..n_features-1 (when ``n_features`` is given). Damage raises a :class:`DatabaseError`
        naming the chunk."""
        fr = schema.feature_rows
        expected = 0
        with self.db.reading() as connection:
            chunks = connection.execute(sa.select(fr.c.run_id, fr.c.chunk).order_by(fr.c.chunk)).all()
            for run_id, chunk in chunks:  # one chunk in memory at a time (~30 MB each)
                row = connection.execute(sa.select(fr).where(fr.c.run_id == run_id, fr.c.chunk == chunk)
                                         ).mappings().one()
                where = f"{self.path}: feature_rows chunk {chunk}"
                blobs.verified("feature_rows", row, where)
                indptr = blobs.decode("indptr_int64", row["indptr_int64"], where=where)
                indices = blobs.decode("indices_int32", row["indices_int32"], where=where)
                first, count = int(row["first_row"]), int(row["row_count"])
                _check_csr(where, first, expected, count, indptr, indices, n_features)
                expected = first + count
                yield first, count, indptr, indices

    def label_examples(self, label: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(label id, row ids into the feature rows, y in {-1, +1}, multiplicity) of a label's distinct
        examples; each chunk checked (checksum, lengths, values) before it is decoded."""
        lb, le = schema.labels, schema.label_examples
        with self.db.reading() as connection:
            label_id = connection.execute(sa.select(lb.c.id).where(lb.c.name == label)).scalar()
            if label_id is None:
                raise DatabaseError(f"{self.path}: no label {label!r}; labels are {', '.join(self.labels())}")
            chunks = connection.execute(sa.select(le).where(le.c.label_id == label_id)
                                        .order_by(le.c.chunk)).mappings().all()
        parts: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        expected = 0
        for chunk in chunks:
            where = f"{self.path}: label_examples chunk {chunk['chunk']} of {label}"
            blobs.verified("label_examples", chunk, where)
            rows, y, multiplicity = (blobs.decode(c, chunk[c], where=where)
                                     for c in ("row_int32", "y_int8", "multiplicity_int32"))
            count = int(chunk["example_count"])
            if int(chunk["first_example"]) != expected \
                    or not len(rows) == len(y) == len(multiplicity) == count:
                raise DatabaseError(f"{where} does not hold {count} examples from {expected}; {DAMAGED}")
            if count and (rows.min() < 0 or np.any(np.diff(rows) < 0) or not np.all((y == 1) | (y == -1))
                          or multiplicity.min() < 1):
                raise DatabaseError(f"{where} holds row ids out of order, a y not ±1 or a multiplicity "
                                    f"below 1; {DAMAGED}")
            expected += count
            for part, array in zip(parts, (rows, y, multiplicity)):
                part.append(array)
        rows, y, multiplicity = (np.concatenate(part) if part else np.zeros(0, dtype=blobs.dtype_of(c))
                                 for part, c in zip(parts, ("row_int32", "y_int8", "multiplicity_int32")))
        return int(label_id), rows, y, multiplicity


def _check_csr(where: str, first: int, expected: int, count: int, indptr: np.ndarray, indices: np.ndarray,
               n_features: int | None) -> None:
    """Refuse a feature_rows chunk whose arrays would send compiled code outside them."""
    if first != expected or count < 0 or len(indptr) != count + 1:
        problem = f"does not hold rows {expected}.. with row_count + 1 offsets"
    elif indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
        problem = "has offsets (indptr_int64) that do not rise from 0 to the number of feature ids"
    elif n_features is not None and len(indices) and (indices.min() < 0 or indices.max() >= n_features):
        problem = f"holds feature ids outside 0..{n_features - 1}"
    else:
        return
    raise DatabaseError(f"{where} {problem}; {DAMAGED}")
