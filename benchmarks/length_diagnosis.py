"""Where the error goes by sentence length: search errors against model errors, on GUM dev.

Usage:
    python benchmarks/length_diagnosis.py --db RUN.sqlite --dev DEV_FILES... --theta X --beam 1000 \\
        [--every N] [--max-pops 10000] [--aggregator sum|maxmin] [--gold-max-pops 10000] \\
        [--json OUT.json] [--output PARSES.ptb]

Every (or every N-th) dev sentence is parsed with its gold tags as ``clparse parse --input-format ptb``
does (the same trees: :func:`clparse.diagnose.diagnose` takes the parser's own steps and keeps the
search's score), scored with EVALB's rules (:func:`clparse.evaluate.evaluate`, as ``clparse eval``:
``--output P.ptb`` writes the parses, and the gold trees parsed to ``P.gold.ptb``, so that ``clparse
eval P.gold.ptb P.ptb`` can confirm the F1), and then the
gold tree (preprocessed as training saw it) is searched for an order of building it that the model
scores strictly better than the parse it returned (:mod:`clparse.search.gold` says how).

Per length bucket (``<= 15``, ``16-25``, ``26-40``, ``> 40`` words; length as ``clparse eval`` counts
it: every token of the gold tree but ``-NONE-``, punctuation included) and for the whole set, the table
gives: sentences; EVALB F1; parses completed greedily at the pop cap; flat fallbacks; and each sentence
once as correct (every bracket right), a search error (the model prefers the gold tree: the search lost
it), a model error (the model prefers the wrong parse), undecided (the gold search reached its own cap
first) or gold unreachable (no order of candidates builds the gold tree: a node wider than K, a label
the model lacks, a candidate constraint); "of which at cap" counts the search errors whose parse hit
the pop cap; ``F1+S`` and ``F1+U``: the F1 if the search errors (respectively the unreachable gold
trees) had been parsed right, an upper bound on what fixing that cause alone can gain (an exact search
returns a tree at least as good as the gold one *under the model*, not necessarily the gold tree);
the seconds of the parses and of the gold searches.
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clparse.evaluate import EvalbParams, Totals, evaluate
from clparse.parser import Parser
from clparse.read import Tree, format_tree, parse_tree, read_trees
from clparse.diagnose import OUTCOMES, Diagnosis, diagnose
from clparse.search.aggregate import AGGREGATORS, DEFAULT_AGGREGATOR

BUCKETS = (("<= 15", 1, 15), ("16-25", 16, 25), ("26-40", 26, 40), ("> 40", 41, 10**9))


@dataclass
class Row:
    name: str
    gold: list[Tree] = field(default_factory=list)
    parsed: list[Tree] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    pop_cap: int = 0
    flat: int = 0
    search_at_cap: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    parse_seconds: float = 0.0
    gold_seconds: float = 0.0

    def add(self, gold: Tree, found: Diagnosis) -> None:
        self.gold.append(gold)
        self.parsed.append(found.tree)
        self.kinds.append(found.outcome)
        self.pop_cap += found.pop_cap
        self.flat += found.fallback is not None
        self.search_at_cap += found.outcome == "search" and found.pop_cap
        self.outcomes[found.outcome] += 1
        self.parse_seconds += found.parse_seconds
        self.gold_seconds += found.gold_seconds

    def totals(self, fixed: str = "") -> Totals:
        """EVALB totals; with ``fixed``, as if the sentences of that outcome had been parsed right."""
        parsed = [g if kind == fixed else p for g, p, kind in zip(self.gold, self.parsed, self.kinds)]
        return evaluate(self.gold, parsed, EvalbParams()).all

    def to_dict(self) -> dict[str, Any]:
        totals = self.totals()
        return {"bucket": self.name, "sentences": len(self.gold), "f1": totals.f1, "recall": totals.recall,
                "precision": totals.precision, "f1_search_fixed": self.totals("search").f1,
                "f1_unreachable_fixed": self.totals("unreachable").f1, "pop_cap": self.pop_cap,
                "flat": self.flat,
                **{outcome: self.outcomes[outcome] for outcome in OUTCOMES},
                "search_at_pop_cap": self.search_at_cap, "parse_seconds": self.parse_seconds,
                "gold_seconds": self.gold_seconds}


HEADER = (f"{'length':<8}{'sent':>6}{'F1':>7}{'popcap':>8}{'flat':>6}{'correct':>9}{'search':>8}"
          f"{'(cap)':>7}{'model':>7}{'undec':>7}{'unreach':>9}{'F1+S':>7}{'F1+U':>7}"
          f"{'parse s':>9}{'gold s':>8}")


def format_row(row: Row) -> str:
    d = row.to_dict()
    return (f"{row.name:<8}{d['sentences']:>6}{d['f1']:>7.2f}{d['pop_cap']:>8}{d['flat']:>6}{d['correct']:>9}"
            f"{d['search']:>8}{d['search_at_pop_cap']:>7}{d['model']:>7}{d['undecided']:>7}{d['unreachable']:>9}"
            f"{d['f1_search_fixed']:>7.2f}{d['f1_unreachable_fixed']:>7.2f}"
            f"{d['parse_seconds']:>9.0f}{d['gold_seconds']:>8.0f}")


def bucket_of(length: int) -> str:
    return next(name for name, low, high in BUCKETS if low <= length <= high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--dev", nargs="+", required=True, help="PTB files of gold trees")
    parser.add_argument("--theta", required=True, help="Θ̂ to rebuild the model at (a number, or best)")
    parser.add_argument("--beam", type=int, default=1000)
    parser.add_argument("--max-pops", type=int, default=10_000)
    parser.add_argument("--aggregator", choices=AGGREGATORS, default=DEFAULT_AGGREGATOR,
                        help="how parses are scored (parse's default: sum); the model's own score decides "
                             "search against model errors")
    parser.add_argument("--gold-max-pops", type=int, default=10_000, help="pop cap of the gold searches")
    parser.add_argument("--gold-max-windows", type=int, default=20_000,
                        help="windows scored to bound gold constituents' confidences")
    parser.add_argument("--every", type=int, default=1, help="every N-th sentence (1: all)")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the table and every sentence here")
    parser.add_argument("--output", type=Path, default=None, help="write the parses (PTB) here")
    args = parser.parse_args()

    theta: float | str = args.theta if args.theta == "best" else float(args.theta)
    started = time.perf_counter()
    clparser = Parser.from_db(args.db, theta=theta, beam=args.beam, max_pops=args.max_pops,
                              aggregator=args.aggregator)
    print(f"model rebuilt at Θ̂ {args.theta} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    dev = [t for path in args.dev for t in read_trees(path)][::args.every]
    rows = {name: Row(name) for name, _, _ in BUCKETS}
    whole = Row("all")
    sentences: list[dict[str, Any]] = []
    outputs: list[str] = []
    for number, gold in enumerate(dev, 1):
        found = diagnose(clparser, gold, gold_max_pops=args.gold_max_pops,
                         gold_max_windows=args.gold_max_windows)
        text = format_tree(found.tree)
        outputs.append(text)
        tree = parse_tree(text)  # scored as `clparse eval` reads the written file
        found.tree = tree
        length = found.evalb.length
        rows[bucket_of(max(length, 1))].add(gold, found)
        whole.add(gold, found)
        sentences.append({"index": (number - 1) * args.every, "length": length, "words": found.words,
                          "outcome": found.outcome, "pop_cap": found.pop_cap, "fallback": found.fallback,
                          "pops": found.returned.pops if found.returned else 0,
                          "gold_status": found.gold.status if found.gold else None,
                          "gold_pops": found.gold.pops if found.gold else 0, "dive": found.dive,
                          "ceiling": found.ceiling,
                          "problem": found.problem,
                          "returned_min": min(found.returned.score.confidences, default=None)
                          if found.returned and found.returned.score else None,
                          "gold_min": min(found.gold.score.confidences, default=None)
                          if found.gold and found.gold.score else None,
                          "parse_seconds": found.parse_seconds, "gold_seconds": found.gold_seconds})
        print(f"[{number}/{len(dev)}] {length} words: {found.outcome}"
              f"{' (pop cap)' if found.pop_cap else ''}{' flat' if found.fallback else ''}"
              f" parse {found.parse_seconds:.1f} s, gold {found.gold_seconds:.1f} s"
              f"{' — ' + found.problem if found.outcome == 'unreachable' else ''}"
              f"{' — ' + found.ceiling if found.outcome == 'model' and found.ceiling else ''}",
              file=sys.stderr, flush=True)
    if args.output is not None:  # and the gold trees beside it: `clparse eval GOLD PARSES` scores the same
        args.output.write_text("".join(line + "\n" for line in outputs))
        args.output.with_suffix(".gold.ptb").write_text("".join(format_tree(t) + "\n" for t in dev))
    print(f"{args.db}, Θ̂ {args.theta}, beam {args.beam}, pop cap {args.max_pops}, gold pop cap "
          f"{args.gold_max_pops}; {len(dev)} sentences (every {args.every}th of {', '.join(args.dev)}); "
          "gold tags; length counts punctuation (as clparse eval)")
    print(HEADER)
    for row in [*rows.values(), whole]:
        print(format_row(row))
    print(f"{time.perf_counter() - started:.0f} s in all")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "db": str(args.db), "theta": args.theta, "beam": args.beam, "max_pops": args.max_pops,
            "gold_max_pops": args.gold_max_pops, "every": args.every, "dev": args.dev,
            "rows": [row.to_dict() for row in [*rows.values(), whole]], "sentences": sentences}, indent=1))


if __name__ == "__main__":
    main()
