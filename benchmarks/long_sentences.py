"""Parsing very long sentences with no length limit: CPU time and peak memory per sentence length.

Usage: python benchmarks/long_sentences.py --db RUN.sqlite --theta X --tagged DEV.tagged
       [--lengths 100,200,400,800,3000] [--seed 1]

GUM has few sentences over 100 tokens, so each test sentence is made from the tagged sentences of
``--tagged`` (one ``word/TAG`` sentence per line, e.g. GUM dev): random sentences, their final period
dropped, joined by ``, and`` and cut at the length, with one period at the end (seeded: the same
sentences every run). Each length is parsed by its own ``clparse parse --input-format tagged`` process
at the default search; the table gives its user CPU seconds (start-up included: about 0.5 s), peak
resident memory, and whether the tree was flat or completed greedily at the pop cap. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

CLPARSE = str(Path(sys.executable).with_name("clparse"))


def long_sentence(sentences: list[list[str]], length: int, rng: random.Random) -> str:
    words: list[str] = []
    while len(words) < length:
        sentence = [w for w in rng.choice(sentences) if not w.endswith("/.")]
        words += ([",/,", "and/CC"] if words else []) + sentence
    return " ".join(words[:length]) + " ./.\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--theta", default="best")
    parser.add_argument("--tagged", required=True, type=Path)
    parser.add_argument("--lengths", default="100,200,400,800,3000")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    lines = args.tagged.read_text(encoding="utf-8").splitlines()
    sentences = [line.split() for line in lines if line.strip()]
    rng = random.Random(args.seed)
    print("| tokens | CPU s (user) | peak RSS MB | flat | completed at the pop cap |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for length in (int(n) for n in args.lengths.split(",")):
            source = Path(tmp) / f"len{length}.tagged"
            source.write_text(long_sentence(sentences, length, rng), encoding="utf-8")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([CLPARSE, "parse", "--db", args.db, "--theta", str(args.theta),
                                   "--input-format", "tagged", "--format", "json", str(source)],
                                  capture_output=True, text=True, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime
            # ru_maxrss of the children is the largest child so far: each length is larger than the last
            rss = after.ru_maxrss / 1024
            (result,) = [json.loads(line) for line in done.stdout.splitlines()]
            flat = "yes" if result["fallback"] else "no"
            capped = "yes" if result["completion"] else "no"
            print(f"| {length} | {cpu:.1f} | {rss:.0f} | {flat} | {capped} |", flush=True)


if __name__ == "__main__":
    main()
