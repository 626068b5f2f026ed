"""Where parsing from raw tokens loses against gold tags: the taggings parsed, and the choice among them.

Usage: python benchmarks/tag_alternatives.py --db RUN.sqlite [--theta best] [--beam 1000]
                                             [--alternatives 3] [--weights 0.1,0.3,1,3] [--limit N]

Every dev sentence stored in the database (``prepare --dev``) is parsed from its gold tags, and from
each tagging ``parse`` tries for untagged input: the stored CRF's best tagging and up to
``--alternatives`` others (``CrfTagger.alternatives``: one unsure word's tag swapped each). Then the
parse of one tagging per sentence is scored (EVALB, as ``clparse eval``) under each way of choosing:

* the best tagging alone (``parse --tag-alternatives 0``);
* the parser's rule (``parse``'s default before the tag chooser and the summed loss): the tagging whose
  best tree the search's own max-min key ranks first (the highest lowest confidence; every parse here is
  a max-min one), the best tagging on ties;
* the same rule, but an alternative must also beat the best tagging's lowest confidence by at least
  ``weight * log(p_best / p_alternative)``, the two tags' marginal probabilities at the swapped word
  (``--weights``): the tagger's certainty weighed against the parser's;
* the oracle: per sentence the tagging whose parse has the highest sentence F1 against the gold tree (it
  reads the gold tree): nearly the best any rule choosing among these taggings can do (not exactly, as
  corpus F1 pools the brackets of all sentences: on a few sentences a rule can beat it by a little).

Rows give F1, the sentences EVALB scores (a token tagged punctuation on one side only leaves a sentence
out, as in ``clparse eval``), for a dev set of every length also F1 on its sentences of at most 15 words
(counted as prepare counts them), and how many sentences took another tagging than the best. Nothing is
asserted; results in docs/tagger.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clparse.calibrate.run import dev_trees
from clparse.calibrate.tag_chooser import sentence_f1
from clparse.evaluate import EvalbParams, evaluate
from clparse.parser import Parser
from clparse.preprocess.pipeline import sentence_length
from clparse.read.tree import Tree
from clparse.tag.crf import CrfTagger


@dataclass
class Option:
    """One tagging of a sentence and its parse."""

    tree: Tree
    lowest: float | None  # the parse's lowest confidence (None: a flat fallback tree)
    key: tuple[int, tuple[float, ...]]  # the search's ranking of the parse, smaller first
    certainty: float  # log(p_best / p_alternative) at the swapped word; 0 for the best tagging


def parse_options(parser: Parser, tagger: CrfTagger, words: list[str], count: int) -> list[Option]:
    taggings = tagger.alternatives(words, count)
    marginals = tagger.marginals(words) if len(taggings) > 1 else []
    best = taggings[0]
    options = []
    for tags in taggings:
        result = parser.parse_tagged(list(zip(words, tags)))
        top = result.trees[0]
        flat = result.fallback is not None or top.score is None
        key = (1, ()) if flat else (0, tuple(-c for c in top.confidences))
        swapped = [t for t, (a, b) in enumerate(zip(tags, best)) if a != b]
        certainty = 0.0
        if swapped:
            (t,) = swapped
            certainty = math.log(marginals[t][best[t]] / marginals[t][tags[t]])
        options.append(Option(result.tree, None if flat else min(top.confidences), key, certainty))
    return options


def parsers_rule(weight: float) -> Callable[[list[Option]], Option]:
    def choose(options: list[Option]) -> Option:
        best = chosen = options[0]
        for option in options[1:]:
            if option.key >= chosen.key:
                continue
            if weight and best.lowest is not None and option.lowest is not None \
                    and option.lowest - best.lowest < weight * option.certainty:
                continue
            chosen = option
        return chosen
    return choose


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--theta", default="best")
    ap.add_argument("--beam", type=int, default=1000)
    ap.add_argument("--alternatives", type=int, default=3)
    ap.add_argument("--weights", default="0.1,0.3,1,3")
    ap.add_argument("--limit", type=int, default=None, help="only the first N dev sentences")
    args = ap.parse_args(argv)
    theta = args.theta if args.theta == "best" else float(args.theta)
    # max-min: the rule below ranks by its key, as the search did when this was measured (docs/tagger.md);
    # benchmarks/tag_chooser.py measures the taggings under either aggregator
    parser = Parser.from_db(args.db, theta=theta, beam=args.beam, aggregator="maxmin")
    tagger = parser.tagger
    if not isinstance(tagger, CrfTagger):
        sys.exit(f"{args.db}: its stored tagger is not the CRF (no marginals, no alternatives)")
    gold = dev_trees(args.db)[:args.limit]
    params = EvalbParams(max_errors=len(gold))
    start = time.process_time()
    gold_parses, options = [], []
    for tree in gold:
        tagged = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
        gold_parses.append(parser.parse_tagged(tagged).tree)
        options.append(parse_options(parser, tagger, [w for w, _ in tagged], args.alternatives))
    seconds = time.process_time() - start

    short = [i for i, tree in enumerate(gold) if sentence_length(tree) <= 15]

    def row(name: str, trees: list[Tree], switched: int | None = None) -> None:
        result = evaluate(gold, trees, params).all
        cells = [f"{result.f1:.2f}", f"{result.valid:,}"]
        if len(short) < len(gold):  # an all-length dev set: its sentences of at most 15 words too
            subset = evaluate([gold[i] for i in short], [trees[i] for i in short], params).all
            cells.append(f"{subset.f1:.2f}")
        cells.append("" if switched is None else f"{switched:,}")
        print(f"| {name} | {' | '.join(cells)} |", flush=True)

    print(f"{args.db.name} at theta {args.theta}, beam {args.beam}, {len(gold):,} stored dev sentences, "
          f"up to {args.alternatives} alternatives ({sum(map(len, options)) / len(options):.2f} taggings per "
          f"sentence); parsed in {seconds:.0f} CPU s\n")
    extra = " F1 <= 15 words |" if len(short) < len(gold) else ""
    print(f"| taggings chosen by | F1 | scored |{extra} sentences not on the best tagging |")
    print("|---|---|---|---|" + ("---|" if extra else ""))
    row("gold tags", gold_parses)
    row("the best tagging alone", [o[0].tree for o in options], 0)
    weights = [0.0, *(float(w) for w in args.weights.split(",") if w.strip())]
    for weight in weights:
        choose = parsers_rule(weight)
        picks = [choose(o) for o in options]
        name = f"the parser's rule, tagger weight {weight:g}" if weight else "the parser's rule (the default)"
        row(name, [p.tree for p in picks], sum(p is not o[0] for p, o in zip(picks, options)))
    oracle = [max(o, key=lambda option: (sentence_f1(g, option.tree, params), -o.index(option)))
              for g, o in zip(gold, options)]
    row("oracle: the tagging with the best sentence F1", [p.tree for p in oracle],
        sum(p is not o[0] for p, o in zip(oracle, options)))


if __name__ == "__main__":
    main()
