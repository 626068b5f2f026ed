"""The search's rule among taggings, kept to swaps of one kind: do the costly kinds want trying alone?

``benchmarks/tag_error_cost.py`` finds a verb read as another class (or the reverse) the costliest kind of
tag error. So perhaps the alternatives ``parse`` tries for raw tokens (the best tagging with one unsure word's
tag swapped for its second best) should be only those that cross the verb boundary, where the parser's
scores differ most, and not the cheap swaps inside a class, where the choice may be noise. Every dev sentence
is parsed from each tagging once (``parse_taggings``, up to ``--alternatives`` of them); then the rule picks
among the best tagging and the alternatives of each kind kept, first among the first three (the default),
then among all, and each row is scored (EVALB, gold tags put back on the leaves) and compared with the
default rule by the paired shuffling test.

Run: ``python benchmarks/swap_kinds.py --db RUN.sqlite [--theta 5] [--alternatives 6] [--beam 100]``.
Nothing is asserted; results in docs/tagger.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from clparse.calibrate.run import dev_trees  # noqa: E402
from clparse.calibrate.tag_chooser import DevSentence, parse_taggings  # noqa: E402
from clparse.evaluate import EvalbParams, evaluate  # noqa: E402
from clparse.evaluate.significance import compare  # noqa: E402
from clparse.parser import Parser, rule_pick  # noqa: E402
from clparse.preprocess.pipeline import sentence_length  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from tag_error_cost import INSIDE, VERB, kind  # noqa: E402

Kind = Callable[[str, str], bool]


# the kinds of benchmarks/tag_error_cost.py, whose costs suggested trying them alone
KINDS: dict[str, Kind] = {"every swap": lambda best, other: True,
                          "verb-boundary swaps only": lambda best, other: kind(best, other) == VERB,
                          "cross-class swaps only": lambda best, other: kind(best, other) != INSIDE}


def swapped(sentence: DevSentence, option: int) -> tuple[str, str]:
    """(best tag, other tag) at the one word where tagging ``option`` differs from the best tagging."""
    best, other = sentence.options[0][0].tagged, sentence.options[option][0].tagged
    differ = [(b, o) for (_, b), (_, o) in zip(best, other) if b != o]
    if len(differ) != 1:
        raise SystemExit(f"a tagging differs from the best in {len(differ)} words, not one")
    return differ[0]


def kept_pick(sentence: DevSentence, first: int, kind: Kind, aggregator: str) -> int:
    """The rule's pick among the best tagging and its first ``first`` alternatives of kind ``kind``."""
    allowed = [0] + [k for k in range(1, min(first + 1, len(sentence.options)))
                     if kind(*swapped(sentence, k))]
    return allowed[rule_pick([sentence.options[k] for k in allowed], aggregator)]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--theta", default="best")
    ap.add_argument("--beam", type=int, default=100)
    ap.add_argument("--alternatives", type=int, default=6)
    ap.add_argument("--aggregator", default="sum")
    args = ap.parse_args(argv)
    theta = args.theta if args.theta == "best" else float(args.theta)
    parser = Parser.from_db(args.db, theta=theta, beam=args.beam, tag_alternatives=args.alternatives,
                            aggregator=args.aggregator, tag_chooser=False)
    gold = dev_trees(args.db)
    start = time.process_time()
    sentences = parse_taggings(parser, gold)
    assert sentences is not None
    seconds = time.process_time() - start
    print(f"{len(gold):,} dev sentences parsed from each tagging in {seconds:.0f} CPU s\n")
    params = EvalbParams(max_errors=len(gold) + 1)
    short = [i for i, tree in enumerate(gold) if sentence_length(tree) <= 15]
    rows = {"the best tagging alone": [0] * len(sentences)}
    for first in sorted({3, args.alternatives}):
        for name, keep in KINDS.items():
            rows[f"rule over the first {first} alternatives, {name}"] = [
                kept_pick(s, first, keep, args.aggregator) for s in sentences]
    print("| taggings the rule picks among | F1 | F1 <= 15 words | sentences not on the best tagging |")
    print("|---|---|---|---|")
    evaluations = {}
    for name, picks in rows.items():
        trees = [s.options[k][0].tree for s, k in zip(sentences, picks)]
        evaluations[name] = evaluate(gold, trees, params)
        short_f1 = evaluate([gold[i] for i in short], [trees[i] for i in short], params).all.f1
        moved = sum(k != 0 for k in picks)
        print(f"| {name} | {evaluations[name].all.f1:.2f} | {short_f1:.2f} | {moved:,} |")
    default = "rule over the first 3 alternatives, every swap"
    print(f"\nagainst '{default}' (paired shuffling test, 10,000 trials):")
    for name in rows:
        if name != default:
            f1 = next(m for m in compare(evaluations[name], evaluations[default]).metrics if m.metric == "f1")
            print(f"  {name}: {f1.difference:+.2f} F1, p = {f1.p_value:.4f}")


if __name__ == "__main__":
    main()
