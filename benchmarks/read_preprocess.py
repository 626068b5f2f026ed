"""Trees per second for reading and for preprocessing a treebank.

Usage: python benchmarks/read_preprocess.py [FILES...]
Default files: the GUM train split at ../shared/data/gum/train/*.ptb (not shipped with clparse).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import glob
import sys
import time
from pathlib import Path

from clparse.preprocess import PreprocessConfig, PreprocessReport, preprocess_treebank
from clparse.read import read_treebank

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum" / "train"


def main(argv: list[str]) -> None:
    files = argv or sorted(glob.glob(str(DEFAULT / "*.ptb")))
    if not files:
        sys.exit(f"no treebank files given and none found under {DEFAULT}")
    start = time.perf_counter()
    trees = list(read_treebank(files))
    read_seconds = time.perf_counter() - start
    words = sum(len(t.words()) for t in trees)
    print(f"files                 {len(files):>10,}")
    print(f"trees                 {len(trees):>10,}")
    print(f"words                 {words:>10,}")
    print(f"read                  {read_seconds:>10.2f} s   {len(trees) / read_seconds:>10,.0f} trees/s"
          f"   {words / read_seconds:>10,.0f} words/s")
    for max_words in (None, 15):
        report = PreprocessReport()
        start = time.perf_counter()
        kept = sum(1 for _ in preprocess_treebank(trees, PreprocessConfig(max_words=max_words), report))
        seconds = time.perf_counter() - start
        label = "all lengths" if max_words is None else f"<= {max_words} words"
        print(f"preprocess ({label:<11}) {seconds:>6.2f} s   {len(trees) / seconds:>10,.0f} trees/s"
              f"   kept {kept:,}")


if __name__ == "__main__":
    main(sys.argv[1:])
