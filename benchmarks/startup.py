"""Start-up time of the command line: how long a command takes before any work, and the first parse.

Usage: python benchmarks/startup.py [--db PATH --theta X] [--runs 5] [--cold]
Times, as a subprocess from start (wall clock, best and median of --runs): `clparse --help`,
`clparse sql --db DB "SELECT 1"`, `clparse status --db DB`, `python -c "import clparse.parser"` for
scale, and the time to the first parsed sentence: `clparse parse --db DB --theta X --input-format
tagged` given one tagged sentence on stdin, from the start of the process until its tree is on stdout
(the parser rebuilt at Θ̂ = X, the search's compiled functions loaded from numba's disk cache; run
once before timing so that cache is filled; the commands run with Python's bytecode cache on, as an installed
package has it, even where PYTHONDONTWRITEBYTECODE is set: compiling clparse's modules from source again on
every start cost 0.08 s). DB defaults to the bundled sample, prepared and trained
until Θ < 3 in a temporary directory, parsed at Θ̂ = 4.
``--cold`` adds the first parsed sentence with the database's pages dropped from the kernel's page cache
before each run (``posix_fadvise(DONTNEED)``, Linux; the programs' own files stay cached), as a database
not read for a while is: what the damage check and the model's load cost from the disk.
Goals (issue 26, printed beside, never asserted): --help ≤ 0.2 s, the first parsed sentence ≤ 0.5 s,
sql and status well under a second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

CLPARSE = str(Path(sys.executable).with_name("clparse"))
# Bytecode written and read as after `pip install`; a CI or container setting must not slow each start.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
SENTENCE = "The/DT dog/NN barked/VBD at/IN the/DT cat/NN ./.\n"


def timed(command: list[str], runs: int) -> tuple[float, float]:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        seconds.append(time.perf_counter() - start)
    return min(seconds), statistics.median(seconds)


def evict(path: Path) -> None:
    """Drop ``path`` (and its write-ahead log) from the page cache: its next read comes from the disk."""
    for file in (path, Path(f"{path}-wal")):
        if file.exists():
            descriptor = os.open(file, os.O_RDONLY)
            try:
                os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(descriptor)


def first_tree(command: list[str], runs: int,
               before: Callable[[], object] = lambda: None) -> tuple[float, float]:
    """Best and median seconds from starting ``command`` to the first line on its stdout (``before`` runs
    ahead of each start, untimed)."""
    seconds = []
    for _ in range(runs):
        before()
        start = time.perf_counter()
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, env=ENV)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(SENTENCE)
        process.stdin.close()
        line = process.stdout.readline()
        seconds.append(time.perf_counter() - start)
        process.stdout.read()
        if process.wait() != 0 or not line.startswith("(ROOT"):
            raise SystemExit(f"{' '.join(command)} failed (exit status {process.returncode})")
    return min(seconds), statistics.median(seconds)


def sample_db(directory: Path) -> Path:
    from clparse.data import sample_path

    db = directory / "sample.sqlite"
    for command in (["prepare", "--db", str(db), "--train", str(sample_path("train")), "--dev",
                     str(sample_path("dev"))], ["train", "--db", str(db), "--until-theta", "3"]):
        subprocess.run([CLPARSE, *command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=ENV)
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--theta", default=None, help="Θ̂ to parse at (default: 4 for the sample, else best)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true",
                        help="also time the first parsed sentence with the database out of the page cache")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db if args.db is not None else sample_db(Path(tmp))
        theta = args.theta if args.theta is not None else ("4" if args.db is None else "best")
        parse = [CLPARSE, "parse", "--db", str(db), "--theta", theta, "--input-format", "tagged"]
        first_tree(parse, 1)  # fills numba's disk cache (and the bytecode cache) if empty or stale
        timed([sys.executable, "-c", "import clparse.cli.parsing, clparse.api"], 1)
        Measure = Callable[[list[str], int], tuple[float, float]]
        commands: dict[str, tuple[list[str], Measure, float | None]] = {
            "clparse --help": ([CLPARSE, "--help"], timed, 0.2),
            f"first parsed sentence (Θ̂ {theta})": (parse, first_tree, 0.5),
            **({"first parsed sentence, cold database": (
                parse, partial(first_tree, before=partial(evict, db)), None)} if args.cold else {}),
            'clparse sql "SELECT 1"': ([CLPARSE, "sql", "--db", str(db), "SELECT 1"], timed, 1.0),
            "clparse status": ([CLPARSE, "status", "--db", str(db)], timed, 1.0),
            "python -c 'import clparse.parser'": ([sys.executable, "-c", "import clparse.parser"], timed,
                                                  None),
        }
        print(f"database: {db}")
        width = max(map(len, commands)) + 2
        print(f"{'command':<{width}}{'best':>8}{'median':>8}  goal")
        for name, (command, measure, goal) in commands.items():
            best, median = measure(command, args.runs)
            shown = "" if goal is None else f"≤ {goal:g} s: {'met' if median <= goal else 'NOT met'} (median)"
            print(f"{name:<{width}}{best:>7.2f}s{median:>7.2f}s  {shown}")


if __name__ == "__main__":
    main()
