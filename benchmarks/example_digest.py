"""Digest of everything ``prepare`` stores as training data, to compare two databases byte for byte.

Usage: python benchmarks/example_digest.py DB [DB ...]
Prints, per database, one SHA-256 per table (features, feature rows, label examples, labels,
sentences, inference paths, vocabulary), each over the table's rows in key order. Two preparations
of the same inputs and settings must print the same digests (run ids and timings are left out).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import apsw

QUERIES = {
    "features": "SELECT id, template, item, property, value, text, row_count FROM features ORDER BY id",
    "feature_rows": "SELECT chunk, first_row, row_count, indptr_int64, indices_int32 FROM feature_rows ORDER "
                    "BY chunk",
    "label_examples": "SELECT l.name, e.chunk, e.first_example, e.example_count, e.row_int32, e.y_int8, "
                      "e.multiplicity_int32 FROM label_examples AS e JOIN labels AS l ON l.id = e.label_id "
                      "ORDER BY l.name, e.chunk",
    "labels": "SELECT name, candidates, positives, examples FROM labels ORDER BY name",
    "sentences": "SELECT split, position, length, words, gold_tree, tree, removed_json, trained, skip_reason "
                 "FROM sentences ORDER BY id",
    "inference_paths": "SELECT s.split, s.position, p.step, p.start, p.\"end\", p.label FROM inference_paths "
                       "AS p JOIN sentences AS s ON s.id = p.sentence_id ORDER BY s.id, p.step",
    "vocabulary": "SELECT word, count FROM vocabulary ORDER BY word",
}


def read_rows(db: str | Path, query: str) -> list[tuple]:
    """Rows of a read-only query (the benchmarks' one way to read a database directly)."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(row) for row in connection.execute(query)]
    finally:
        connection.close()


def digests(path: str) -> dict[str, str]:
    connection = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    out = {}
    for name, query in QUERIES.items():
        digest = hashlib.sha256()
        for row in connection.execute(query):
            for value in row:
                digest.update(repr(type(value)).encode())
                digest.update(value if isinstance(value, bytes) else repr(value).encode())
        out[name] = digest.hexdigest()
    connection.close()
    return out


def main() -> None:
    results = {path: digests(path) for path in sys.argv[1:]}
    for path, found in results.items():
        print(path)
        for name, value in found.items():
            print(f"  {name:<16} {value}")
    if len(results) > 1:
        first = next(iter(results.values()))
        same = all(found == first for found in results.values())
        print("identical" if same else "DIFFERENT: " + ", ".join(
            name for name in first if any(found[name] != first[name] for found in results.values())))


if __name__ == "__main__":
    main()
