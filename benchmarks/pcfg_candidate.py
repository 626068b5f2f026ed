"""The PCFG's tagging (benchmarks/pcfg_tags.py --write) as one more tagging for parse's rule to pick from.

Usage: python benchmarks/pcfg_candidate.py --db RUN.sqlite --tagged DIR/w-2.tagged [--tagged ...]
                                          [--theta 5] [--beam 100] [--no-swaps]

Every dev sentence stored in the database is parsed from each tagging ``parse`` tries (the best tagging
and up to 3 swaps, :meth:`clparse.parser.Parser.tagging_parses`) and from each PCFG tagging, if it is
another. Rows (EVALB, gold tags put back on the leaves so every sentence counts, as
benchmarks/tag_chooser.py scores): the best tagging alone; the search's rule over parse's taggings (what
``parse`` does); each PCFG tagging alone; the rule over parse's taggings and each PCFG tagging; the rule
over each PCFG tagging and 3 swaps of it (chosen as parse chooses its swaps, around the PCFG's tagging;
not with ``--no-swaps``); the rule over parse's taggings and every PCFG tagging (more than one given);
gold tags. Then the paired shuffling test (``clparse compare``'s) of each row from the PCFG against
parse's rule. Nothing is asserted; results in docs/tagger.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from clparse.calibrate.run import dev_trees, put_gold_tags
from clparse.errors import ClparseError
from clparse.evaluate import EvalbParams, evaluate
from clparse.evaluate.significance import compare
from clparse.parser import Parser, rule_pick
from clparse.preprocess.pipeline import sentence_length
from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG
from clparse.read import Tree
from clparse.tag.crf import UNSURE, swapped_taggings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcfg_tags import probabilities, tag_labels  # noqa: E402
from tagging import read_tagged  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--tagged", type=Path, action="append", required=True,
                    help="a PCFG tagging of every dev sentence; more than once: each is one more tagging")
    ap.add_argument("--theta", default="best")
    ap.add_argument("--beam", type=int, default=100)
    ap.add_argument("--no-swaps", action="store_true",
                    help="leave out the rows of each PCFG tagging with its swaps (3 more parses a sentence)")
    args = ap.parse_args()
    theta = args.theta if args.theta == "best" else float(args.theta)
    try:
        parser = Parser.from_db(args.db, theta=theta, beam=args.beam, tag_chooser=False)
    except ClparseError as exc:  # not calibrated, not a clparse database: one line, as clparse says it
        raise SystemExit(f"error: {exc}") from None
    gold = dev_trees(args.db)
    files = [read_tagged(path) for path in args.tagged]
    for path, lines in zip(args.tagged, files):
        if len(lines) != len(gold):
            raise SystemExit(f"{path}: {len(lines)} lines for {len(gold)} dev sentences")
    aggregator = parser.options.aggregator
    names = [f"{path.parent.name}/{path.stem}" for path in args.tagged]
    extra = [f"{name}'s tagging alone" for name in names]
    each = [f"the rule over parse's taggings and {name}'s" for name in names]
    swaps = [] if args.no_swaps else [f"the rule over {name}'s tagging and its swaps" for name in names]
    together = "the rule over parse's taggings and all of these" if len(names) > 1 else None
    names_in_order = ["the best tagging alone", RULE, *extra, *each, *swaps,
                      *([together] if together else []), "gold tags"]
    rows: dict[str, list[Tree]] = {name: [] for name in names_in_order}
    differ = picked = 0
    start = time.process_time()
    for n, tree in enumerate(gold):
        gold_tagged = [(w, t) for w, t in tree.tagged_words() if t != EMPTY_ELEMENT_TAG]
        options = parser.tagging_parses([w for w, _ in gold_tagged])
        tried: list[list[tuple[str, str]]] = [[(w, t) for w, t in result.tagged] for result, _ in options]
        with_pcfg = list(options)
        alone, own, swapped = [], [], []
        words = [w for w, _ in gold_tagged]
        table, labels = probabilities(parser.tagger, words), tag_labels(parser.tagger)
        for path, lines in zip(args.tagged, files):
            pcfg = lines[n]
            if [w for w, _ in pcfg] != [w for w, _ in gold_tagged]:
                raise SystemExit(f"{path}, line {n + 1}: the words are not its dev sentence's")
            if pcfg in tried:
                result = with_pcfg[tried.index(pcfg)][0]
            else:
                differ += 1
                result = parser.parse_tagged(pcfg)
                tried.append(pcfg)
                with_pcfg.append((result, 0.0))
            alone.append(result)
            mine = [*options, (result, 0.0)]
            own.append(mine[rule_pick(mine, aggregator)][0])
            if swaps:
                around = [(result, 0.0)] + [(parser.parse_tagged(list(zip(words, tags))), 0.0)
                                            for tags in swaps_of([t for _, t in pcfg], table, labels, 3)]
                swapped.append(around[rule_pick(around, aggregator)][0])
        pick = rule_pick(with_pcfg, aggregator)
        picked += pick >= len(options)
        chosen = (options[0][0], options[rule_pick(options, aggregator)][0], *alone, *own, *swapped,
                  *([with_pcfg[pick][0]] if together else []), parser.parse_tagged(gold_tagged))
        for name, result in zip(rows, chosen, strict=True):
            put_gold_tags(result.tree, gold_tagged)
            rows[name].append(result.tree)
    print(f"{len(gold):,} dev sentences ({differ:,} PCFG taggings parse did not try; the rule kept one in "
          f"{picked:,} sentences) in {time.process_time() - start:.0f} CPU s\n")
    params = EvalbParams(max_errors=len(gold) + 1)
    short = [i for i, tree in enumerate(gold) if sentence_length(tree) <= 15]
    print("| taggings | F1 | F1 <= 15 words |\n|---|---|---|")
    scores = {}
    for name, trees in rows.items():
        scores[name] = evaluate(gold, trees, params)
        short_f1 = evaluate([gold[i] for i in short], [trees[i] for i in short], params).all.f1
        print(f"| {name} | {scores[name].all.f1:.2f} | {short_f1:.2f} |")
    print("\nagainst parse's rule (paired shuffling test, 10,000 trials):")
    for name in [*extra, *each, *swaps, *([together] if together else [])]:
        f1 = next(m for m in compare(scores[name], scores[RULE]).metrics if m.metric == "f1")
        print(f"  {name}: {f1.difference:+.2f} F1, p = {f1.p_value:.4f}")


RULE = "the search's rule (parse)"


def swaps_of(base: list[str], table: np.ndarray, labels: list[str], count: int) -> list[list[str]]:
    """Up to ``count`` taggings, each ``base`` with one unsure word's tag swapped, chosen as ``parse``
    chooses its swaps (the tagger's least sure words first, best tag below UNSURE): to the tagger's best tag
    where ``base`` differs from it, else to its second."""
    unsure: list[tuple[float, int, str, float]] = []
    for t, row in enumerate(table):
        ranked = np.argsort(-row, kind="stable")
        if row[ranked[0]] < UNSURE and len(ranked) > 1:
            first, second = labels[int(ranked[0])], labels[int(ranked[1])]
            unsure.append((float(row[ranked[0]]), t, second if base[t] == first else first, 0.0))
    return [tags for tags, _ in swapped_taggings(base, unsure, count)[1:]]


if __name__ == "__main__":
    main()
