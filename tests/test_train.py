"""Training end to end: resumable after kills and signals, parallel = sequential, status while training.

Every test that trains works on its own copy of one prepared database (built once per module). The
CLI runs as real subprocesses (``.venv/bin/clparse``), each with a timeout, so nothing can hang.
"Bit-identical" means :func:`dump` compares equal with ``==``: every stored iteration (without its
timings), every tree node, each label's final state and margin vector, and the margin checkpoints.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest

from clparse.boost.booster import BoostSettings
from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.examples.prepare import PrepareSettings, prepare
from clparse.store import schema
from clparse.store.database import init_database

CLPARSE = Path(sys.executable).with_name("clparse")
LABELS = ("ADJP", "NP")
MAX_ITERATIONS = 40
TRAIN_ARGS = ("--labels", ",".join(LABELS), "--max-iterations", str(MAX_ITERATIONS))
TIMEOUT = 120.0  # seconds any single clparse run may take before the test fails instead of hanging

TIMING_COLUMNS = {"seconds", "search_seconds", "finished_at"}
ITERATION_COLUMNS = [c.name for c in schema.iterations.columns if c.name not in TIMING_COLUMNS | {"label_id"}]
NODE_COLUMNS = [c.name for c in schema.tree_nodes.columns if c.name != "label_id"]
STATE_COLUMNS = ["settings_json", "state", "iteration", "theta", "loss", "splits", "message",
                 "margins_float64"]


# ----------------------------------------------------------------------------- database helpers


def connect(db: Path) -> apsw.Connection:
    """A read-only APSW connection (never ``sqlite3``): it neither checkpoints nor removes the WAL."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    connection.set_busy_timeout(20_000)
    return connection


