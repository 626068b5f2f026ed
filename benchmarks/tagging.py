"""POS-tagger options on GUM (issue #12): each trained on GUM train, measured on GUM dev.

Usage: python benchmarks/tagging.py [--options perceptron,crf] [--c1 0.2] [--c2 0.001] [--iterations 150]
                                    [--passes 2] [--limit N] [--save DIR]

Options: ``perceptron`` is clparse.tag.perceptron.Tagger as the pipeline trains it today (NLTK's
averaged perceptron, 5 iterations, seed 0); ``crf`` is clparse.tag.crf.CrfTagger with the given
settings (defaults: the study's winner). Both learn from every tree of GUM train (all lengths, the
tagger is not length-filtered), tokens without ``-NONE-``, files in sorted name order.

Columns: token accuracy on all of GUM dev (1,575 sentences) and on dev <= 15 words, where length
counts words as the parser's length filter does (``clparse.preprocess.sentence_length``: neither
punctuation nor ``-NONE-``), the subset the parser is scored on; accuracy on unknown words (dev
tokens whose exact, case-sensitive form never occurs in train); training time; tagging speed,
one sentence per ``tag()`` call as the parser calls it (input checks and, for the CRF, Python
feature extraction included), best of ``--passes`` passes over dev; the time to load the stored
model (``from_json`` / ``from_bytes``, checks included); the stored model's size (JSON text as
UTF-8, or the CRF's bytes). Times are wall / CPU seconds of this process: on a shared machine CPU
time is the steadier figure. Prints a Markdown table; ``--save DIR`` also writes each stored model
(``DIR/perceptron.json``, ``DIR/crf.bin``). Needs ../shared (the GUM treebank).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from clparse.preprocess import sentence_length
from clparse.read import read_trees
from clparse.tag.crf import DEFAULT_C1, DEFAULT_C2, DEFAULT_ITERATIONS, CrfTagger
from clparse.tag.evaluate import TagsWords
from clparse.tag.perceptron import Tagger

GUM = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum"
NONE_TAG = "-NONE-"
Sentence = list[tuple[str, str]]
T = TypeVar("T")


@dataclass
class Option:
    name: str
    train: Callable[[list[Sentence]], tuple[TagsWords, bytes]]  # the tagger and its stored form
    load: Callable[[bytes], TagsWords]


def options(args: argparse.Namespace) -> dict[str, Option]:
    def perceptron(data: list[Sentence]) -> tuple[TagsWords, bytes]:
        tagger = Tagger.train(data)
        return tagger, tagger.to_json().encode("utf-8")

    def crf(data: list[Sentence]) -> tuple[TagsWords, bytes]:
        tagger = CrfTagger.train(data, c1=args.c1, c2=args.c2, iterations=args.iterations)
        return tagger, tagger.to_bytes()

    return {
        "perceptron": Option("NLTK perceptron, 5 it. (today)", perceptron,
                             lambda stored: Tagger.from_json(stored.decode("utf-8"))),
        "crf": Option(f"CRF c1={args.c1:g} c2={args.c2:g}, {args.iterations} it.", crf, CrfTagger.from_bytes),
    }


def load(split: str, limit: int | None = None) -> tuple[list[Sentence], list[int]]:
    """Tagged sentences of a GUM split and their lengths as the parser's filter counts them."""
    sentences, lengths = [], []
    for path in sorted((GUM / split).glob("*.ptb")):
        for tree in read_trees(path):
            tagged = [(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
            if tagged:
                sentences.append(tagged)
                lengths.append(sentence_length(tree))
    if not sentences:
        sys.exit(f"Error: no trees under {GUM / split} (this benchmark needs ../shared/data/gum)")
    return sentences[:limit], lengths[:limit]


def timed(work: Callable[[], T]) -> tuple[T, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def measure(option: Option, train: list[Sentence], dev: list[Sentence], dev_lengths: Sequence[int],
            passes: int) -> tuple[dict[str, float], bytes]:
    """Train, reload and tag dev; counts, times and size, and the stored model."""
    (tagger, stored), train_wall, train_cpu = timed(lambda: option.train(train))
    _, load_wall, load_cpu = timed(lambda: option.load(stored))
    words = [[w for w, _ in sentence] for sentence in dev]
    predicted: list[list[str]] = []
    best_wall = best_cpu = float("inf")
    for _ in range(passes):
        predicted, wall, cpu = timed(lambda: [tagger.tag(sentence) for sentence in words])
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    vocabulary = {w for sentence in train for w, _ in sentence}
    counts = dict.fromkeys(("all", "all_ok", "short", "short_ok", "unknown", "unknown_ok"), 0)
    for sentence, tags, length in zip(dev, predicted, dev_lengths):
        for (word, gold), guess in zip(sentence, tags):
            ok = guess == gold
            counts["all"] += 1
            counts["all_ok"] += ok
            if length <= 15:
                counts["short"] += 1
                counts["short_ok"] += ok
            if word not in vocabulary:
                counts["unknown"] += 1
                counts["unknown_ok"] += ok
    tokens = counts["all"]
    return {**{k: float(v) for k, v in counts.items()}, "train_wall": train_wall, "train_cpu": train_cpu,
            "load_wall": load_wall, "load_cpu": load_cpu, "tokens_per_s_wall": tokens / best_wall,
            "tokens_per_s_cpu": tokens / best_cpu, "bytes": float(len(stored))}, stored


def percent(ok: float, total: float) -> str:
    return f"{100 * ok / total:.2f} %" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--options", default="perceptron,crf", help="comma-separated: perceptron, crf")
    parser.add_argument("--c1", type=float, default=DEFAULT_C1)
    parser.add_argument("--c2", type=float, default=DEFAULT_C2)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="CRF iterations")
    parser.add_argument("--passes", type=int, default=2, help="tagging passes over dev; the best is reported")
    parser.add_argument("--limit", type=int, default=None, help="only the first N train and dev sentences (a smoke test)")
    parser.add_argument("--save", type=Path, default=None, help="write each stored model into this directory")
    args = parser.parse_args()
    known = options(args)
    chosen = [name.strip() for name in args.options.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in known]
    if unknown or not chosen:
        parser.error(f"--options: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(known)}")
    if args.passes < 1:
        parser.error("--passes must be at least 1")

    train, _ = load("train", args.limit)
    dev, dev_lengths = load("dev", args.limit)
    rows = []
    for name in chosen:
        print(f"{name}: training on {len(train):,} sentences ...", file=sys.stderr, flush=True)
        result, stored = measure(known[name], train, dev, dev_lengths, args.passes)
        if args.save is not None:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / ("perceptron.json" if name == "perceptron" else "crf.bin")).write_bytes(stored)
        print(f"{name}: {percent(result['all_ok'], result['all'])} on dev", file=sys.stderr, flush=True)
        rows.append((known[name].name, result))

    first = rows[0][1]
    print(f"GUM train {len(train):,} sentences, {sum(map(len, train)):,} tokens; dev {len(dev):,} sentences, "
          f"{first['all']:,.0f} tokens ({first['short']:,.0f} in sentences <= 15 words, {first['unknown']:,.0f} "
          f"unknown); load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| option | dev acc (all) | errors | dev <= 15 acc | unknown-word acc | train s (wall / CPU) "
          "| tokens/s tagging (wall / CPU) | load s (wall / CPU) | model bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r in rows:
        print(f"| {label} | {percent(r['all_ok'], r['all'])} | {r['all'] - r['all_ok']:,.0f} "
              f"| {percent(r['short_ok'], r['short'])} | {percent(r['unknown_ok'], r['unknown'])} "
              f"| {r['train_wall']:.1f} / {r['train_cpu']:.1f} "
              f"| {r['tokens_per_s_wall']:,.0f} / {r['tokens_per_s_cpu']:,.0f} "
              f"| {r['load_wall']:.2f} / {r['load_cpu']:.2f} | {r['bytes']:,.0f} |")


if __name__ == "__main__":
    main()
