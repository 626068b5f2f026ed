"""Tags chosen by sentence structure: the stored tagger's probabilities joined to a treebank PCFG (issue 29).

Usage: python benchmarks/pcfg_tags.py --db RUN.sqlite [--weights 0.25,0.5,1,2,4] [--prior] [--parent]
                                      [--floor 0.001] [--top 4] [--limit N] [--write DIR] [--jobs 2]
       python benchmarks/pcfg_tags.py --db RUN.sqlite --check 300

The question: the verb <-> noun/adjective tag errors that cost the raw-token parse most need the sentence's
structure (benchmarks/tag_error_cost.py). A PCFG over tags scores whole tag sequences by the phrases they
can form; its Viterbi parse over a *lattice* of each word's likely tags (every tag the stored tagger gives
at least ``--floor`` probability, at most ``--top`` of them) chooses a tagging by structure and tagger
together: a word's tag t scores ``w * log p(t)`` at the chart's bottom (``w * log(p(t) / P(t))`` with
``--prior``, P(t) the tag's share of the preprocessed GUM train's tags), the grammar's rules score the
rest. ``w`` large gives back the tagger's own best tags (with ``--prior``: the best p(t) / P(t), printed as
the row "prior alone"); small lets the grammar overrule it.

The grammar is benchmarks/pcfg.py's (NLTK's Markov order 1 binarization, unary chains joined), trained on
GUM train preprocessed as clparse does, every length; ``--parent`` adds parent annotation to the phrase
labels (vertical Markov order 2; tags stay as they are). Tokens clparse's preprocessing sets aside
(quotes, and punctuation at a sentence's edges, decided by the tagger's best tag) keep the tagger's tag;
the rest, punctuation inside the sentence too, are chosen from the lattice.

Prints, for every ``w``: tag accuracy on all tokens of the dev sentences stored in the database, and
errors split as benchmarks/tag_error_cost.py splits them (a verb taken for another class or the reverse,
inside a class, across classes). ``--write DIR`` writes each weight's tagging of every sentence as
``clparse parse --input-format tagged`` reads it (``word/TAG``, one sentence a line). Nothing is asserted;
results in docs/tagger.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcfg import NEG, Grammar, backtrace, chart, load_gum, train_pcfg  # noqa: E402
from tag_error_cost import ACROSS, INSIDE, VERB, kind  # noqa: E402
from tagging import gold_tags  # noqa: E402

from clparse.calibrate.run import dev_trees  # noqa: E402
from clparse.preprocess.pipeline import preprocess_tree  # noqa: E402
from clparse.preprocess.transforms import PUNCTUATION_TAGS  # noqa: E402
from clparse.read import Tree  # noqa: E402
from clparse.tag.stored import load_tagger  # noqa: E402

_GRAMMAR: Grammar | None = None


def lattice_viterbi(grammar: Grammar, candidates: Sequence[dict[int, float]]) -> list[int] | None:
    """The tag (symbol id) at each position of the best ROOT parse over the lattice, or None (no parse).

    ``candidates[i]`` maps a tag symbol to its bottom score (benchmarks/pcfg.py's ``chart``). The tags are
    the best (binarized) tree's preterminals.
    """
    n = len(candidates)
    bottom, top = chart(grammar, candidates)
    if top[0, n, grammar.root] == NEG:
        return None
    tree = backtrace(grammar, bottom, top, 0, n, grammar.root, [""] * n)
    return [grammar.index[tag] for tag in tree.tags()]


def tagged_score(grammar: Grammar, tags: Sequence[int]) -> float:
    """The best parse's log probability for a tag sequence (NEG if none)."""
    return float(chart(grammar, [{t: 0.0} for t in tags])[1][0, len(tags), grammar.root])


def check_lattice(grammar: Grammar, trials: int, seed: int = 1) -> int:
    """Brute force against :func:`chart` over a lattice and :func:`lattice_viterbi` on ``trials`` random
    lattices of 1 to 6 words with 1 to 3 tags a word: the best, over every combination of one tag a word,
    of the tagged sentence's Viterbi score (its tags scoring 0, as benchmarks/pcfg.py parses gold tags) plus
    its tags' scores must equal the lattice's best score, and the tags read back must be offered ones that
    score that much. Returns how many lattices had a parse; raises AssertionError on a difference."""
    import itertools
    import random

    rng = random.Random(seed)
    tags = sorted(t for t in grammar.tags if t not in PUNCTUATION_TAGS)
    parsed = 0
    for trial in range(trials):
        n = rng.randint(1, 6)
        lattice = [{grammar.index[t]: -3 * rng.random() for t in rng.sample(tags, rng.randint(1, 3))}
                   for _ in range(n)]
        best = chart(grammar, lattice)[1][0, n, grammar.root]
        brute = max(tagged_score(grammar, [s for s, _ in combo]) + sum(v for _, v in combo)
                    for combo in itertools.product(*[list(c.items()) for c in lattice]))
        assert best == brute or np.isclose(best, brute), f"lattice {trial}: {best} against {brute}"
        chosen = lattice_viterbi(grammar, lattice)
        if chosen is None:
            assert best == NEG, f"lattice {trial}: no tags read back from a parse"
            continue
        offered = all(s in lattice[i] for i, s in enumerate(chosen))
        assert offered, f"lattice {trial}: a tag read back that was not offered"
        again = tagged_score(grammar, chosen) + sum(lattice[i][s] for i, s in enumerate(chosen))
        assert np.isclose(again, best), f"lattice {trial}: the tags read back score {again}, not {best}"
        parsed += 1
    return parsed


def tag_labels(tagger: Any) -> list[str]:
    """The stored tagger's tags, in the column order of :func:`probabilities`."""
    return list(tagger.labels())


def probabilities(tagger: Any, words: Sequence[str]) -> np.ndarray:
    """The stored tagger's tag probabilities, a row a word: the CRF and net's together, or the CRF's
    marginals when it has no net."""
    if hasattr(tagger, "probabilities"):
        return np.asarray(tagger.probabilities(words))
    labels = tag_labels(tagger)
    return np.array([[m[label] for label in labels] for m in tagger.marginals(words)])


def allowed(tag: str) -> bool:
    """A tag the lattice may hold: one the grammar knows (punctuation inside a sentence is in its trees)."""
    return _GRAMMAR is not None and tag in _GRAMMAR.tags


def prior_alone(best: list[str], rows: list[np.ndarray], kept: list[int], floor: float, top_k: int
                ) -> list[str]:
    """What ``--prior`` does without the grammar: at each kept position the offered tag with the best
    log(p(t) / P(t)) (the limit of a large w)."""
    tags = list(best)
    for i in kept:
        order = np.argsort(-rows[i])[:top_k]
        offered = [k for k in order if rows[i][k] >= floor and allowed(LABELS[k])]
        if offered:
            k = max(offered, key=lambda k: (float(np.log(rows[i][k])) - PRIOR.get(LABELS[k], 0.0), -k))
            tags[i] = LABELS[k]
    return tags


def _init(grammar: Grammar) -> None:
    global _GRAMMAR
    _GRAMMAR = grammar


def choose(job: tuple[list[str], list[np.ndarray], list[int], Sequence[float], float, int]
           ) -> list[list[str]]:
    """Each weight's tagging of one sentence: (best tags, per-token (labels, probabilities) rows, kept
    positions, weights, floor, top)."""
    best, rows, kept, weights, floor, top_k = job
    grammar = _GRAMMAR
    assert grammar is not None
    out = []
    for weight in weights:
        candidates = []
        for i in kept:
            probs = rows[i]
            order = np.argsort(-probs)[:top_k]
            scores = {grammar.index[LABELS[k]]: weight * (float(np.log(probs[k])) - PRIOR.get(LABELS[k], 0.0))
                      for k in order if probs[k] >= floor and allowed(LABELS[k])}
            if not scores and best[i] in grammar.tags:
                scores = {grammar.index[best[i]]: 0.0}
            candidates.append(scores)
        chosen = lattice_viterbi(grammar, candidates) if kept and all(candidates) else None
        tags = list(best)
        if chosen is not None:
            for i, symbol in zip(kept, chosen):
                tags[i] = grammar.symbols[symbol]
        out.append(tags)
    return out


LABELS: list[str] = []
PRIOR: dict[str, float] = {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--weights", default="0.25,0.5,1,2,4")
    ap.add_argument("--floor", type=float, default=1e-3)
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--parent", action="store_true", help="parent annotation on phrase labels")
    ap.add_argument("--prior", action="store_true",
                    help="score a tag by w * log(p(t) / P(t)), P(t) its share of the training tags (Bayes' "
                         "P(w | t) up to a factor of the word)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--check", type=int, default=0, metavar="N",
                    help="check the lattice Viterbi against brute force on N random lattices (300: a "
                         "minute or two), then stop")
    args = ap.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    start = time.perf_counter()
    train = load_gum("train", None)
    grammar = train_pcfg((p.tree for p in train), parent=args.parent)
    counts = Counter(t for p in train for t in p.tree.tags())
    total_tags = sum(counts.values())
    global PRIOR
    PRIOR = {t: (np.log(c / total_tags) if args.prior else 0.0) for t, c in counts.items()}
    print(f"grammar: {grammar.size:,} symbols, {len(grammar.parent):,} binary rules "
          f"({time.perf_counter() - start:.0f} s)", flush=True)
    if args.check:
        parsed = check_lattice(grammar, args.check)
        print(f"the lattice Viterbi equals brute force on all {args.check} random lattices "
              f"({parsed} with a parse)")
        return
    tagger: Any = load_tagger(args.db)  # the CRF, or the CRF and its net: both give probabilities
    if tagger is None:
        raise SystemExit(f"{args.db}: no stored tagger")
    global LABELS
    LABELS = tag_labels(tagger)
    gold = gold_tags(dev_trees(args.db))[:args.limit]
    jobs = []
    start = time.perf_counter()
    for sentence in gold:
        words = [w for w, _ in sentence]
        probs = probabilities(tagger, words)
        best = [LABELS[k] for k in probs.argmax(axis=1)]
        flat = Tree("S", [Tree.preterminal(t, w) for w, t in zip(words, best)])
        prepared = preprocess_tree(flat)
        removed = {token.index for token in prepared.removed} if prepared is not None else None
        kept = [i for i in range(len(words)) if removed is not None and i not in removed]
        jobs.append((best, list(probs), kept, weights, args.floor, args.top))
    print(f"tagged {len(gold):,} sentences in {time.perf_counter() - start:.0f} s", flush=True)
    start = time.perf_counter()
    _init(grammar)  # the workers are forked (on every platform): they inherit the grammar, LABELS and PRIOR
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        results = list(pool.map(choose, jobs, chunksize=4))
    print(f"lattice parses in {time.perf_counter() - start:.0f} s", flush=True)
    rows = [("tagger", [job[0] for job in jobs])]
    if args.prior:
        alone = [prior_alone(best, probs, kept, args.floor, args.top) for best, probs, kept, *_ in jobs]
        rows.append(("prior alone (no grammar)", alone))
    rows += [(f"w = {w:g}", [r[k] for r in results]) for k, w in enumerate(weights)]
    print("| tagging | accuracy | errors | verb <-> other | inside a class | across classes | fixed / made |")
    print("|---|---|---|---|---|---|---|")
    base = rows[0][1]
    for name, taggings in rows:
        errors: Counter[str] = Counter()
        fixed = made = total = 0
        for sentence, tags, first in zip(gold, taggings, base):
            for (_, g), t, b in zip(sentence, tags, first):
                total += 1
                if g != t:
                    errors[kind(g, t)] += 1
                fixed += g == t and g != b
                made += g != t and g == b
        n = sum(errors.values())
        print(f"| {name} | {100 * (total - n) / total:.2f} % | {n} | {errors[VERB]} | {errors[INSIDE]} | "
              f"{errors[ACROSS]} | {fixed} / {made} |", flush=True)
        if args.write is not None:
            args.write.mkdir(parents=True, exist_ok=True)
            out = args.write / (name.replace(" ", "").replace("=", "-") + ".tagged")
            out.write_text("".join(" ".join(f"{w}/{t}" for (w, _), t in zip(s, tags)) + "\n"
                                   for s, tags in zip(gold, taggings)), encoding="utf-8")


if __name__ == "__main__":
    main()
