"""Margins and weights at any iteration, rebuilt bit for bit from checkpoints and stored trees, and in SQL.

Everything here reads label NP of the session's trained database (NP runs well past the default
checkpoint interval of 50 at Θ 3, so it has a kept margin checkpoint to rebuild from).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import apsw
import numpy as np
import pytest

from clparse.boost.loss import example_weights
from clparse.errors import ClparseError, ConfigurationError
from clparse.forest import Forest
from clparse.query import run_query
from clparse.store.training import LabelProblem, TrainingStore
from clparse.train.weights import margins_after
from tests.conftest import read_rows

LABEL = "NP"


def stored_state(db: Path) -> tuple[int, bytes]:
    """(last iteration, margins blob) of NP's label_training row."""
    [(iteration, blob)] = read_rows(db, "SELECT t.iteration, t.margins_float64 FROM label_training AS t "
                                        "JOIN labels AS l ON l.id = t.label_id WHERE l.name = ?", LABEL)
    return int(iteration), bytes(blob)


def checkpoints(db: Path) -> dict[int, bytes]:
    rows = read_rows(db, "SELECT c.iteration, c.margins_float64 FROM margin_checkpoints AS c "
                         "JOIN labels AS l ON l.id = c.label_id WHERE l.name = ? ORDER BY c.iteration", LABEL)
    return {int(t): bytes(blob) for t, blob in rows}


@pytest.fixture(scope="module")
def store(trained_db: Path) -> Iterator[TrainingStore]:
    handle = TrainingStore(trained_db, readonly=True)
    yield handle
    handle.close()


@pytest.fixture(scope="module")
def problem(store: TrainingStore) -> LabelProblem:
    return store.load_problem(LABEL)


@pytest.fixture(scope="module")
def replayed(store: TrainingStore, problem: LabelProblem) -> dict[int, bytes]:
    """Margins after every iteration 0..last, replayed from zeros one tree at a time (not with
    margins_after)."""
    margins = np.zeros(len(problem.y), dtype=np.float64)
    out = {0: margins.tobytes()}
    for t, tree in enumerate(store.trees(LABEL), 1):
        Forest.from_trees([tree]).accumulate(problem.indptr, problem.indices, margins)
        out[t] = margins.tobytes()
    return out


def test_sample_has_a_checkpoint(trained_db: Path) -> None:
    last, _ = stored_state(trained_db)
    kept = checkpoints(trained_db)
    assert last > 50, f"NP stopped at iteration {last}; the checkpoint tests need more than 50"
    assert sorted(kept) == list(range(50, last + 1, 50))  # checkpoint_every defaults to 50


def test_margins_after_last_iteration_is_stored_state(trained_db: Path, store: TrainingStore,
                                                      problem: LabelProblem) -> None:
    last, blob = stored_state(trained_db)
    margins = margins_after(store, LABEL, last)
    assert margins.dtype == np.float64 and margins.shape == (len(problem.y),)
    assert margins.tobytes() == blob
    [(examples,)] = read_rows(trained_db, "SELECT examples FROM labels WHERE name = ?", LABEL)
    assert len(problem.y) == examples


def test_margins_after_checkpoint_equals_blob(trained_db: Path, store: TrainingStore) -> None:
    for iteration, blob in checkpoints(trained_db).items():
        assert margins_after(store, LABEL, iteration).tobytes() == blob


def test_replay_from_zeros_is_bit_identical(trained_db: Path, store: TrainingStore, problem: LabelProblem,
                                            replayed: dict[int, bytes]) -> None:
    last, blob = stored_state(trained_db)
    assert len(replayed) == last + 1
    assert replayed[last] == blob  # training's margins are exactly the sum of its stored trees
    for iteration, kept in checkpoints(trained_db).items():
        assert replayed[iteration] == kept
    for iteration in (0, 1, 9, 49, 51, 60, last - 1, last):  # before, at and after the checkpoint
        assert margins_after(store, LABEL, iteration, problem).tobytes() == replayed[iteration], iteration


def test_rebuild_without_checkpoints(db_copy: Path, trained_db: Path, replayed: dict[int, bytes]) -> None:
    kept = checkpoints(trained_db)
    writer = apsw.Connection(str(db_copy))
    writer.execute("DELETE FROM margin_checkpoints")
    writer.close()
    assert checkpoints(db_copy) == {}
    copy_store = TrainingStore(db_copy, readonly=True)
    try:
        copy_problem = copy_store.load_problem(LABEL)
        for iteration, blob in kept.items():  # rebuilt from zeros through every tree
            assert margins_after(copy_store, LABEL, iteration, copy_problem).tobytes() == blob
        for iteration in (9, 60):
            assert margins_after(copy_store, LABEL, iteration, copy_problem).tobytes() == replayed[iteration]
    finally:
        copy_store.close()


def test_margins_after_out_of_range(trained_db: Path, store: TrainingStore, problem: LabelProblem) -> None:
    last, _ = stored_state(trained_db)
    assert not margins_after(store, LABEL, 0, problem).any()
    with pytest.raises(ConfigurationError, match=f"no iteration {last + 1}"):
        margins_after(store, LABEL, last + 1, problem)


# ------------------------------------------------------------------------------ clparse_weights in SQL


def query_json(db: Path, query: str) -> list[dict]:
    return json.loads(run_query(db, query, fmt="json"))


