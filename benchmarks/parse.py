"""Parse speed of clparse on GUM dev (<= 15 words), one core, gold tags, beside a treebank PCFG.

Usage: python benchmarks/parse.py --theta THETA|best [--db benchmarks/out/gum.sqlite] [--sentences N]
                                  [--beams 1,1000] [--max-pops 10000] [--all-lengths] [--no-pcfg]

For each beam: the parser is rebuilt at Θ̂ from the database, warmed up on one sentence (numba
compiles on first use), then every dev gold tree stored in the database (<= 15 words) is parsed
from its gold tagged words with ``Parser.parse_tagged``. Timed (time.perf_counter): the parse
calls only, i.e. clparse's own preprocessing, the search and putting set-aside tokens back.
Words are every input token (punctuation included). Scores are EVALB (clparse's scorer, default
parameters) against the stored gold trees, exactly as calibration scores them.

Beside it, on the same sentences: the treebank PCFG of benchmarks/pcfg.py (GUM train <= 15 words,
horizontal Markov order 1, gold tags, exact Viterbi CKY). It parses the preprocessed tag sequence
(timed: CKY and debinarization; words are the preprocessed tokens) and is scored twice: against the
preprocessed gold trees, and with the set-aside tokens put back as clparse does, against the same
gold trees as clparse (the comparable figure).

With ``--all-lengths`` the sentences are every GUM dev tree (read from ../shared, 1,575 sentences up
to 100+ words) instead of the stored <= 15-word dev split; the model is the same. Each clparse row
also counts the sentences whose search reached --max-pops and was completed greedily.

Goals (printed beside, never asserted): >= 200 sentences/s greedy (beam 1), >= 20 at beam 1000 (on
the <= 15-word dev set).
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from collections import Counter
from pathlib import Path

from clparse.calibrate.run import dev_trees
from clparse.evaluate import EvalbParams, evaluate
from clparse.evaluate.evalb import Totals
from clparse.parser import Parser
from clparse.preprocess import PreprocessConfig, preprocess_tree
from clparse.read import Tree, read_trees
from clparse.search.restore import restore_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pcfg import GUM, load_gum, parse_timed, train_pcfg

GOALS = {1: 200.0, 1000: 20.0}  # sentences/s
HEADER = (f"{'':<22}{'sentences':>10}{'words':>8}{'seconds':>9}{'sent/s':>9}{'words/s':>9}"
          f"{'F1':>7}{'recall':>8}{'prec.':>7}{'fallbacks':>10}  goal")


def row(name: str, sentences: int, words: int, seconds: float, scores: Totals, fallbacks: int,
        goal: float | None) -> str:
    rate = sentences / seconds
    verdict = "" if goal is None else f">= {goal:g} sent/s: {'met' if rate >= goal else 'NOT met'}"
    return (f"{name:<22}{sentences:>10,}{words:>8,}{seconds:>9.2f}{rate:>9.1f}{words / seconds:>9,.0f}"
            f"{scores.f1:>7.2f}{scores.recall:>8.2f}{scores.precision:>7.2f}{fallbacks:>10,}  {verdict}")


def run_clparse(parser: Parser, gold: list[Tree], goals: dict[int, float]) -> str:
    """Parse the gold tagged words; one table row (timing excludes loading and the warm-up)."""
    inputs = [[(w, t) for w, t in tree.tagged_words() if t != "-NONE-"] for tree in gold]
    parser.parse_tagged(inputs[0])  # warm-up: numba compiles on first use
    start = time.perf_counter()
    results = [parser.parse_tagged(tagged) for tagged in inputs]
    seconds = time.perf_counter() - start
    reasons = Counter(r.fallback for r in results if r.fallback is not None)
    scores = evaluate(gold, [r.tree for r in results], EvalbParams()).all
    beam = parser.options.beam
    line = row(f"clparse beam {beam}", len(gold), sum(map(len, inputs)), seconds, scores,
               sum(reasons.values()), goals.get(beam))
    completed = sum(r.completion is not None for r in results)
    line += (f"\n{'':<22}{sum(r.pops for r in results) / len(results):,.0f} pops per sentence on average; "
             f"{completed:,} completed greedily at the pop cap")
    return line + "".join(f"\n{'':<22}fallback: {why} x {n}" for why, n in reasons.most_common())


def run_pcfg(gold: list[Tree], preprocess: PreprocessConfig) -> list[str]:
    """Train the PCFG on GUM train <= 15 words and parse the same sentences; rows against both kinds of
    gold."""
    start = time.perf_counter()
    grammar = train_pcfg(p.tree for p in load_gum("train", 15))
    trained = time.perf_counter() - start
    kept = [(g, p) for g in gold if (p := preprocess_tree(g, preprocess)) is not None]
    outputs, failures, seconds = parse_timed(grammar, [p.tree for _, p in kept])
    restored = []
    for (_, p), tree in zip(kept, outputs):
        removed = {token.index for token in p.removed}
        positions = [i for i in range(len(p.original_words)) if i not in removed]
        restored.append(restore_tokens(tree, positions, p.removed))
    words_total = sum(len(p.tree) for _, p in kept)
    params = EvalbParams()
    return [
        (f"PCFG: GUM train <= 15 words, {grammar.size:,} symbols, {len(grammar.parent):,} binary rules "
         f"(trained in {trained:.1f} s); {len(gold) - len(kept)} sentences empty after preprocessing, left "
         "out"),
        row("PCFG vs preprocessed", len(kept), words_total, seconds,
            evaluate([p.tree for _, p in kept], outputs, params).all, failures, None),
        row("PCFG vs stored gold", len(kept), words_total, seconds,
            evaluate([g for g, _ in kept], restored, params).all, failures, None),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, default=Path("benchmarks/out/gum.sqlite"))
    parser.add_argument("--theta", required=True, help='a number, or "best" (the calibrated best)')
    parser.add_argument("--sentences", type=int, default=None,
                        help="the first N dev sentences (default: all)")
    parser.add_argument("--beams", default="1,1000", help="comma-separated beam widths")
    parser.add_argument("--max-pops", type=int, default=10_000)
    parser.add_argument("--all-lengths", action="store_true",
                        help="every GUM dev sentence, not the stored <= 15")
    parser.add_argument("--no-pcfg", action="store_true", help="leave the PCFG rows out")
    args = parser.parse_args()
    theta: float | str = args.theta if args.theta == "best" else float(args.theta)
    beams = [int(b) for b in args.beams.split(",")]
    if args.all_lengths:
        gold = [t for path in sorted(glob.glob(str(GUM / "dev" / "*.ptb"))) for t in read_trees(path)]
        gold = gold[:args.sentences]
        which = "all lengths, read from ../shared"
    else:
        gold = dev_trees(args.db)[:args.sentences]
        which = "<= 15 words, as stored"
    print(f"{args.db}: Θ̂ = {theta}, {len(gold):,} dev sentences ({which}), gold tags, "
          f"max_pops {args.max_pops:,}; one process, single-threaded")
    print(HEADER)
    preprocess = None
    for beam in beams:
        clparse = Parser.from_db(args.db, theta=theta, beam=beam, max_pops=args.max_pops)
        preprocess = clparse.preprocess
        print(run_clparse(clparse, gold, {} if args.all_lengths else GOALS), flush=True)  # goals: <= 15 words
    if preprocess is not None and not args.no_pcfg:
        print("\n".join(run_pcfg(gold, preprocess)))
    print("words: clparse counts every input token, the PCFG the preprocessed ones (quotation marks and "
          "outermost punctuation set aside)")


if __name__ == "__main__":
    main()
