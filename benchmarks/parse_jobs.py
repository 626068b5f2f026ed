"""`parse --jobs N` against `--jobs 1`: wall time, speed-up, time to the first tree, the same bytes.

Usage: python benchmarks/parse_jobs.py --db PATH --input FILE [--theta X] [--input-format tagged]
                                       [--jobs 2] [--runs 7] [--beam 100]

Runs `clparse parse` as a user does (a subprocess, start-up and exit included) with `--jobs 1` and
`--jobs N` alternately, --runs times each, so that a change in the machine's load falls on both; prints
each run, the median wall time of each and their ratio beside issue 26's target (≥ 1.7× with two
processes on two idle cores, GUM dev ≤ 15: 909 sentences), the median time from the start to the first
tree on stdout, and whether every run's output is byte-identical to the first `--jobs 1` run's.
Nothing is asserted: the figures are printed beside the target. Needs an idle machine: another process
on either core shows as a lower speed-up.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

CLPARSE = str(Path(sys.executable).with_name("clparse"))
TARGET = 1.7


def timed_run(command: list[str]) -> tuple[float, float, bytes]:
    """(seconds to the first line on stdout, seconds to the end, the whole stdout)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    first_line = process.stdout.readline()
    first = time.perf_counter() - start
    rest = process.stdout.read()
    if process.wait() != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit status {process.returncode})")
    return first, time.perf_counter() - start, first_line + rest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--input", required=True, help="the sentences, one per line")
    parser.add_argument("--input-format", default="tagged")
    parser.add_argument("--theta", default="best")
    parser.add_argument("--beam", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base = [CLPARSE, "parse", "--db", args.db, "--theta", args.theta, "--beam", str(args.beam),
            "--input-format", args.input_format, args.input]
    timed_run([*base, "--jobs", "1"])  # numba's disk cache and the page cache filled, untimed
    runs: dict[int, list[tuple[float, float]]] = {1: [], args.jobs: []}
    reference: bytes | None = None
    same = True
    for number in range(args.runs):
        for jobs in (1, args.jobs):
            first, total, output = timed_run([*base, "--jobs", str(jobs)])
            reference = output if reference is None else reference
            same = same and output == reference
            runs[jobs].append((first, total))
            print(f"run {number + 1} --jobs {jobs}: {total:.2f} s (first tree {first:.2f} s)", flush=True)
    one = statistics.median(total for _, total in runs[1])
    many = statistics.median(total for _, total in runs[args.jobs])
    sentences = reference.count(b"\n") if reference is not None else 0
    print(f"\n{sentences} lines of output; median of {args.runs} alternating runs each")
    for jobs in (1, args.jobs):
        print(f"--jobs {jobs}: {statistics.median(t for _, t in runs[jobs]):.2f} s, first tree "
              f"{statistics.median(f for f, _ in runs[jobs]):.2f} s")
    ratio = one / many
    verdict = "met" if ratio >= TARGET else "NOT met"
    print(f"speed-up {ratio:.2f}x (target ≥ {TARGET}x with 2 jobs: {verdict}); output byte-identical: {same}")


if __name__ == "__main__":
    main()
