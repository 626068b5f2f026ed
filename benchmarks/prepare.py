"""Benchmark of `clparse prepare` on the GUM train split (<= 15 words) plus dev.

Usage: python benchmarks/prepare.py [--out DIR] [--max-words 15] [--compare OLD.sqlite]
Prints wall time (and how much of it is the POS tagger's training, stored in ``taggers.seconds``),
sentences/s, examples per label before and after deduplication, non-zeros, bytes on disk and peak
memory. With ``--compare`` it also checks that every stored table equals the one in OLD.sqlite
(a database prepared from the same inputs by another clparse version), byte for byte.
Targets (printed beside, never asserted): >= 3x faster than 179 s, peak memory <= 2 GB.
"""

from __future__ import annotations

import argparse
import glob
import resource
import time
from pathlib import Path

from example_digest import digests, read_rows

from clparse.examples.prepare import PrepareSettings, prepare
from clparse.store.database import init_database

GUM = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out"))
    parser.add_argument("--max-words", type=int, default=15)
    parser.add_argument("--compare", type=Path, default=None,
                        help="a database prepared earlier from the same inputs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    db = args.out / "prepare-gum.sqlite"
    for leftover in args.out.glob("prepare-gum.sqlite*"):
        leftover.unlink()
    train = sorted(glob.glob(str(GUM / "train" / "*.ptb")))
    dev = sorted(glob.glob(str(GUM / "dev" / "*.ptb")))
    init_database(db)
    start = time.perf_counter()
    summary = prepare(db, train, dev, PrepareSettings(max_words=args.max_words))
    seconds = time.perf_counter() - start
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    size = sum(p.stat().st_size for p in args.out.glob("prepare-gum.sqlite*"))
    report = summary.generation
    assert report is not None
    print(f"training sentences      {summary.train_sentences:>12,}  (used {report.used:,}; "
          f"{report.too_wide:,} skipped: a phrase wider than K)")
    print(f"dev sentences           {summary.dev_sentences:>12,}")
    print(f"states on the paths     {report.states:>12,}")
    tagger = read_rows(db, "SELECT seconds FROM taggers")[0][0]
    print(f"wall time               {seconds:>12.1f} s   (target <= 60 s: 3x faster than 179 s)   "
          f"{summary.train_sentences / seconds:,.1f} sentences/s")
    print(f"  of which tagger       {tagger:>12.1f} s   (NLTK perceptron on every training tree)")
    print(f"  examples and the rest {seconds - tagger:>12.1f} s")
    print(f"peak memory (RSS)       {peak_gb:>12.2f} GB  (target <= 2 GB)")
    print(f"database on disk        {size / 1e9:>12.3f} GB  (target <= 3 GB)")
    print(f"features                {summary.features:>12,}")
    print(f"distinct feature rows   {summary.rows:>12,}   non-zeros {summary.nonzeros:,}")
    print(f"{'label':<10}{'candidates':>12}{'positive %':>12}{'distinct':>12}{'dedup x':>9}")
    for label, row in sorted(summary.labels.items(), key=lambda kv: -kv[1]["positives"]):
        print(f"{label:<10}{row['candidates']:>12,}{100 * row['positives'] / row['candidates']:>12.2f}"
              f"{row['examples']:>12,}{row['candidates'] / row['examples']:>9.2f}")


    if args.compare is not None:
        old, new = digests(str(args.compare)), digests(str(db))
        differ = [name for name in old if old[name] != new[name]]
        print(f"stored tables vs {args.compare}: "
              + ("identical" if not differ else "DIFFERENT: " + ", ".join(differ)))


if __name__ == "__main__":
    main()
