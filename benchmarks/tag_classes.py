"""Issue 29 pilot: a parser that is told where the tagger is unsure (ambiguity classes), GUM dev <= 15.

Where the tagger's best tag has a marginal probability below ``--tau``, the leaf gets an *ambiguity
class* instead of one tag: its two most probable tags, sorted and joined (``JJ|NN``). Punctuation
never joins a class (the evaluation sets punctuation aside by its tag). The parser learns from
training trees whose leaves carry a jackknifed tagger's best tag (10 interleaved folds, trained on the
other folds of every GUM train sentence), or its class where it was unsure; it parses dev text whose
leaves carry the stored CRF's best tag, or its class where that CRF is unsure. So it meets at training
time the tags and the doubts it meets on raw text. (Confident leaves keep the *jackknifed* tag, not
the gold one: a variant with gold tags where the tagger is sure is not measured.)

    python benchmarks/tag_classes.py --reference RUN_DIR --out DIR [--tau 0.9] [--jobs 2]

``RUN_DIR`` is a finished ``benchmarks/tagging.py --parsers --runs gold`` directory: its
``gold.sqlite`` gives the stored CRF (the tagger of its raw-token rows), its ``dev.gold`` the dev
trees and its ``row-*.parsed`` the rows this run is compared with:

* row C: the class run, dev leaves tagged with the CRF's best tag or its class (against row 2, the
  gold-tag run on the CRF's best tagging, and row 2', that run from raw tokens with 3 taggings);
* row C': the class run on gold tags (against row 1, the gold-tag run on gold tags).

With ``--all-lengths COMPARE_DB@THETA`` the class run is every length, in the recipe of the run it is
compared with (``prepare --max-words 0 --seed 1``, ``train --until-theta THETA --sample 100000``: the
seed1 run of docs/combination.md), and both are parsed at that Θ̂ at the default search (beam 100) on all
of GUM dev, with no calibration:

* rows G and B: the compared run on gold tags, and on the CRF's best tagging;
* rows GC and C: the class run on gold tags, and on the CRF's best tag or its class.

Every step is cached in ``DIR`` (a rerun resumes); the commands run are in ``DIR/commands.log``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from clparse.atomic_write import write_whole
from clparse.preprocess.transforms import PUNCTUATION_TAGS
from clparse.read import read_trees
from clparse.read.ptb import format_tree
from clparse.tag.crf import CrfTagger
from clparse.tag.jackknife import fold_of, retag
from clparse.tag.stored import load_tagger

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tagging import GUM, PREPARE, TRAIN, gold_tags, read_tagged, run_clparse, score  # noqa: E402

Sentence = list[tuple[str, str]]
Doubt = tuple[str, float, str]  # (best tag, its marginal probability, the most probable other tag)
FOLDS = 10
#: The run's own stored tagger is never used here (dev leaves are tagged by the reference run's CRF), and a
#: CRF over ambiguity classes (about 120 labels) trains for many minutes: the perceptron is quick.
OWN_TAGGER = ["--tagger", "perceptron"]


def write_text(path: Path, text: str) -> None:
    """``text`` into ``path``, whole or not at all (a rerun takes an existing file for finished)."""
    write_whole(path, lambda where: where.write_text(text, encoding="utf-8"))


def doubts(tagger: CrfTagger, words: Sequence[str]) -> list[Doubt]:
    """Each word's best tag (the tagger's own), its marginal, and the most probable other tag."""
    if not words:
        return []
    best = tagger.tag(words)
    out = []
    for tag, marginal in zip(best, tagger.marginals(words)):
        other = max((t for t in marginal if t != tag), key=lambda t: (marginal[t], t))
        out.append((tag, marginal[tag], other))
    return out


def leaf_tag(doubt: Doubt, tau: float) -> str:
    """The best tag, or the ambiguity class of the two most probable ones where the tagger is unsure."""
    tag, p, other = doubt
    if p >= tau or tag in PUNCTUATION_TAGS or other in PUNCTUATION_TAGS:
        return tag
    return "|".join(sorted((tag, other)))


def _fold(training: list[Sentence], held_out: list[list[str]]) -> list[list[Doubt]]:
    tagger = CrfTagger.train([s for s in training if s])
    return [doubts(tagger, words) for words in held_out]


def jackknifed_doubts(sentences: list[Sentence], jobs: int) -> list[list[Doubt]]:
    """Every training sentence's doubts, from a CRF trained on the other folds (as prepare's jackknife)."""
    count = len(sentences)
    assignment = [fold_of(i, count, FOLDS) for i in range(count)]
    work = [([s for s, f in zip(sentences, assignment) if f != k],
             [[w for w, _ in s] for s, f in zip(sentences, assignment) if f == k]) for k in range(FOLDS)]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(_fold, *zip(*work)))
    cursor = [0] * FOLDS
    out: list[list[Doubt]] = []
    for k in assignment:
        out.append(results[k][cursor[k]])
        cursor[k] += 1
    return out


def write_train(out: Path, tau: float, jobs: int) -> Path:
    """GUM train with the jackknifed best tags on the leaves, classes where unsure, one file per source
    file; the directory."""
    directory = out / f"train-tau{tau}"
    cache = out / "train-doubts.json"
    files = sorted((GUM / "train").glob("*.ptb"))
    trees = [(path.name, tree) for path in files for tree in read_trees(path)]
    sentences = gold_tags([tree for _, tree in trees])
    if not cache.exists():
        print(f"jackknifing the CRF's doubts over {len(sentences):,} sentences ...", file=sys.stderr,
              flush=True)
        write_text(cache, json.dumps(jackknifed_doubts(sentences, jobs)))
    found = [[tuple(d) for d in s] for s in json.loads(cache.read_text(encoding="utf-8"))]
    if not directory.exists():
        partial_dir = directory.with_name(directory.name + ".partial")
        partial_dir.mkdir(exist_ok=True)
        texts: dict[str, list[str]] = {}
        for (name, tree), sentence_doubts in zip(trees, found):
            tags = [leaf_tag(d, tau) for d in sentence_doubts]  # type: ignore[arg-type]
            texts.setdefault(name, []).append(format_tree(retag(tree, tags)))
        for name, lines in texts.items():
            (partial_dir / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        partial_dir.rename(directory)
    classes = sum(leaf_tag(d, tau) != d[0] for s in found for d in s)  # type: ignore[arg-type]
    wrong = sum(d[0] != g for s, gs in zip(found, sentences) for d, (_, g) in zip(s, gs))
    print(f"training leaves: {sum(map(len, found)):,}, classes {classes:,}, "
          f"jackknifed best tags wrong {wrong:,}", file=sys.stderr, flush=True)
    return directory


def write_dev_input(reference: Path, tokens: Path, tau: float, classes: Path,
                    best: Path | None = None) -> None:
    """``tokens`` (one sentence a line) tagged by the reference run's stored CRF: its best tag, or its class
    where it is unsure, into ``classes``; the best tags alone into ``best``, if given."""
    if classes.exists() and (best is None or best.exists()):
        return
    tagger = load_tagger(reference / "gold.sqlite")
    if not isinstance(tagger, CrfTagger):
        raise SystemExit(f"{reference}/gold.sqlite: its stored tagger is not the CRF alone")
    best_lines, class_lines = [], []
    for line in tokens.read_text(encoding="utf-8").splitlines():
        words = line.split()
        found = doubts(tagger, words)
        best_lines.append(" ".join(f"{w}/{d[0]}" for w, d in zip(words, found)) + "\n")
        class_lines.append(" ".join(f"{w}/{leaf_tag(d, tau)}" for w, d in zip(words, found)) + "\n")
    if best is not None:
        write_text(best, "".join(best_lines))
    write_text(classes, "".join(class_lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tau", type=float, default=0.9)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--until-theta", type=float, default=1.0)
    ap.add_argument("--beam", type=int, default=1000)
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--all-lengths", metavar="COMPARE_DB@THETA")
    args = ap.parse_args()
    if args.all_lengths:
        all_lengths(args)
        return
    out, ref = args.out, args.reference
    out.mkdir(parents=True, exist_ok=True)
    train = write_train(out, args.tau, args.jobs)
    db = out / "classes.sqlite"
    run_clparse(out, "prepare", "--db", str(db), "--train", str(train), "--dev", str(GUM / "dev"), *PREPARE,
                *OWN_TAGGER)
    run_clparse(out, "train", "--db", str(db), "--until-theta", str(args.until_theta),
                "--jobs", str(args.jobs), *TRAIN)
    run_clparse(out, "calibrate", "--db", str(db), "--beam", str(args.beam))
    dev_input = out / f"dev.classes-tau{args.tau}.tagged"
    write_dev_input(ref, ref / "dev.tokens", args.tau, dev_input)
    gold = ref / "dev.gold"
    reference_tags = gold_tags(list(read_trees(gold)))
    tagged = read_tagged(dev_input)
    covered = sum(g in t.split("|") for a, b in zip(reference_tags, tagged) for (_, g), (_, t) in zip(a, b))
    print(f"dev leaves: {sum(map(len, tagged)):,}, classes {sum('|' in t for s in tagged for _, t in s):,}, "
          f"gold tag in the leaf's tag or class {covered:,}", file=sys.stderr)
    rows = {"C": (["--input-format", "tagged"], dev_input), "C'": (["--input-format", "ptb"], gold)}
    results: dict[str, object] = {}
    for row, (fmt, source) in rows.items():
        parsed = out / f"row-{row.replace(chr(39), 'p')}.parsed"
        if not parsed.exists():
            run_clparse(out, "parse", "--db", str(db), "--theta", "best", "--beam", str(args.beam), *fmt,
                        str(source), output=parsed)
        results[f"score.{row}"] = score(argparse.Namespace(out=out), gold, parsed)
    for a, b in (("row-C", "row-2"), ("row-C", "row-2p"), ("row-Cp", "row-1"), ("row-C", "row-Cp")):
        first = out / f"{a}.parsed"
        second = (ref if b in ("row-2", "row-2p", "row-1") else out) / f"{b}.parsed"
        results[f"compare.{a}.{b}"] = json.loads(run_clparse(
            out, "compare", str(gold), str(first), str(second), "--trials", str(args.trials), "--json"))
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(json.dumps(results, indent=1))


def all_lengths(args: argparse.Namespace) -> None:
    out, ref = args.out, args.reference
    compare_db, _, theta = args.all_lengths.rpartition("@")
    out.mkdir(parents=True, exist_ok=True)
    train = write_train(out, args.tau, args.jobs)
    db = out / "classes-all.sqlite"
    run_clparse(out, "prepare", "--db", str(db), "--train", str(train), "--dev", str(GUM / "dev"),
                "--max-words", "0", "--seed", "1", *OWN_TAGGER)
    run_clparse(out, "train", "--db", str(db), "--until-theta", theta, "--jobs", str(args.jobs),
                "--sample", "100000")
    from clparse.calibrate.run import dev_trees

    trees = dev_trees(compare_db)
    gold, tokens = out / "devall.gold", out / "devall.tokens"
    if not gold.exists():
        write_text(gold, "".join(format_tree(t) + "\n" for t in trees))
    if not tokens.exists():
        write_text(tokens, "".join(" ".join(w for w, _ in s) + "\n" for s in gold_tags(trees)))
    inputs = {"best": out / "devall.best.tagged", "classes": out / f"devall.classes-tau{args.tau}.tagged"}
    write_dev_input(ref, tokens, args.tau, inputs["classes"], inputs["best"])
    rows = {"G": (compare_db, "ptb", gold), "B": (compare_db, "tagged", inputs["best"]),
            "GC": (str(db), "ptb", gold), "C": (str(db), "tagged", inputs["classes"])}
    results: dict[str, object] = {}
    for row, (parser_db, fmt, source) in rows.items():
        parsed = out / f"all-{row}.parsed"
        if not parsed.exists():
            run_clparse(out, "parse", "--db", parser_db, "--theta", theta, "--input-format", fmt, str(source),
                        output=parsed)
        results[f"score.{row}"] = score(argparse.Namespace(out=out), gold, parsed)
        print(row, results[f"score.{row}"], file=sys.stderr, flush=True)
    for a, b in (("C", "B"), ("GC", "G"), ("C", "GC"), ("B", "G")):
        results[f"compare.{a}.{b}"] = json.loads(run_clparse(
            out, "compare", str(gold), str(out / f"all-{a}.parsed"), str(out / f"all-{b}.parsed"),
            "--trials", str(args.trials), "--json"))
    (out / "results-all.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
