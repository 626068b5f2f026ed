"""Benchmark of `clparse train --dask` against `--jobs` (issue 16): wall time, overhead, bytes shipped.

Usage:
  python benchmarks/scale_out.py --db benchmarks/out/prepare-gum.sqlite [--labels NP,VP] [--max-iterations 20]
                                 [--modes jobs1,jobs2,local2,processes] [--out benchmarks/out/scale-out]
  python benchmarks/scale_out.py --sample        # the bundled sample, prepared here (a quick check)

Each mode trains the same labels from a fresh copy of the prepared database (`clparse backup`), as a
real `clparse train` subprocess:
* jobs1, jobs2: `--jobs 1`, `--jobs 2` (local processes);
* local2: `--dask local:2` (a LocalCluster of two single-threaded worker processes);
* processes: `dask scheduler` and two `dask worker --nthreads 1` processes on localhost, then
  `--dask tcp://...`, as on a real cluster.
Printed per mode: wall time, iterations, Σ of the stored per-iteration seconds (the compute), the
overhead per iteration = (wall × parallel slots − compute) / iterations (loading, shipping, committing,
idle slots at the end), the bytes shipped (from the coordinator's `dask:` line), and whether every
stored row equals the `--jobs 1` run's (timings aside). Never asserts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw

BIN = Path(sys.executable).parent
SLOTS = {"jobs1": 1, "jobs2": 2, "local2": 2, "processes": 2}
TIMING = {"seconds", "search_seconds", "finished_at"}
DASK_LINE = re.compile(r"dask: (\d+) label job\(s\) shipped \(([\d,.]+) MB\), (\d+) iterations received in "
                       r"(\d+) batches \(([\d,.]+) kB: ([\d,.]+) bytes of rows per iteration, ([\d,.]+) kB "
                       r"of margins\), (\d+) resubmitted")


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(row) for row in connection.execute(sql)]
    finally:
        connection.close()


def digest(db: Path) -> str:
    """SHA-256 of every stored training row but timings: equal digests = byte-identical training."""
    h = hashlib.sha256()
    columns = [r[1] for r in rows(db, "PRAGMA table_info(iterations)") if r[1] not in TIMING]
    for table, order, cols in (("iterations", "label_id, iteration", ", ".join(columns)),
                               ("tree_nodes", "label_id, iteration, node", "*"),
                               ("margin_checkpoints", "label_id, iteration", "*"),
                               ("label_training", "label_id",
                                "label_id, settings_json, state, iteration, theta, loss, splits, "
                                "margins_float64, margins_iteration")):
        for row in rows(db, f"SELECT {cols} FROM {table} ORDER BY {order}"):
            h.update(repr(row).encode())
    return h.hexdigest()[:16]


def start_dask(directory: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A scheduler and two single-threaded workers on localhost; their address and processes."""
    scheduler_file = directory / "scheduler.json"
    log = open(directory / "dask.log", "ab")
    processes = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--scheduler-file", str(scheduler_file),
                                   "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                  stdout=log, stderr=log)]
    while not scheduler_file.exists():
        time.sleep(0.1)
    for _ in range(2):
        processes.append(subprocess.Popen([str(BIN / "dask"), "worker", "--scheduler-file",
                                           str(scheduler_file), "--nthreads", "1", "--no-dashboard"],
                                          stdout=log, stderr=log))
    address = json.loads(scheduler_file.read_text())["address"]
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(2, timeout=120)
    return address, processes


def run_mode(mode: str, prepared: Path, directory: Path, train_args: list[str]) -> dict[str, Any]:
    db = directory / f"{mode}.sqlite"
    db.unlink(missing_ok=True)
    subprocess.run([str(BIN / "clparse"), "backup", "--db", str(prepared), str(db)], check=True)
    extra = {"jobs1": ["--jobs", "1"], "jobs2": ["--jobs", "2"],
             "local2": ["--dask", "local:2"]}.get(mode, [])
    processes: list[subprocess.Popen[bytes]] = []
    if mode == "processes":
        address, processes = start_dask(directory)
        extra = ["--dask", address]
    try:
        started = time.perf_counter()
        done = subprocess.run([str(BIN / "clparse"), "train", "--db", str(db), *train_args, *extra],
                              capture_output=True, text=True)
        wall = time.perf_counter() - started
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
    iterations, compute = rows(db, "SELECT count(*), coalesce(sum(seconds), 0) FROM iterations")[0]
    out: dict[str, Any] = {"mode": mode, "status": done.returncode, "wall": wall, "iterations": iterations,
                           "compute": compute, "digest": digest(db)}
    out["overhead"] = (wall * SLOTS[mode] - compute) / iterations if iterations else float("nan")
    match = DASK_LINE.search(done.stderr)
    if match:
        jobs, mb, _, batches, kb, per_iteration, margin_kb, resubmitted = match.groups()
        out.update(jobs=int(jobs), shipped_mb=float(mb.replace(",", "")), batches=int(batches),
                   received_kb=float(kb.replace(",", "")), row_bytes=float(per_iteration.replace(",", "")),
                   margin_kb=float(margin_kb.replace(",", "")), resubmitted=int(resubmitted))
    return out


def prepare_sample(directory: Path) -> Path:
    from clparse.data import sample_path
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database

    path = directory / "sample.sqlite"
    path.unlink(missing_ok=True)
    init_database(path)
    prepare(path, [sample_path("train")], settings=PrepareSettings(tagger="perceptron", tagger_iterations=1))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=Path("benchmarks/out/prepare-gum.sqlite"))
    parser.add_argument("--sample", action="store_true", help="prepare and use the bundled sample instead")
    parser.add_argument("--labels", default=None, help="labels to train (default: all)")
    parser.add_argument("--max-iterations", type=int, default=20)
    parser.add_argument("--modes", default="jobs1,jobs2,local2,processes")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the copies go (default: a temporary dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scale-out-") as temporary:
        directory = args.out or Path(temporary)
        directory.mkdir(parents=True, exist_ok=True)
        prepared = prepare_sample(directory) if args.sample else args.db
        if not prepared.exists():
            sys.exit(f"scale_out.py: {prepared} does not exist: prepare it first (python "
                     "benchmarks/prepare.py)")
        train_args = ["--max-iterations", str(args.max_iterations)]
        if args.labels:
            train_args += ["--labels", args.labels]
        results = [run_mode(mode, prepared, directory, train_args) for mode in args.modes.split(",")]
    reference = next((r["digest"] for r in results if r["mode"] == "jobs1"), None)
    print("| mode | wall s | iterations | compute s | overhead ms/iteration | label jobs shipped | MB "
          f"shipped | rows B/iteration | margins kB | resubmitted | = --jobs 1 |\n|{'---|' * 11}")
    for r in results:
        same = "" if reference is None else ("yes" if r["digest"] == reference else "**no**")
        print(f"| {r['mode']}{'' if r['status'] == 0 else ' (failed)'} | {r['wall']:.1f} | {r['iterations']} "
              f"| {r['compute']:.1f} | {1000 * r['overhead']:.1f} | {r.get('jobs', '')} | "
              f"{r.get('shipped_mb', '')} | {r.get('row_bytes', '')} | {r.get('margin_kb', '')} | "
              f"{r.get('resubmitted', '')} | {same} |")


if __name__ == "__main__":
    main()
