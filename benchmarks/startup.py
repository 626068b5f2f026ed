"""Start-up time of the command line: how long a command takes before any work.

Usage: python benchmarks/startup.py [--db PATH] [--runs 5]
Times, as a subprocess from start to exit (wall clock, best and median of --runs): `clparse --help`,
`clparse sql --db DB "SELECT 1"`, `clparse status --db DB`, and `python -c "import clparse.parser"`
for scale. DB defaults to a database prepared from the bundled sample in a temporary directory.
Goal (printed beside, never asserted): --help, sql and status well under a second.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLPARSE = str(Path(sys.executable).with_name("clparse"))


def timed(command: list[str], runs: int) -> tuple[float, float]:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds.append(time.perf_counter() - start)
    return min(seconds), statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db
        if db is None:
            from clparse.data import sample_path

            db = Path(tmp) / "sample.sqlite"
            subprocess.run([CLPARSE, "prepare", "--db", str(db), "--train", str(sample_path("train")),
                            "--dev", str(sample_path("dev"))], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        commands = {
            "clparse --help": [CLPARSE, "--help"],
            'clparse sql "SELECT 1"': [CLPARSE, "sql", "--db", str(db), "SELECT 1"],
            "clparse status": [CLPARSE, "status", "--db", str(db)],
            "python -c 'import clparse.parser'": [sys.executable, "-c", "import clparse.parser"],
        }
        print(f"{'command':<36}{'best':>8}{'median':>8}  goal")
        for name, command in commands.items():
            best, median = timed(command, args.runs)
            goal = "" if name.startswith("python") else f"< 1 s: {'met' if median < 1.0 else 'NOT met'}"
            print(f"{name:<36}{best:>7.2f}s{median:>7.2f}s  {goal}")


if __name__ == "__main__":
    main()
