"""The tagger net and the CRF + net ensemble on GUM dev, trained on GUM train only (docs/tagger.md).

Usage: python benchmarks/tagger_net.py [--crf CRF.bin] [--epochs 25] [--seed 1] [--save DIR] [--limit N]

Trains the CRF (the default feature set, the stored tagger's settings; or reads ``--crf``, a model
``benchmarks/tagging.py --save`` wrote) and the net (``clparse.tag.net_train``, the epoch best on GUM dev
kept), both on every sentence of GUM train, and scores on all of GUM dev: the CRF, the net alone, and the
ensemble ``clparse.tag.ensemble.EnsembleTagger`` at the CRF weight 0.5 (fixed, not fitted) and, to show
how flat that choice is, at 0.3 to 0.7. Columns: accuracy on all of dev and on its sentences of <= 15
words, unknown-word accuracy (dev tokens whose exact form is not in train), errors fixed and made against
the CRF with the exact McNemar test, tokens/s one sentence per call (CPU). ``--save DIR`` writes
``DIR/net.bin`` (and ``DIR/crf.bin``) for ``benchmarks/tag_chooser.py --tagger-net``. Needs ../shared and
PyTorch (``pip install 'clparse[neural]'``). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tagging import load  # noqa: E402  (benchmarks/tagging.py: GUM read as every tagger benchmark reads it)

from clparse.tag.crf import CrfTagger  # noqa: E402
from clparse.tag.ensemble import EnsembleTagger  # noqa: E402
from clparse.tag.net_train import EpochResult, NetSettings, train_net  # noqa: E402


def mcnemar(fixed: int, broken: int) -> float:
    n, k = fixed + broken, min(fixed, broken)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--crf", type=Path, default=None, help="a stored CRF model instead of training one")
    ap.add_argument("--epochs", type=int, default=NetSettings.epochs)
    ap.add_argument("--seed", type=int, default=NetSettings.seed)
    ap.add_argument("--save", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None, help="only the first N sentences of each split")
    args = ap.parse_args()
    train, _ = load("train", args.limit)
    dev, dev_lengths = load("dev", args.limit)
    known = {w for s in train for w, _ in s}
    if args.crf is not None:
        crf = CrfTagger.from_bytes(args.crf.read_bytes())
    else:
        crf = CrfTagger.train(train)

    def report(epoch: EpochResult) -> None:
        print(f"epoch {epoch.epoch}: loss {epoch.loss:.4f}, dev {100 * (epoch.dev_accuracy or 0):.2f} %, "
              f"{epoch.seconds:.0f} s", file=sys.stderr, flush=True)

    started = time.process_time()
    trained = train_net(train, dev, NetSettings(epochs=args.epochs, seed=args.seed), on_epoch=report)
    assert trained is not None
    train_cpu = time.process_time() - started
    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / "net.bin").write_bytes(trained.net.to_bytes())
        (args.save / "crf.bin").write_bytes(crf.to_bytes())
    gold = [t for s in dev for _, t in s]
    unknown = [w not in known for s in dev for w, _ in s]
    short = [length <= 15 for length, s in zip(dev_lengths, dev) for _ in s]
    words = [[w for w, _ in s] for s in dev]

    def tagged_by(tag: object) -> tuple[list[str], float]:
        start = time.process_time()
        tags = [t for sentence in words for t in tag(sentence)]  # type: ignore[operator]
        return tags, sum(map(len, words)) / (time.process_time() - start)

    crf_tags, crf_speed = tagged_by(crf.tag)
    rows = [(f"CRF (feature set {crf.feature_set})", crf_tags, crf_speed),
            ("net alone", *tagged_by(lambda s: [trained.net.tags[k] for k in
                                                trained.net.probabilities(s).argmax(axis=1)]))]
    for weight in (0.5, 0.3, 0.4, 0.6, 0.7):
        rows.append((f"CRF + net, CRF weight {weight}" + (" (the default)" if weight == 0.5 else ""),
                     *tagged_by(EnsembleTagger(crf, trained.net, weight).tag)))
    n = len(gold)
    print(f"GUM train {len(train):,} sentences; dev {len(dev):,} sentences, {n:,} tokens ({sum(unknown):,} "
          f"unknown); net: epoch {trained.epoch} of {args.epochs} kept (best on dev), {train_cpu:.0f} CPU s "
          f"({trained.seconds:.0f} s wall) to train, seed {args.seed}\n")
    print("| tagger | dev all | errors | dev <= 15 | unknown words | fixed / made vs CRF | McNemar p | "
          "tokens/s (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, tags, speed in rows:
        right = [a == b for a, b in zip(tags, gold)]
        crf_right = [a == b for a, b in zip(crf_tags, gold)]
        fixed = sum(r and not c for r, c in zip(right, crf_right))
        made = sum(c and not r for r, c in zip(right, crf_right))
        short_acc = sum(r for r, s in zip(right, short) if s) / max(1, sum(short))
        unknown_acc = sum(r for r, u in zip(right, unknown) if u) / max(1, sum(unknown))
        print(f"| {name} | {100 * sum(right) / n:.2f} % | {n - sum(right):,} | {100 * short_acc:.2f} % | "
              f"{100 * unknown_acc:.2f} % | {fixed} / {made} | {mcnemar(fixed, made):.2g} | {speed:,.0f} |")


if __name__ == "__main__":
    main()
