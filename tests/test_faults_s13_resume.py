"""Faults of resuming `clparse train` (session 13, helper A): each test failed before its fix.

A run's labels may have been started with different settings (``--labels NP --sample 50``, ``--labels VP``
with other options); a plain `train` took every left-out setting from one label (the first by name) for all
of them, so it refused the others or could not resume the run at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import backup_database, invoke_cli, read_rows
from tests.test_train import dump

# VP: every example, exponential loss; NP: sampled, depth 2, logistic loss. Each checkpoints at its own step.
VP = ["--labels", "VP", "--loss", "exponential", "--checkpoint-every", "4"]
NP = ["--labels", "NP", "--sample", "50", "--max-depth", "2", "--loss", "logistic", "--checkpoint-every", "3"]
ITERATIONS = 6


def train(db: Path, *args: object) -> None:
    done = invoke_cli(["train", "--db", db, *args])
    assert done.exit_code == 0, done.stderr


def settings_of(db: Path) -> dict[str, dict[str, Any]]:
    rows = read_rows(db, "SELECT name, settings_json FROM label_training JOIN labels ON labels.id = label_id")
    return {name: json.loads(text) for name, text in rows}


@pytest.fixture
def mixed(prepared: Path, tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Copies of one prepared run whose VP was started with VP's settings and NP then with NP's (``start``),
    or whose labels were trained straight through, each with its own settings (``straight``)."""
    base = backup_database(prepared, tmp_path / "base.sqlite")

    def make(kind: str) -> Path:
        db = backup_database(base, tmp_path / f"{kind}.sqlite")
        if kind == "start":
            train(db, *VP, "--max-iterations", 2)
            train(db, *NP, "--max-iterations", 3)
        else:
            train(db, *VP, "--max-iterations", ITERATIONS)
            train(db, *NP, "--max-iterations", ITERATIONS)
        return db

    yield make


@pytest.mark.parametrize("jobs", ["1", pytest.param("2", marks=pytest.mark.slow)])
def test_a_plain_train_resumes_each_label_with_its_own_settings(mixed: Callable[[str], Path],
                                                                jobs: str) -> None:
    """It refused VP ("was started with no --sample (not --sample 50)"): NP's settings were taken for both."""
    straight, resumed = mixed("straight"), mixed("start")
    train(resumed, "--labels", "NP,VP", "--max-iterations", ITERATIONS, "--jobs", jobs)
    assert settings_of(resumed) == settings_of(straight)
    assert settings_of(resumed)["NP"]["sample"] == 50 and settings_of(resumed)["VP"]["sample"] is None
    got, want = dump(resumed), dump(straight)
    assert set(got) == {"NP", "VP"} and len(got["NP"]["iterations"]) == ITERATIONS
    assert got == want  # the same trees, iterations, checkpoints, margins as training each straight through


@pytest.mark.slow
def test_dask_resumes_each_label_with_its_own_settings(mixed: Callable[[str], Path]) -> None:
    pytest.importorskip("distributed")
    straight, resumed = mixed("straight"), mixed("start")
    train(resumed, "--labels", "NP,VP", "--max-iterations", ITERATIONS, "--dask", "local:2",
          "--dask-batch", 2)
    assert dump(resumed) == dump(straight)


def test_options_given_are_checked_against_each_started_label(mixed: Callable[[str], Path]) -> None:
    from clparse import api

    db = mixed("start")
    before = dump(db)
    refused = invoke_cli(["train", "--db", db, "--labels", "NP,VP", "--max-iterations", 5, "--sample", 50])
    assert refused.exit_code == 1
    assert "label VP was started with no --sample (not --sample 50);" in refused.stderr
    seeded = invoke_cli(["train", "--db", db, "--labels", "NP,VP", "--max-iterations", 5, "--sample-seed", 0])
    assert seeded.exit_code == 1
    assert "label VP was started with no --sample, so --sample-seed seeds nothing" in seeded.stderr
    assert dump(db) == before  # refused before any label started
    train(db, "--labels", "NP", "--max-iterations", 4, "--sample-seed", 0, "--max-depth", 2)
    # A label not started takes what every started label shares (the sample, loss and checkpoints differ).
    fresh = api.boost_settings(db, api.TrainOptions())
    assert (fresh.sample, fresh.loss, fresh.checkpoint_every, fresh.max_depth) == (None, "logistic", 50, None)
    train(db, "--labels", "PP", "--max-iterations", 1)
    assert settings_of(db)["PP"] == {**settings_of(db)["VP"], "loss": "logistic", "checkpoint_every": 50}
