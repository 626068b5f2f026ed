"""``clparse train --dask`` (issue 16): the same bytes as ``--jobs 1``, through worker and coordinator kills.

Every run here trains the same three labels for 25 iterations with a margin checkpoint every 7, from
one prepared copy of the bundled sample, and is compared with :func:`tests.test_train.dump` (every
stored iteration without its timings, every tree node, each label's final state and margins, the
checkpoints) against one ``--jobs 1`` run. Workers carry an audit hook (:class:`Watch`) that records
any import of the storage layer or SQLite drivers and any file opened under the database's name: a
worker never opens the database, and never even learns its path.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

# E402: these imports follow the importorskip above on purpose (the module is skipped without distributed).
# F401/F811: ``runs`` is a pytest fixture of tests.test_train, imported so that this module's tests get it.
from clparse.boost.booster import BoostSettings  # noqa: E402
from clparse.train import StopRule, train  # noqa: E402
from tests.dask_hooks import Watch, assert_no_storage_on  # noqa: E402
from tests.test_train import (  # noqa: E402, F401
    CLPARSE, Runs, check_consistent, copy_db, dump, progress, runs, watch)

LABELS = ("ADJP", "NP", "VP")
ITERATIONS = 25
SETTINGS = BoostSettings(checkpoint_every=7)
RULE = StopRule(max_iterations=ITERATIONS)
CLI_ARGS = ("--labels", ",".join(LABELS), "--max-iterations", str(ITERATIONS), "--checkpoint-every", "7")
DASK = Path(sys.executable).with_name("dask")


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clparse.data import sample_path
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database
    from tests.conftest import backup_database

    directory = tmp_path_factory.mktemp("dask")
    path = directory / "prepared.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], settings=PrepareSettings(tagger="perceptron", tagger_iterations=1))
    return backup_database(path, directory / "base.sqlite")  # a single file, no WAL beside it


@pytest.fixture(scope="module")
def reference(base_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same labels trained in this process, one after another (``--jobs 1``)."""
    db = copy_db(base_db, tmp_path_factory.mktemp("dask-reference") / "reference.sqlite")
    summary = train(db, LABELS, SETTINGS, RULE)
    assert summary.states == dict.fromkeys(LABELS, "stopped")
    result = dump(db)
    assert set(result) == set(LABELS) and all(len(result[label]["checkpoints"]) == 3 for label in LABELS)
    return result


# ----------------------------------------------------------------------------- tests


def test_local_cluster_equals_jobs_1(base_db: Path, reference: dict[str, Any], tmp_path: Path) -> None:
    """``--dask local:2`` (the coordinator starts the LocalCluster), small batches: the same bytes."""
    db = copy_db(base_db, tmp_path / "local.sqlite")
    summary = train(db, LABELS, SETTINGS, RULE, dask="local:2", batch_iterations=3)
    assert summary.states == dict.fromkeys(LABELS, "stopped") and not summary.failures
    check_consistent(db)
    assert dump(db) == reference
    stats = summary.cluster
    assert stats.iterations == len(LABELS) * ITERATIONS and stats.batches >= len(LABELS) * ITERATIONS // 3
    assert stats.labels_shipped == len(LABELS) and stats.resubmitted == 0
    assert stats.bytes_to_workers > 8 * 17_000 * len(LABELS)  # at least the margins; the matrices dominate
    assert stats.bytes_from_workers > 0


@pytest.mark.slow
def test_worker_killed_mid_label_is_resubmitted(base_db: Path, reference: dict[str, Any],
                                                tmp_path: Path) -> None:
    """SIGKILL a worker as it starts NP's batch after iteration 8: NP restarts from the database on a
    worker, the result is the same bytes, and no worker ever touched the database."""
    db = copy_db(base_db, tmp_path / "killed-worker.sqlite")
    marker = tmp_path / "killed"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        client.register_plugin(Watch(db.name, str(marker), "NP", after=8), name="watch")
        summary = train(db, LABELS, SETTINGS, RULE, dask=cluster.scheduler_address, batch_iterations=4)
        assert marker.exists(), "the worker was never killed"
        client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed one (with the hook again)
        assert_no_storage_on(client)
    assert summary.states == dict.fromkeys(LABELS, "stopped") and not summary.failures, summary.failures
    assert summary.cluster.resubmitted >= 1 and summary.cluster.labels_shipped >= len(LABELS) + 1
    check_consistent(db)
    assert dump(db) == reference


