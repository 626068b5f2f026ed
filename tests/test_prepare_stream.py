"""Batched (streaming) example reduction gives the run a one-shot reduction gives, byte for byte."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from clparse.data import sample_path
from clparse.examples.generate import ExampleSet
from clparse.examples.prepare import PrepareSettings, prepare
from clparse.store.database import init_database

SKIPPED = {"runs", "taggers", "alembic_version"}  # timings, timestamps and the tagger (not examples)


def dump(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table a prepare fills, but the run's timings and the tagger."""
    with sqlite3.connect(db) as connection:
        tables = [name
                  for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if name not in SKIPPED]
        return {table: connection.execute(f'SELECT * FROM "{table}" ORDER BY 1, 2').fetchall()
                for table in tables}


def test_streaming_prepare_stores_what_one_shot_prepare_stores(tmp_path: Path) -> None:
    settings = PrepareSettings(tagger="perceptron", tagger_iterations=1)
    train, dev = [sample_path("train")], [sample_path("dev")]
    for name in ("one", "many"):
        init_database(tmp_path / f"{name}.sqlite")
    one_shot = prepare(tmp_path / "one.sqlite", train, dev, settings, batch=1 << 40)
    streamed = prepare(tmp_path / "many.sqlite", train, dev, settings, batch=997)
    assert one_shot.rows == streamed.rows and one_shot.labels == streamed.labels
    first, second = dump(tmp_path / "one.sqlite"), dump(tmp_path / "many.sqlite")
    assert first.keys() == second.keys()
    for table in ("sentences", "inference_paths", "labels", "label_examples", "feature_rows", "features",
                  "vocabulary"):
        assert first[table], table  # the comparison below is not of empty tables
    for table in first:
        assert first[table] == second[table], table


def test_example_set_batches_sum_to_one_reduction() -> None:
    rng = np.random.default_rng(7)
    states = [(rng.integers(0, 3, 50).astype(np.int16), rng.integers(0, 40, 50).astype(np.int32),
               rng.choice(np.array([-1, 1], dtype=np.int8), 50)) for _ in range(30)]
    results = []
    for batch in (1, 13, 10 ** 9):
        examples = ExampleSet(["A", "B", "C"], batch)
        for state in states:
            examples.add_state(*state)
        results.append(([examples.deduplicated(label) for label in "ABC"], examples.counts()))
    label = np.concatenate([s[0] for s in states])
    row = np.concatenate([s[1] for s in states])
    y = np.concatenate([s[2] for s in states])
    for i, name in enumerate("ABC"):  # brute force: count each (row, y) of the label
        mine = label == i
        pairs = sorted({(int(r), int(v)) for r, v in zip(row[mine], y[mine])})
        counts = [int(np.sum((row[mine] == r) & (y[mine] == v))) for r, v in pairs]
        for found, _ in results:
            rows, ys, multiplicity = found[i]
            assert [(int(r), int(v)) for r, v in zip(rows, ys)] == pairs
            assert multiplicity.tolist() == counts
            assert multiplicity.sum() == mine.sum()
    for _, (candidates, positives) in results:
        assert candidates.tolist() == np.bincount(label, minlength=3).tolist()
        assert positives.tolist() == np.bincount(label[y > 0], minlength=3).tolist()


def test_batch_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch"):
        ExampleSet(["A"], 0)
