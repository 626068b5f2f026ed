"""Benchmark of boosting on the NP examples of GUM train (<= 15 words): speed and memory per iteration \
(docs/boosting.md).

Usage: python benchmarks/train.py [--db benchmarks/out/prepare-gum.sqlite] [--label NP] [--iterations 20]
                                  [--lightgbm-seconds 300]
Needs the database `python benchmarks/prepare.py` makes. Prints (never asserts):
* the memory floor (one streaming pass over the label's non-zeros) beside one full split-search pass
  (W+ and W- of every feature over all examples) and scipy's two X.T @ w products;
* seconds per iteration and per split, database growth per iteration, peak memory;
* LightGBM (pip install lightgbm) growing trees with the same number of leaves on the same sparse
  matrix with binary logistic loss, in a child process under a time limit.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from clparse.boost import BoostSettings
from clparse.boost.kernels import slot_histograms, stream_indices
from clparse.store.training import TrainingStore
from clparse.train import StopRule, train


def best_of(runs: int, func: Any) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def lightgbm_child(path: str, label: str, leaves: int, trees: int, out: Any) -> None:
    import lightgbm

    problem = TrainingStore(path, readonly=True).load_problem(label)
    matrix = sp.csr_matrix((np.ones(problem.nonzeros, dtype=np.float32), problem.indices, problem.indptr),
                           shape=(len(problem.y), problem.n_features))
    start = time.perf_counter()
    dataset = lightgbm.Dataset(matrix, label=(problem.y > 0).astype(np.float32),
                               weight=problem.multiplicity.astype(np.float32),
                               params={"max_bin": 2, "verbose": -1, "min_data_in_bin": 1})
    dataset.construct()
    out.put(("dataset", time.perf_counter() - start))
    params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 1.0, "min_data_in_leaf": 1,
              "min_sum_hessian_in_leaf": 1e-12, "lambda_l2": 0.0, "num_threads": 1, "verbose": -1,
              "force_col_wise": True}
    booster = lightgbm.Booster(params, dataset)
    for t in range(trees):
        start = time.perf_counter()
        booster.update()
        out.put(("tree", time.perf_counter() - start))


def run_lightgbm(path: Path, label: str, leaves: int, trees: int,
                 limit: float) -> tuple[float | None, list[float]]:
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        print("LightGBM: not installed (pip install lightgbm); skipped")
        return None, []
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=lightgbm_child, args=(str(path), label, leaves, trees, queue))
    child.start()
    child.join(limit)
    if child.is_alive():
        child.kill()
        child.join()
    dataset, tree_times = None, []
    while not queue.empty():
        kind, seconds = queue.get()
        if kind == "dataset":
            dataset = seconds
        else:
            tree_times.append(seconds)
    return dataset, tree_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, default=Path("benchmarks/out/prepare-gum.sqlite"))
    parser.add_argument("--label", default="NP")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--lightgbm-seconds", type=float, default=300.0)
    args = parser.parse_args()
    work = args.db.with_name("train-gum.sqlite")
    for leftover in work.parent.glob(work.name + "*"):
        leftover.unlink()
    shutil.copy(args.db, work)

    start = time.perf_counter()
    problem = TrainingStore(work).load_problem(args.label)
    load_seconds = time.perf_counter() - start
    n, nnz = len(problem.y), problem.nonzeros
    print(f"label {args.label}: {n:,} distinct examples, {problem.n_features:,} features, {nnz:,} non-zeros "
          f"(loaded in {load_seconds:.1f} s)")
    weights = problem.multiplicity * 0.5
    positive = problem.y > 0
    slots = np.zeros(n, dtype=np.int32)
    stream_indices(problem.indices[:10])
    slot_histograms(problem.indptr, problem.indices, slots[:1], weights[:1], positive[:1], 1,
                    problem.n_features)
    # The lambdas run here, before the `del problem` and `del matrix` below; pyflakes takes those
    # dels to leave the names undefined inside the lambdas (F821), hence the noqa comments.
    floor = best_of(3, lambda: stream_indices(problem.indices))  # noqa: F821
    search = best_of(3, lambda: slot_histograms(problem.indptr, problem.indices, slots, weights,  # noqa: F821
                                                positive, 1, problem.n_features))  # noqa: F821
    matrix = sp.csr_matrix((np.ones(nnz), problem.indices, problem.indptr), shape=(n, problem.n_features))
    w_pos, w_neg = np.where(positive, weights, 0.0), np.where(positive, 0.0, weights)
    scipy_seconds = best_of(2, lambda: (matrix.T @ w_pos, matrix.T @ w_neg))  # noqa: F821
    del matrix
    print("\n== one split-search pass over all examples (W+ and W- of every feature)")
    print(f"memory floor (stream {nnz * 4 / 1e9:.2f} GB of indices once)   {floor:8.3f} s")
    print(f"clparse pass (numba, one pass, both signs)        {search:8.3f} s   {search / floor:5.1f} x "
          f"floor (goal <= 5 x)")
    print(f"scipy X.T @ w+ and X.T @ w-                       {scipy_seconds:8.3f} s   "
          f"{scipy_seconds / floor:5.1f} x floor")
    del problem

    size_before = db_bytes(work)
    start = time.perf_counter()
    train(work, [args.label], BoostSettings(), StopRule(max_iterations=args.iterations))
    wall = time.perf_counter() - start
    store = TrainingStore(work, readonly=True)
    with store.engine.connect() as connection:
        import sqlalchemy as sa

        rows = connection.execute(sa.text(
            "SELECT i.iteration, i.seconds, i.search_seconds, i.splits, i.leaves, i.theta FROM iterations i "
            "JOIN labels l ON l.id = i.label_id WHERE l.name = :label ORDER BY i.iteration"),
            {"label": args.label}).all()
    connection_db = __import__("apsw").Connection(str(work))
    connection_db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection_db.close()
    growth = (db_bytes(work) - size_before) / max(len(rows), 1)
    seconds = [r[1] for r in rows]
    splits = sum(r[3] for r in rows)
    print(f"\n== {len(rows)} boosting iterations of {args.label} (wall {wall:.1f} s with loading)")
    print(f"seconds per iteration   median {statistics.median(seconds):.2f}  mean "
          f"{statistics.mean(seconds):.2f}")
    print(f"split search share      {sum(r[2] for r in rows) / sum(seconds):.0%}")
    print(f"splits                  {splits}  ({sum(seconds) / splits:.2f} s per split)")
    print(f"leaves per tree         median {statistics.median(r[4] for r in rows):.0f}, "
          f"Θ from {rows[0][5]:.4g} to {rows[-1][5]:.4g}")
    print(f"database growth         {growth / 1e6:.2f} MB per iteration (margins every iteration in "
          f"label_training, a checkpoint every 50)")
    print(f"peak memory (RSS)       {peak_gb():.2f} GB (goal <= 4 GB per process)")

    leaves = int(statistics.median(r[4] for r in rows))
    dataset, tree_times = run_lightgbm(work, args.label, max(leaves, 2), 5, args.lightgbm_seconds)
    if dataset is not None or tree_times:
        print(f"\n== LightGBM, {max(leaves, 2)} leaves per tree, binary logistic, 1 thread, "
              f"limit {args.lightgbm_seconds:.0f} s")
        print(f"dataset construction    {dataset if dataset is None else f'{dataset:.1f} s'}")
        if tree_times:
            ours = statistics.median(seconds)
            theirs = statistics.median(tree_times)
            print(f"seconds per tree        median {theirs:.2f} ({len(tree_times)} trees); "
                  f"ours / LightGBM = {ours / theirs:.2f}")
        else:
            print("seconds per tree        no tree finished within the limit")


if __name__ == "__main__":
    main()