def query(db: Path, sql: str, bindings: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    connection = connect(db)
    try:
        return [tuple(row) for row in connection.execute(sql, bindings)]
    finally:
        connection.close()


def dump(db: Path) -> dict[str, dict[str, Any]]:
    """The training results of every label that has any, in a canonical, exactly comparable form."""
    connection = connect(db)
    try:
        out: dict[str, dict[str, Any]] = {}
        labels = list(connection.execute("SELECT id, name FROM labels ORDER BY name"))
        for label_id, name in labels:
            state = [tuple(row) for row in connection.execute(
                f"SELECT {', '.join(STATE_COLUMNS)} FROM label_training WHERE label_id = ?", (label_id,))]
            iterations = [tuple(row) for row in connection.execute(
                f"SELECT {', '.join(ITERATION_COLUMNS)} FROM iterations WHERE label_id = ? "
                "ORDER BY iteration",
                (label_id,))]
            nodes = [tuple(row) for row in connection.execute(
                f"SELECT {', '.join(NODE_COLUMNS)} FROM tree_nodes WHERE label_id = ? "
                "ORDER BY iteration, node",
                (label_id,))]
            checkpoints = [tuple(row) for row in connection.execute(
                "SELECT iteration, margins_float64 FROM margin_checkpoints WHERE label_id = ? "
                "ORDER BY iteration",
                (label_id,))]
            if state or iterations or nodes or checkpoints:
                out[name] = {"state": state, "iterations": iterations, "nodes": nodes,
                             "checkpoints": checkpoints}
        return out
    finally:
        connection.close()


def prefix(result: dict[str, Any], n: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The iteration rows and tree nodes of iterations 1..n of one label's dump."""
    return result["iterations"][:n], [node for node in result["nodes"] if node[0] <= n]


def check_consistent(db: Path) -> None:
    """The file is sound and every label's committed state agrees with its committed iterations."""
    connection = connect(db)
    try:
        assert [tuple(r) for r in connection.execute("PRAGMA integrity_check")] == [("ok",)]
        assert list(connection.execute("PRAGMA foreign_key_check")) == []
        rows = list(connection.execute(
            "SELECT t.label_id, t.iteration, t.splits, length(t.margins_float64), l.examples "
            "FROM label_training t JOIN labels l ON l.id = t.label_id"))
        for label_id, iteration, splits, margin_bytes, examples in rows:
            stored = [r[0] for r in connection.execute(
                "SELECT iteration FROM iterations WHERE label_id = ? ORDER BY iteration", (label_id,))]
            assert stored == list(range(1, iteration + 1)), (label_id, iteration, stored)
            with_nodes = [r[0] for r in connection.execute(
                "SELECT DISTINCT iteration FROM tree_nodes WHERE label_id = ? ORDER BY iteration",
                (label_id,))]
            assert with_nodes == stored
            total = connection.execute("SELECT coalesce(sum(splits), 0) FROM iterations WHERE label_id = ?",
                                       (label_id,)).fetchall()[0][0]
            assert splits == total
            assert margin_bytes == 8 * examples
    finally:
        connection.close()


@dataclass
class Progress:
    states: dict[str, str]  # label -> label_training.state
    iterations: dict[str, int]
    pids: dict[str, int | None]

    @property
    def total(self) -> int:
        return sum(self.iterations.values())


def progress(db: Path) -> Progress:
    rows = query(db, "SELECT l.name, t.state, t.iteration, t.pid FROM label_training t "
                     "JOIN labels l ON l.id = t.label_id ORDER BY l.name")
    return Progress({r[0]: r[1] for r in rows}, {r[0]: r[2] for r in rows}, {r[0]: r[3] for r in rows})


def finished(p: Progress, labels: tuple[str, ...] = LABELS, iterations: int = MAX_ITERATIONS) -> bool:
    return all(p.states.get(label) == "stopped" and p.iterations.get(label) == iterations for label in labels)


# ----------------------------------------------------------------------------- process helpers


class Runs:
    """Starts ``clparse`` subprocesses and makes sure none outlives its test."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[tuple[subprocess.Popen[bytes], Path, Path]] = []

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        n = len(self.started)
        out, err = self.directory / f"run{n}.out", self.directory / f"run{n}.err"
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            process = subprocess.Popen([str(CLPARSE), *args], stdout=stdout, stderr=stderr,
                                       stdin=subprocess.DEVNULL)
        self.started.append((process, out, err))
        return process

    def output(self, process: subprocess.Popen[bytes]) -> tuple[str, str]:
        for candidate, out, err in self.started:
            if candidate is process:
                return out.read_text(errors="replace"), err.read_text(errors="replace")
        raise KeyError(process)

    def finish(self, process: subprocess.Popen[bytes], timeout: float = TIMEOUT) -> tuple[int, str, str]:
        code = process.wait(timeout=timeout)
        out, err = self.output(process)
        return code, out, err

    def run(self, *args: str, timeout: float = TIMEOUT) -> tuple[int, str, str]:
        return self.finish(self.start(*args), timeout)

    def cleanup(self) -> None:
        for process, _, _ in self.started:
            if process.poll() is None:
                process.terminate()  # lets a parallel parent stop its workers too
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=30)


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    handle = Runs(tmp_path)
    try:
        yield handle
    finally:
        handle.cleanup()


def watch(process: subprocess.Popen[bytes], db: Path, until: Callable[[Progress, float], bool],
          timeout: float = TIMEOUT) -> Progress | None:
    """Poll the database until ``until(progress, seconds since now)`` holds; None if the process ended
    first."""
    start = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        if process.poll() is not None:
            return None
        current = progress(db)
        if until(current, elapsed):
            return current
        assert elapsed < timeout, "the training run made no expected progress in time"
        time.sleep(0.02)


# ----------------------------------------------------------------------------- fixtures


def copy_db(source: Path, target: Path) -> Path:
    shutil.copy(source, target)
    return target


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("train")
    path = directory / "prepared.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")], PrepareSettings(tagger_iterations=20))
    if Path(f"{path}-wal").exists():  # some connection is still open: take a consistent copy instead
        clean = directory / "base.sqlite"
        source, target = connect(path), apsw.Connection(str(clean))
        with target.backup("main", source, "main") as job:
            job.step()
        target.close()
        source.close()
        path = clean
    assert not Path(f"{path}-wal").exists()
    check_consistent(path)
    return path


@dataclass
class Reference:
    db: Path
    result: dict[str, dict[str, Any]]
    startup: float  # seconds from starting clparse to its first committed iteration


@pytest.fixture(scope="module")
def reference(base_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    """An uninterrupted ``clparse train --labels ADJP,NP --max-iterations 40``."""
    directory = tmp_path_factory.mktemp("reference")
    db = copy_db(base_db, directory / "reference.sqlite")
    handle = Runs(directory)
    try:
        started = time.monotonic()
        process = handle.start("train", "--db", str(db), *TRAIN_ARGS)
        seen = watch(process, db, lambda p, _: p.total > 0)
        startup = time.monotonic() - started if seen is not None else 1.0
        code, _, err = handle.finish(process)
    finally:
        handle.cleanup()
    assert code == 0, err
    check_consistent(db)
    result = dump(db)
    assert set(result) == set(LABELS)
    for label in LABELS:
        rows = result[label]
        assert [r[0] for r in rows["iterations"]] == list(range(1, MAX_ITERATIONS + 1))
        state = dict(zip(STATE_COLUMNS, rows["state"][0]))
        assert state["state"] == "stopped" and state["iteration"] == MAX_ITERATIONS
        assert state["message"] == f"reached {MAX_ITERATIONS} iterations"
        # Θ^t = min(Θ^(t-1), root gain), exactly as stored.
        theta_i, gain_i = ITERATION_COLUMNS.index("theta"), ITERATION_COLUMNS.index("root_gain")
        previous = math.inf
        for row in rows["iterations"]:
            assert row[theta_i] == min(previous, row[gain_i])
            previous = row[theta_i]
        assert state["theta"] == previous
    yield Reference(db, result, startup)


# ----------------------------------------------------------------------------- 1. kill and resume


@pytest.mark.slow
def test_kill_and_resume_is_bit_identical(base_db: Path, reference: Reference, runs: Runs,
                                          tmp_path: Path) -> None:
    """SIGKILL at random moments, SIGTERM and SIGINT in between: the end result equals the uninterrupted
    run."""
    from clparse.train import label_status

    db = copy_db(base_db, tmp_path / "killed.sqlite")
    args = ("train", "--db", str(db), *TRAIN_ARGS)
    rng = random.Random(20050607)
    plan = [signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGKILL]
    landed: list[str] = []
    kills = 0
    for sig in plan:
        before = progress(db).total
        cap = before + rng.randint(1, 6)  # never let one round get near the end, so every round interrupts
        process = runs.start(*args)
        if sig == signal.SIGKILL:
            # Seeded delays relative to the startup time seen in the reference run: alternately meant to land
            # before the first new commit (imports, loading, begin) and during training (capped by progress).
            during = kills % 2 == 1
            delay = reference.startup * (rng.uniform(1.1, 2.5) if during else rng.uniform(0.5, 1.0))
            kills += 1
            # A "during" kill also waits for a first new commit: under load, startup can outlast the delay.
            at = watch(process, db, lambda p, elapsed, delay=delay, cap=cap, during=during, before=before:
                       (p.total > before or not during) and (elapsed >= delay or p.total >= cap))
        else:
            at = watch(process, db, lambda p, _, cap=cap: p.total >= cap)
        time.sleep(rng.uniform(0.0, 0.03))  # anywhere within an iteration or its commit
        assert at is not None, f"the run ended before {sig.name}: {runs.output(process)[1][-2000:]}"
        process.send_signal(sig)
        code, _, err = runs.finish(process, timeout=60)
        check_consistent(db)
        after = progress(db)
        assert not finished(after)
        if sig == signal.SIGKILL:
            assert code == -signal.SIGKILL
            landed.append(f"during (+{after.total - before})" if after.total > before else "before")
            training = [label for label, state in after.states.items() if state == "training"]
            statuses = {row.label: row.state for row in label_status(db)}
            for label in training:  # its process is gone, and status says so
                assert statuses[label] == "interrupted"
        else:
            assert code == 128 + sig, err  # paused cleanly: 130 after SIGINT, 143 after SIGTERM
            assert "stopping after the current iteration" in err and "clparse train` again to resume" in err
            assert "paused; run the same command again to resume" in err
            assert after.total > before
            assert "training" not in after.states.values()
            paused = [label for label, state in after.states.items() if state == "paused"]
            assert len(paused) == 1 and after.iterations[paused[0]] < MAX_ITERATIONS
            stopped = [label for label, state in after.states.items() if state == "stopped"]
            assert all(after.iterations[label] == MAX_ITERATIONS for label in stopped)
            landed.append(sig.name)
    print(f"\nkills: {landed}; iterations before the final run: {progress(db).total}")
    assert sum(x.startswith("during") for x in landed) >= 2, landed  # killed after committing iterations
    code, _, err = runs.run(*args)
    assert code == 0, err
    check_consistent(db)
    assert dump(db) == reference.result


# ----------------------------------------------------------------------------- 2. parallel = sequential


@pytest.mark.slow
def test_parallel_equals_sequential(base_db: Path, runs: Runs, tmp_path: Path) -> None:
    labels = ("ADJP", "NP", "VP", "PP")
    results = []
    for jobs in (1, 2):
        db = copy_db(base_db, tmp_path / f"jobs{jobs}.sqlite")
        code, _, err = runs.run("train", "--db", str(db), "--labels", ",".join(labels),
                                  "--max-iterations", "15", "--jobs", str(jobs))
        assert code == 0, err
        check_consistent(db)
        result = dump(db)
        assert set(result) == set(labels)
        assert all(len(result[label]["iterations"]) == 15 for label in labels)
        results.append(result)
    assert results[0] == results[1]


def test_two_workers_commit_what_one_process_commits(copy_trained_db: Callable[[], Path]) -> None:
    """``jobs=2`` (worker processes) stores exactly what ``jobs=1`` stores, here a few more iterations of
    four labels of the session's trained sample (the slow test above trains 15 from scratch via the CLI)."""
    from clparse.train import StopRule, train

    labels, until = ("ADJP", "ADVP", "PP", "S"), 24
    results = []
    for jobs in (1, 2):
        db = copy_trained_db()
        before = dump(db)
        assert all(len(before[label]["iterations"]) < until for label in labels)
        summary = train(db, labels, rule=StopRule(max_iterations=until), jobs=jobs)
        assert not summary.failures and summary.states == dict.fromkeys(labels, "stopped"), summary
        check_consistent(db)
        result = dump(db)
        assert all(len(result[label]["iterations"]) == until for label in labels)
        assert {k: v for k, v in result.items() if k not in labels} == \
            {k: v for k, v in before.items() if k not in labels}  # the other labels untouched
        results.append(result)
    assert results[0] == results[1]


# ----------------------------------------------------------------------------- 3. status during training


@pytest.mark.slow
def test_status_while_training_and_after(base_db: Path, reference: Reference, runs: Runs,
                                         tmp_path: Path) -> None:
    """`clparse status` reads a database that a running `clparse train` is writing, and one it has left."""
    db = copy_db(base_db, tmp_path / "status.sqlite")
    # A run far too long to end by itself during the test; it is paused with SIGTERM afterwards.
    process = runs.start("train", "--db", str(db), "--labels", "NP", "--max-iterations", "100000")
    at = watch(process, db, lambda p, _: p.iterations.get("NP", 0) >= 1)
    assert at is not None, f"training ended early: {runs.output(process)[1][-2000:]}"
    code, out, err = runs.run("status", "--db", str(db), "--json", timeout=60)
    assert code == 0, err
    rows = {row["label"]: row for row in json.loads(out)}
    assert rows["NP"]["state"] == "training" and rows["NP"]["iteration"] >= 1, rows["NP"]
    assert rows["ADJP"]["state"] == "pending" and rows["ADJP"]["iteration"] == 0
    code, text, err = runs.run("status", "--db", str(db), timeout=60)
    assert code == 0, err
    np_lines = [line for line in text.splitlines() if line.split()[:1] == ["NP"]]
    assert len(np_lines) == 1 and "training" in np_lines[0], text
    assert process.poll() is None  # status ran while training did
    process.send_signal(signal.SIGTERM)
    code, _, err = runs.finish(process, timeout=60)
    assert code == 143, err  # paused cleanly by SIGTERM: 128 + 15
    check_consistent(db)
    code, out, err = runs.run("status", "--db", str(db), "--json", timeout=60)
    assert code == 0, err
    rows = {row["label"]: row for row in json.loads(out)}
    stored = progress(db)
    assert rows["NP"]["state"] == "paused" and rows["NP"]["iteration"] == stored.iterations["NP"] >= 1
    assert "resume" in rows["NP"]["message"]
    # A finished run: every trained label stopped at its last iteration.
    code, out, err = runs.run("status", "--db", str(reference.db), "--json", timeout=60)
    assert code == 0, err
    rows = {row["label"]: row for row in json.loads(out)}
    for label in LABELS:
        assert rows[label]["state"] == "stopped" and rows[label]["iteration"] == MAX_ITERATIONS, rows[label]
        assert rows[label]["theta"] == reference.result[label]["state"][0][STATE_COLUMNS.index("theta")]
    code, text, err = runs.run("status", "--db", str(reference.db), timeout=60)
    assert code == 0 and f"{len(rows)} labels, {len(LABELS) * MAX_ITERATIONS} trees" in text, err


# ----------------------------------------------------------------------------- 4. the library


@pytest.mark.slow
def test_library_resume_settings_labels_and_theta(base_db: Path, reference: Reference,
                                                  tmp_path: Path) -> None:
    from clparse.train import StopRule, train, train_label

    db = copy_db(base_db, tmp_path / "library.sqlite")
    summary = train(db, ["ADJP"], rule=StopRule(max_iterations=5))
    assert summary.states == {"ADJP": "stopped"}
    assert [r[0] for r in query(db, "SELECT iteration FROM iterations ORDER BY iteration")] == [1, 2, 3, 4, 5]
    summary = train(db, ["ADJP"], rule=StopRule(max_iterations=8))
    assert summary.states == {"ADJP": "stopped"}
    check_consistent(db)
    stored = query(db, "SELECT l.name, i.iteration FROM iterations i JOIN labels l ON l.id = i.label_id "
                       "ORDER BY i.iteration")
    assert stored == [("ADJP", t) for t in range(1, 9)]  # resumed at 6, no duplicates, nothing else
    result = dump(db)
    assert prefix(result["ADJP"], 8) == prefix(reference.result["ADJP"], 8)  # = the CLI's first 8 trees

    # Reached already: nothing is added.
    assert train(db, ["ADJP"], rule=StopRule(max_iterations=8)).states == {"ADJP": "stopped"}
    assert dump(db) == result

    # Other settings on a label already trained are refused, and nothing changes.
    with pytest.raises(ConfigurationError, match="settings cannot change"):
        train(db, ["ADJP"], BoostSettings(loss="exponential"), StopRule(max_iterations=10))
    with pytest.raises(ConfigurationError):
        train_label(db, "ADJP", BoostSettings(max_depth=1), StopRule(max_iterations=10))
    assert dump(db) == result

    # Unknown labels are named.
    with pytest.raises(ConfigurationError, match="NOPE"):
        train(db, ["ADJP", "NOPE"], rule=StopRule(max_iterations=10))
    with pytest.raises(ConfigurationError, match="NOPE"):
        train_label(db, "NOPE", BoostSettings(), StopRule(max_iterations=10))
    assert dump(db) == result

    # --until-theta: stop once Θ < X, so the last Θ is below X and the one before is not.
    theta_i = ITERATION_COLUMNS.index("theta")
    thetas = [row[theta_i] for row in reference.result["ADJP"]["iterations"]]
    k = next(t for t in range(12, len(thetas) + 1) if thetas[t - 1] < thetas[t - 2])  # 1-based iteration
    until = (thetas[k - 1] + thetas[k - 2]) / 2
    summary = train(db, ["ADJP"], rule=StopRule(until_theta=until))
    assert summary.states == {"ADJP": "stopped"}
    check_consistent(db)
    stored_thetas = [r[0] for r in query(db, "SELECT theta FROM iterations ORDER BY iteration")]
    assert len(stored_thetas) == k
    assert stored_thetas[-1] < until <= stored_thetas[-2]
    message = query(db, "SELECT message FROM label_training")[0][0]
    assert message == f"Θ = {stored_thetas[-1]:.6g} fell below the stop at Θ {until:g}"
    assert prefix(dump(db)["ADJP"], k) == prefix(reference.result["ADJP"], k)


# ----------------------------------------------------------------------------- 5. a crashed worker


@pytest.mark.slow
def test_crashed_worker_does_not_lose_other_labels(base_db: Path, reference: Reference, runs: Runs,
                                                   tmp_path: Path) -> None:
    """SIGKILL one label's worker process mid-training: the other label finishes, the killed one resumes."""
    from clparse.train import label_status

    db = copy_db(base_db, tmp_path / "parallel.sqlite")
    args = ("train", "--db", str(db), *TRAIN_ARGS, "--jobs", "2")
    process = runs.start(*args)

    def both_training(p: Progress, _: float) -> bool:
        return all(p.states.get(label) == "training" and p.iterations.get(label, 0) >= 1 for label in LABELS)

    at = watch(process, db, both_training)
    assert at is not None, "training ended before both labels were seen training"
    victim = max(LABELS, key=lambda label: at.iterations[label])  # the survivor has the more work left
    survivor = next(label for label in LABELS if label != victim)
    pid = at.pids[victim]
    assert pid is not None and pid != process.pid
    os.kill(pid, signal.SIGKILL)  # a worker (grandchild of this test) crashes hard
    code, _, err = runs.finish(process)
    assert code == 1 and f"label {victim} failed" in err, err
    # it says which signal and what usually sends it (the kernel's OOM killer: two big runs at once)
    assert (f"label {victim} failed: worker killed by SIGKILL (signal 9), most often the kernel's "
            "out-of-memory killer") in err, err
    check_consistent(db)
    after = progress(db)
    assert after.states[survivor] == "stopped" and after.iterations[survivor] == MAX_ITERATIONS
    assert after.iterations[survivor] > at.iterations[survivor]  # it went on after the crash
    # The parent records what the killed worker could not (issue 14, item 3).
    assert after.states[victim] == "failed" and after.iterations[victim] < MAX_ITERATIONS
    assert {row.label: row.state for row in label_status(db)}[victim] == "failed"
    result = dump(db)
    assert result[survivor] == reference.result[survivor]
    n = after.iterations[victim]
    assert prefix(result[victim], n) == prefix(reference.result[victim], n)
    code, _, err = runs.run(*args)
    assert code == 0, err
    check_consistent(db)
    assert dump(db) == reference.result
