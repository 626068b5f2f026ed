"""Faults of resuming `clparse train` (session 13, helper A): each test failed before its fix (the two
tests of a tree committed during the claim check fail without the check's one snapshot, commit b8976a7).

A run's labels may have been started with different settings (``--labels NP --sample 50``, ``--labels VP``
with other options); a plain `train` took every left-out setting from one label (the first by name) for all
of them, so it refused the others or could not resume the run at all. And a second trainer's claim check while
another trainer commits: no damage is seen where there is none, and real damage is said as such.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


@contextmanager
def committing_between_reads(commit: Callable[[], object], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within, the first claim's checksum pass calls ``commit`` after reading the label's tree nodes and
    before reading its iteration rows (where another trainer's commit made a healthy file read as damaged)."""
    import sqlalchemy as sa

    from clparse.store import training

    watching = {"armed": False, "done": False}
    real = training.verify_label

    def checking(*args: Any) -> None:
        watching["armed"] = not watching["done"]
        try:
            real(*args)
        finally:
            watching["armed"] = False

    def before_iterations(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if watching["armed"] and "iterations.sha256" in statement and "tree_nodes" not in statement:
            watching.update(armed=False, done=True)
            commit()

    monkeypatch.setattr(training, "verify_label", checking)
    sa.event.listen(sa.engine.Engine, "before_cursor_execute", before_iterations)
    try:
        yield
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", before_iterations)
    assert watching["done"]


def test_a_second_trainer_checking_a_label_while_a_tree_is_committed_finds_no_damage(
        prepared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The claim's checksum pass read a label's tree nodes, then its iteration rows: a tree committed in
    between failed its checksum, and a healthy file was called "damaged; restore it from a backup". Here a
    real trainer commits a tree exactly there (it then stops, and the second trainer goes on)."""
    from clparse import api
    from clparse.boost.booster import BoostSettings
    from clparse.train import StopRule, train_label

    train(prepared, "--labels", "NP", "--max-iterations", 2)
    straight = backup_database(prepared, prepared.with_name("straight.sqlite"))
    train(straight, "--labels", "NP", "--max-iterations", 4)

    def other_trainer() -> None:
        assert train_label(prepared, "NP", BoostSettings(), StopRule(max_iterations=3)) == "stopped"

    with committing_between_reads(other_trainer, monkeypatch):
        summary = api.train(prepared, ["NP"], max_iterations=4)
    assert summary.states == {"NP": "stopped"} and not summary.failures
    assert dump(prepared) == dump(straight)


def test_damage_found_by_a_second_trainer_is_said_even_while_another_trainer_holds_the_label(
        prepared: Path) -> None:
    """The workaround for the check above (before it read one snapshot) took any checksum failure met while
    another live trainer held the label for that trainer's commit in progress: real damage was reported as
    "label NP is being trained by process N" (left alone), not as damage."""
    import subprocess
    import time
    from datetime import datetime, timezone

    from clparse import api
    from clparse.errors import DatabaseError
    from tests.conftest import write_sql

    train(prepared, "--labels", "NP", "--max-iterations", 1)
    write_sql(prepared, "UPDATE label_examples SET sha256 = 'x' WHERE label_id = "
                        "(SELECT id FROM labels WHERE name = 'NP')")
    holder = subprocess.Popen(["sleep", "60"])
    try:
        time.sleep(1.1)  # the holder started before its stamp (whole seconds)
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        write_sql(prepared, f"UPDATE label_training SET state = 'training', pid = {holder.pid}, "
                            f"updated_at = '{stamp}' WHERE label_id = "
                            "(SELECT id FROM labels WHERE name = 'NP')")
        with pytest.raises(DatabaseError, match="label_examples chunk 0 of NP fails its checksum; .*damaged"):
            api.train(prepared, ["NP"], max_iterations=5)
    finally:
        holder.kill()
        holder.wait()
    assert read_rows(prepared, "SELECT count(*) FROM iterations") == [(1,)]


@pytest.mark.slow
def test_a_second_trainer_during_a_live_trainers_commit_leaves_the_label_and_finds_no_damage(
        prepared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As above with the holder a live `clparse train` in another process: the second trainer's check waits,
    between its two reads, for the holder to commit a tree; the label is then left to its holder (refused),
    and the file is not called damaged."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from clparse import api
    from clparse.store.verify import verify_checksums

    root = Path(__file__).resolve().parents[1]
    count = "SELECT count(*) FROM iterations JOIN labels ON labels.id = label_id WHERE name = 'NP'"
    holder = subprocess.Popen([sys.executable, str(root / "cli.py"), "train", "--db", str(prepared),
                               "--labels", "NP", "--max-iterations", "100000"],
                              env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)

    def holder_commits() -> None:
        seen, deadline = read_rows(prepared, count)[0][0], time.monotonic() + 60
        while read_rows(prepared, count)[0][0] == seen:
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.001)

    try:
        deadline = time.monotonic() + 120
        while read_rows(prepared, count)[0][0] == 0 or api.status(prepared, ["NP"])[0].state != "training":
            assert holder.poll() is None and time.monotonic() < deadline, holder.stderr
            time.sleep(0.05)
        with committing_between_reads(holder_commits, monkeypatch):
            summary = api.train(prepared, ["NP"], max_iterations=100000)
        assert summary.states == {"NP": "refused"} and f"process {holder.pid}" in summary.refused["NP"]
    finally:
        holder.send_signal(signal.SIGTERM)  # it pauses after committing its iteration in flight
        holder.wait(timeout=60)
    assert verify_checksums(prepared) == []