@pytest.mark.slow
def test_separate_processes_and_a_killed_coordinator(base_db: Path, reference: dict[str, Any],
                                                     runs: Runs, tmp_path: Path) -> None:  # noqa: F811 (fixture)
    """``dask scheduler`` and two ``dask worker`` processes, as on a cluster; ``clparse train --dask`` is
    SIGKILLed mid-run, and run again: every label resumes, and ends in the same bytes."""
    db = copy_db(base_db, tmp_path / "separate.sqlite")
    scheduler_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "wb")
    processes = [subprocess.Popen([str(DASK), "scheduler", "--scheduler-file", str(scheduler_file), "--host",
                                   "127.0.0.1", "--port", "0", "--no-dashboard"], stdout=log, stderr=log)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            assert time.monotonic() < deadline and processes[0].poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # for tests.dask_hooks
        for _ in range(2):
            processes.append(subprocess.Popen([str(DASK), "worker", "--scheduler-file", str(scheduler_file),
                                               "--nthreads", "1", "--no-dashboard", "--no-nanny"],
                                              stdout=log, stderr=log, env=env))
        address = json.loads(scheduler_file.read_text())["address"]
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
            client.register_plugin(Watch(db.name), name="watch")
            args = ("train", "--db", str(db), *CLI_ARGS, "--dask", address, "--dask-batch", "1")
            process = runs.start(*args)
            seen: dict[str, str] = {}

            def working(p: Any, _: float) -> bool:
                if p.total >= 8 and "training" in p.states.values():
                    from clparse.train import label_status

                    seen.update({r.label: r.worker or "" for r in label_status(db) if r.state == "training"})
                    return True
                return False

            at = watch(process, db, working)
            assert at is not None, f"the run ended before the kill: {runs.output(process)[1][-2000:]}"
            process.send_signal(signal.SIGKILL)
            assert runs.finish(process, timeout=60)[0] == -signal.SIGKILL
            killed = progress(db)
            assert killed.total < len(LABELS) * ITERATIONS, "the kill came too late to test a resume"
            assert seen and all(worker.startswith("tcp://127.0.0.1:") for worker in seen.values()), seen
            check_consistent(db)
            code, _, err = runs.run(*args)
            assert code == 0, err
            assert "dask:" in err and "0 resubmitted" in err
            assert_no_storage_on(client)
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()
    check_consistent(db)
    assert dump(db) == reference


def test_without_dask_one_line_says_how_to_install_it(base_db: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    (fake / "distributed").mkdir(parents=True)
    (fake / "distributed" / "__init__.py").write_text("raise ImportError('No module named distributed')\n")
    env = {**os.environ, "PYTHONPATH": str(fake)}
    db = copy_db(base_db, tmp_path / "nodask.sqlite")
    result = subprocess.run([str(CLPARSE), "train", "--db", str(db), "--dask", "local:2"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["Error: --dask needs Dask's distributed scheduler: pip install "
                                          "'clparse[dask]' (or pip install 'dask[distributed]')"], \
        result.stderr
    result = subprocess.run([str(CLPARSE), "train", "--db", str(db), "--dask", "nowhere"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Error: Invalid value for '--dask'" in result.stderr


def test_dask_is_imported_only_for_dask() -> None:
    code = ("import sys, cli, clparse.parser, clparse.train.parallel, clparse.train.label, "
            "clparse.train.status; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                            text=True).stdout.strip()
    assert loaded == "[]"