def test_sql_weights_count_and_sum(trained_db: Path, store: TrainingStore, problem: LabelProblem) -> None:
    [row] = query_json(trained_db, f"SELECT count(*) AS n, sum(weight) AS total, "
                                   f"sum(CASE WHEN y = 1 THEN weight END) AS positive "
                                   f"FROM clparse_weights('{LABEL}', 10)")
    [(examples,)] = read_rows(trained_db, "SELECT examples FROM labels WHERE name = ?", LABEL)
    assert row["n"] == examples == len(problem.y)
    margins = margins_after(store, LABEL, 9, problem)
    m = problem.multiplicity.astype(np.float64)
    expected = m / (1.0 + np.exp(problem.y.astype(np.float64) * margins))
    assert row["total"] == pytest.approx(float(expected.sum()), rel=1e-11)
    # the stored iteration 10 summed the same weights while training
    [(w_positive, w_negative)] = read_rows(
        trained_db, "SELECT i.weight_positive, i.weight_negative FROM iterations AS i "
                    "JOIN labels AS l ON l.id = i.label_id WHERE l.name = ? AND i.iteration = 10", LABEL)
    assert row["positive"] == pytest.approx(w_positive, rel=1e-11)
    assert row["total"] == pytest.approx(w_positive + w_negative, rel=1e-11)


def test_sql_weight_rows(trained_db: Path, store: TrainingStore, problem: LabelProblem) -> None:
    n = len(problem.y)
    picked = sorted({0, 1, 2, 3, n // 3, n // 2, n - 2, n - 1})
    rows = query_json(trained_db, "SELECT example, y, multiplicity, margin, weight "
                                  f"FROM clparse_weights('{LABEL}', 10) "
                                  f"WHERE example IN ({', '.join(map(str, picked))}) ORDER BY example")
    assert [r["example"] for r in rows] == picked
    margins = margins_after(store, LABEL, 9, problem)
    library = example_weights("logistic", problem.y, problem.multiplicity.astype(np.float64), margins)
    for r in rows:
        i = r["example"]
        assert r["y"] == int(problem.y[i]) and r["y"] in (-1, 1)
        assert r["multiplicity"] == int(problem.multiplicity[i]) >= 1
        assert r["margin"] == float(margins[i])  # JSON floats round-trip exactly
        assert r["weight"] == float(library[i])
        formula = r["multiplicity"] / (1.0 + math.exp(r["y"] * r["margin"]))
        assert r["weight"] == pytest.approx(formula, rel=1e-12)
    assert any(r["margin"] != 0.0 for r in rows)


def test_sql_weights_first_iteration(trained_db: Path, problem: LabelProblem) -> None:
    [row] = query_json(trained_db, "SELECT count(*) AS n, sum(margin != 0) AS nonzero, "
                                   "sum(weight != multiplicity / 2.0) AS off, sum(weight) AS total "
                                   f"FROM clparse_weights('{LABEL}', 1)")
    assert row["n"] == len(problem.y)
    assert row["nonzero"] == 0 and row["off"] == 0
    assert row["total"] == pytest.approx(problem.multiplicity.sum() / 2.0, rel=1e-12)


def test_sql_weights_one_past_the_last_iteration_are_the_next_iterations(
        trained_db: Path, db_copy: Path, problem: LabelProblem) -> None:
    """t = last + 1 gives the weights the next iteration will grow its tree with: each row's margin is the
    stored margin after all ``last`` trees, and training one more iteration sums exactly these weights."""
    last, blob = stored_state(trained_db)
    rows = query_json(trained_db, "SELECT example, y, multiplicity, margin, weight "
                                  f"FROM clparse_weights('{LABEL}', {last + 1}) ORDER BY example")
    assert [r["example"] for r in rows] == list(range(len(problem.y)))
    margins = np.array([r["margin"] for r in rows], dtype=np.float64)
    assert margins.tobytes() == blob  # Q after the last tree, not after an earlier one (or zeros)
    expected = example_weights("logistic", problem.y, problem.multiplicity.astype(np.float64), margins)
    assert [r["weight"] for r in rows] == expected.tolist()
    before = query_json(trained_db, f"SELECT margin FROM clparse_weights('{LABEL}', {last})")
    assert [r["margin"] for r in before] != margins.tolist()  # t = last is one tree earlier
    # Train the one next iteration on a copy: the weights it stored are the sums of the rows above.
    from clparse.train import StopRule, train

    summary = train(db_copy, labels=[LABEL], rule=StopRule(max_iterations=last + 1))
    assert not summary.failures, summary.failures
    [(w_positive, w_negative)] = read_rows(
        db_copy, "SELECT i.weight_positive, i.weight_negative FROM iterations AS i JOIN labels AS l "
                 "ON l.id = i.label_id WHERE l.name = ? AND i.iteration = ?", LABEL, last + 1)
    positive = math.fsum(r["weight"] for r in rows if r["y"] == 1)
    negative = math.fsum(r["weight"] for r in rows if r["y"] == -1)
    assert positive == pytest.approx(w_positive, rel=1e-11)
    assert negative == pytest.approx(w_negative, rel=1e-11)


def test_sql_weights_iteration_out_of_range(trained_db: Path) -> None:
    last, _ = stored_state(trained_db)
    with pytest.raises(ClparseError, match=rf"iterations 1\.\.{last + 1} .*; no iteration {last + 2}$"):
        run_query(trained_db, f"SELECT count(*) FROM clparse_weights('{LABEL}', {last + 2})", fmt="json")
    with pytest.raises(ClparseError, match="iterations count from 1"):
        run_query(trained_db, f"SELECT count(*) FROM clparse_weights('{LABEL}', 0)", fmt="json")
