"""POS-tagger options on GUM: each trained on GUM train, measured on GUM dev.

Usage: python benchmarks/tagging.py [--options perceptron,crf] [--c1 C1] [--c2 C2] [--iterations 150]
                                    [--feature-set 3] [--passes 2] [--limit N] [--save DIR]
                                    [--confusions N]

Options: ``perceptron`` is clparse.tag.perceptron.Tagger as the pipeline trains it today (NLTK's
averaged perceptron, 5 iterations, seed 0); ``crf`` is clparse.tag.crf.CrfTagger with the given
settings (defaults: the stored tagger's; ``--feature-set 1`` is the feature set before issue 29,
``2`` the one before feature set 3). Both
learn from every tree of GUM train (all lengths, the tagger is not length-filtered), tokens without
``-NONE-``, files in sorted name order.

Columns: token accuracy on all of GUM dev (1,575 sentences) and on dev <= 15 words, where length
counts words as the parser's length filter does (``clparse.preprocess.sentence_length``: neither
punctuation nor ``-NONE-``), the subset the parser is scored on; accuracy on unknown words (dev
tokens whose exact, case-sensitive form never occurs in train); training time; tagging speed,
one sentence per ``tag()`` call as the parser calls it (input checks and, for the CRF, Python
feature extraction included), best of ``--passes`` passes over dev; the time to load the stored
model (``from_json`` / ``from_bytes``, checks included); the stored model's size (JSON text as
UTF-8, or the CRF's bytes). Times are wall / CPU seconds of this process: on a shared machine CPU
time is the steadier figure. Prints a Markdown table; ``--save DIR`` also writes each stored model
(``DIR/perceptron.json``, ``DIR/crf.bin``); ``--confusions N`` a table of each option's N commonest
errors (gold tag, predicted tag), with how many of them fell on unknown words. Needs ../shared (the
GUM treebank).

Parsing from raw tokens with a given tagger (``--raw-parse DB``, docs/tagger.md): the database's
parser (``Parser.from_db(DB, theta=--theta, beam=--beam)``; DB is only read, but must be at the
current schema: parse a copy) parses every GUM dev sentence with gold tags and with each CRF model
of ``--models a.bin,b.bin`` as ``parser.tagger``; EVALB F1 on dev <= 15 and all lengths, as EVALB
scores it and with the gold tags put back on the parse's leaves (so every sentence is scored):

    python benchmarks/tagging.py --raw-parse COPY.sqlite --theta 6 --beam 1 --models old.bin,new.bin
                                 [--tag-alternatives 0]

The parser table (``--parsers``): GUM dev <= 15 words (909 sentences), beam 1000, every run with
the settings the ablation kept (docs/accuracy.md: ``prepare --constraints`` and the four richer
templates, ``train --until-theta 2 --smoothing 0.5``), each step through the command line:

    python benchmarks/tagging.py --parsers --out DIR [--gold-db PATH] [--runs gold,jackknife,both]
                                 [--until-theta 2] [--jobs 2] [--beam 1000] [--folds 10] [--trials 10000]

1. gold-tag training (``DIR/gold.sqlite``, ``prepare --train-tags gold``), dev parsed with gold tags;
2. the same model, dev parsed with the CRF's tags (a ``CrfTagger`` with default settings trained
   here on every tree of GUM train, as ``prepare`` trains the run's tagger; ``DIR/crf.bin``, dev
   tagged into ``DIR/dev.crf.tagged`` and parsed with ``--input-format tagged``), and with the
   tags of the database's own stored tagger (raw tokens: the CRF for a database made today, the
   NLTK perceptron for one made before the CRF);
3. jackknifed training (``DIR/jackknife.sqlite``, ``prepare --train-tags jackknife --folds 10``,
   CRF), calibrated with the tagger's tags (``calibrate``'s default for a jackknifed run), dev
   parsed from raw tokens (the stored CRF tags them), and also with gold tags;
4. gold trees plus jackknifed copies (``DIR/both.sqlite``, ``prepare --train-tags both --folds 10``):
   a copy of each tree whose jackknifed tags differ; calibrated with gold tags, dev parsed from raw
   tokens (row 4) and with gold tags (row 4').

Θ̂ is calibrated on dev (``calibrate --beam``, default grid) with the run's default tags: gold for 1-2
and 4, the tagger's for 3; every parse is at ``--theta best``. ``--gold-db PATH`` starts row 1-2's database
as a copy (``clparse backup``) of an existing one instead of preparing it; ``prepare`` is still run
on it with this table's options, so a database prepared with other settings is refused (and one
made by an older clparse is upgraded first by ``clparse init``). Tag accuracy counts every token
of dev <= 15 (punctuation included, ``-NONE-`` not) against the gold trees, and also the
jackknifed training tags against the gold ones. Prepare minutes are the run's stored preparation
time (the jackknife taggers included) plus the stored tagger's training; training minutes the
summed iteration times; calibration minutes the summed Θ̂ points. Paired tests: ``clparse compare``
(stratified shuffling, ``--trials``) on F1. Every step resumes (a database is prepared once,
training and calibration continue, tag and parse files are redone only if missing, written under
a temporary name first); each figure is written into ``DIR/results.md`` as it comes, every
command run is logged in ``DIR/commands.log``, and the whole table is printed at the end.

Last run (frozen at 26aa57f, 2 shared cores; row 1-2's database the ablation's row 5, whose stored
tagger is the perceptron): F1 1. 86.70, 2. 84.97 (CRF tags, 96.23 %; perceptron tags 94.61 %:
83.10), 3. 83.10 (with gold tags 84.87); best Θ̂ the grid's floor (2.00) in both runs. Jackknifed
training is *worse* than gold-tag training on the same CRF tags (-1.87 F1, p = 0.0009), and with
gold tags too (-1.83, p = 0.003); its training tags are 94.41 % right (folds 90.3-96.3 %), against
96.23 % for the tags it meets on dev.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from clparse.preprocess import sentence_length
from clparse.read import read_trees
from clparse.read.ptb import format_tree, parse_tree
from clparse.tag.crf import DEFAULT_ITERATIONS, FEATURE_SET, FEATURE_SETS, CrfTagger
from clparse.tag.evaluate import TagsWords
from clparse.tag.perceptron import Tagger

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_digest import read_rows

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
        tagger = CrfTagger.train(data, c1=args.c1, c2=args.c2, iterations=args.iterations,
                                 feature_set=args.feature_set)
        return tagger, tagger.to_bytes()

    return {
        "perceptron": Option("NLTK perceptron, 5 it. (today)", perceptron,
                             lambda stored: Tagger.from_json(stored.decode("utf-8"))),
        "crf": Option(f"CRF feature set {args.feature_set}, c1={'default' if args.c1 is None else args.c1} "
                      f"c2={'default' if args.c2 is None else args.c2}, {args.iterations} it.", crf,
                      CrfTagger.from_bytes),
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
            passes: int) -> tuple[dict[str, float], bytes, Counter[tuple[str, str, bool]]]:
    """Train, reload and tag dev; counts, times and size, the stored model, and the errors as
    (gold, predicted, unknown word) counts."""
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
    confusions: Counter[tuple[str, str, bool]] = Counter()
    for sentence, tags, length in zip(dev, predicted, dev_lengths):
        for (word, gold), guess in zip(sentence, tags):
            ok = guess == gold
            if not ok:
                confusions[gold, guess, word not in vocabulary] += 1
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
            "tokens_per_s_cpu": tokens / best_cpu, "bytes": float(len(stored))}, stored, confusions


def confusion_table(label: str, confusions: Counter[tuple[str, str, bool]], top: int) -> str:
    """The ``top`` commonest (gold, predicted) errors, each split into known and unknown words."""
    pairs: Counter[tuple[str, str]] = Counter()
    unknown: Counter[tuple[str, str]] = Counter()
    for (gold, guess, is_unknown), n in confusions.items():
        pairs[gold, guess] += n
        unknown[gold, guess] += n if is_unknown else 0
    errors = sum(pairs.values())
    lines = [f"\n{label}: the {top} commonest of {errors:,} errors "
             f"({sum(unknown.values()):,} on unknown words)\n",
             "| gold | tagged | errors | of them unknown words | share of errors |", "|---|---|---|---|---|"]
    lines += [f"| {gold} | {guess} | {n} | {unknown[gold, guess]} | {100 * n / errors:.1f} % |"
              for (gold, guess), n in sorted(pairs.items(), key=lambda item: (-item[1], item[0]))[:top]]
    return "\n".join(lines)


def percent(ok: float, total: float) -> str:
    return f"{100 * ok / total:.2f} %" if total else "-"


# ---------------------------------------------------------------------------------------------
# The parser table: gold-tag training vs jackknifed training, parsed with gold and predicted tags.

CLPARSE = [str(Path(sys.executable).with_name("clparse"))]
RICH = ["--template", "child-extra", "--template", "head-of-child", "--template", "context-exists",
        "--template", "length"]
PREPARE = ["--constraints", *RICH]  # the ablation's kept prepare settings (docs/accuracy.md)
TRAIN = ["--smoothing", "0.5"]  # and its kept train settings
RUNS = ("gold", "jackknife", "both")


def run_clparse(out: Path, *args: str, output: Path | None = None) -> str:
    """Run one clparse command (logged in ``out/commands.log``); its stdout, or write that to ``output``.

    ``output`` is written under a temporary name and renamed when the command succeeds, so an
    interrupted run never leaves a partial file that a resumed run would take for finished.
    """
    line = " ".join(CLPARSE + list(args)) + (f" > {output}" if output is not None else "")
    with open(out / "commands.log", "a") as log:
        log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")
    partial = output.with_name(output.name + ".partial") if output is not None else None
    with open(partial, "w") if partial is not None else open(os.devnull, "w") as sink:
        result = subprocess.run(CLPARSE + list(args), stdout=subprocess.PIPE if partial is None else sink,
                                stderr=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"clparse {' '.join(args)} failed (exit status "
                         f"{result.returncode}):\n{result.stderr}")
    if partial is not None and output is not None:
        partial.replace(output)
    return result.stdout or ""


def gold_tags(trees: Sequence[Any]) -> list[list[tuple[str, str]]]:
    return [[(w, t) for w, t in tree.tagged_words() if t != NONE_TAG] for tree in trees]


def read_tagged(path: Path) -> list[list[tuple[str, str]]]:
    """``word/TAG`` lines (``clparse tag`` output, or ours) as (word, tag) sentences."""
    return [[tuple(token.rsplit("/", 1)) for token in line.split()]  # type: ignore[misc]
            for line in path.read_text(encoding="utf-8").splitlines()]


def tag_accuracy(gold: Sequence[Sequence[tuple[str, str]]],
                 tagged: Sequence[Sequence[tuple[str, str]]]) -> float:
    """Share of tokens tagged as in ``gold`` (the words must be the same, sentence by sentence)."""
    if len(gold) != len(tagged):
        raise SystemExit(f"{len(tagged)} tagged sentences for {len(gold)} gold ones")
    correct = total = 0
    for n, (g, t) in enumerate(zip(gold, tagged)):
        if [w for w, _ in g] != [w for w, _ in t]:
            raise SystemExit(f"sentence {n}: tagged words differ from the gold words")
        correct += sum(a == b for (_, a), (_, b) in zip(g, t))
        total += len(g)
    return 100 * correct / total


class Table:
    """The figures as they come, kept in ``out/results.json`` and shown in ``out/results.md``."""

    ROWS = (("1", "gold", "gold", "gold tags"),
            ("2", "gold", "crf", "CRF tags"),
            ("2'", "gold", "stored", "stored tagger's tags"),
            ("3", "jackknife", "stored", "CRF tags (stored)"),
            ("3'", "jackknife", "gold", "gold tags"),
            ("4", "both", "stored", "CRF tags (stored)"),
            ("4'", "both", "gold", "gold tags"))
    COMPARISONS = (("3", "2", "jackknifed vs gold-tag training, both on CRF tags"),
                   ("2", "1", "CRF tags vs gold tags, gold-tag training"),
                   ("3", "1", "jackknifed training on CRF tags vs gold-tag training on gold tags"),
                   ("3'", "1", "jackknifed vs gold-tag training, both on gold tags"),
                   ("2", "2'", "CRF tags vs the stored tagger's, gold-tag training"),
                   ("2'", "1", "the stored tagger's tags vs gold tags, gold-tag training"),
                   ("4", "2'", "both vs gold-tag training, both from raw tokens (the stored tagger)"),
                   ("4'", "1", "both vs gold-tag training, both on gold tags"),
                   ("4", "4'", "the stored tagger's tags vs gold tags, training on both"))

    def __init__(self, out: Path, args: argparse.Namespace) -> None:
        self.out = out
        self.args = args
        self.path = out / "results.json"
        self.data: dict[str, Any] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        partial.replace(self.path)
        (self.out / "results.md").write_text(self.markdown())

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def markdown(self) -> str:
        def fmt(value: Any, spec: str) -> str:
            return "…" if value is None else format(value, spec)

        a = self.args
        lines = [(f"GUM dev <= 15 words ({fmt(self.get('dev_sentences'), ',')} sentences, "
                 f"{fmt(self.get('dev_tokens'), ',')} tokens), beam {a.beam}, every parse at `--theta best`; "
                 f"prepare `{' '.join(PREPARE)}`, train `--until-theta {a.until_theta:g} --jobs {a.jobs} "
                 f"{' '.join(TRAIN)}`. Θ̂ calibrated on dev with the run's default tags (gold: gold tags; "
                 "both: gold tags; jackknife: the stored tagger's). Training minutes are summed over the "
                 "iterations of the parallel training processes; prepare minutes are the stored preparation "
                 "(jackknife taggers included) plus the stored tagger's training."), "",
                 ("| row | training tags | parsed with | tag acc. (dev <= 15) | F1 | recall | precision | "
                  "scored | best Θ̂ (calibrated with) | splits at Θ̂ | training, min | prepare, min | "
                  "calibration, min |"),
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for row, run, tags, name in self.ROWS:
            db = self.get(f"db.{run}", {})
            score = self.get(f"score.{row}", {})
            tagger = {"crf": "CRF"}.get(db.get("tagger_kind"), db.get("tagger_kind"))
            parsed_with = f"{tagger} tags (stored)" if tags == "stored" and tagger else name
            training = {"gold": "gold", "both": f"gold + jackknifed {tagger or 'CRF'}, {a.folds} folds"}.get(
                run, f"jackknifed {tagger or 'CRF'}, {a.folds} folds")
            lines.append(
                f"| {row} | {training} | {parsed_with} | {fmt(self.get(f'tags.{row}'), '.2f')} "
                f"| {fmt(score.get('f1'), '.2f')} | {fmt(score.get('recall'), '.2f')} "
                f"| {fmt(score.get('precision'), '.2f')} | {fmt(score.get('valid_sentences'), ',')} "
                f"| {fmt(db.get('best_theta'), '.2f')} ({db.get('calibrated_with', '…')}) "
                f"| {fmt(db.get('splits'), ',')} | {fmt(db.get('train_minutes'), '.1f')} "
                f"| {fmt(db.get('prepare_minutes'), '.1f')} | {fmt(db.get('calibration_minutes'), '.1f')} |")
        lines += ["", "| comparison | F1 A | F1 B | Δ F1 | p (F1) | p (recall) | p (precision) |",
                  "|---|---|---|---|---|---|---|"]
        for a_row, b_row, name in self.COMPARISONS:
            c = self.get(f"compare.{a_row}.{b_row}")
            if c is None:
                lines.append(f"| {a_row} vs {b_row}: {name} | … | … | … | … | … | … |")
                continue
            m = c["metrics"]
            lines.append(f"| {a_row} vs {b_row}: {name} | {m['f1']['a']:.2f} | {m['f1']['b']:.2f} "
                         f"| {m['f1']['difference']:+.2f} | {m['f1']['p_value']:.4f} "
                         f"| {m['recall']['p_value']:.4f} | {m['precision']['p_value']:.4f} |")
        notes = [("- scored: sentences EVALB scores; with predicted tags a token the tagger calls "
                  "punctuation (or not) where the gold tree does not leaves the words mismatched, and that "
                  "sentence out. A comparison scores only the sentences both parses keep, hence its F1s can "
                  "differ from the rows'.")]
        notes += [f"- {key[5:]}: {value}" for key, value in sorted(self.data.items())
                  if key.startswith("note.")]
        lines += ["", *notes]
        return "\n".join(lines) + "\n"


def write_dev(db: Path, gold: Path, tokens: Path) -> list[Any]:
    """The stored dev sentences (<= 15 words) as gold trees and as plain tokens; the trees."""
    from clparse.calibrate.run import dev_trees

    trees = dev_trees(db)
    if not gold.exists() or not tokens.exists():
        for path, text in ((gold, "".join(format_tree(t) + "\n" for t in trees)),
                           (tokens, "".join(" ".join(w for w, _ in s) + "\n" for s in gold_tags(trees)))):
            partial = path.with_name(path.name + ".partial")
            partial.write_text(text, encoding="utf-8")
            partial.replace(path)
    return trees


def build_run(name: str, args: argparse.Namespace, table: Table) -> Path:
    """Prepare (or adopt, upgrade and check), train and calibrate one run's database; its figures."""
    out = args.out
    db = out / f"{name}.sqlite"
    prepare = PREPARE + (["--train-tags", name, "--folds", str(args.folds), "--jobs", str(args.jobs)]
                         if name != "gold" else [])
    if name == "gold" and args.gold_db is not None and not db.exists():
        run_clparse(out, "backup", "--db", str(args.gold_db), str(db))
    if name == "gold" and args.gold_db is not None:
        table.set("note.gold-tag run",
                  f"{db.name} started as a copy of {args.gold_db} (its preparation, stored "
                  "tagger and training are that database's)")
    if db.exists():
        run_clparse(out, "init", "--db", str(db))  # made by an older clparse: upgrade it (after a backup)
    # On a prepared database this only checks that it was prepared from these inputs and settings.
    message = run_clparse(out, "prepare", "--db", str(db), "--train", str(GUM / "train"), "--dev",
                          str(GUM / "dev"), *prepare)
    print(f"{name}: {message.strip()}", file=sys.stderr, flush=True)
    [(prepare_seconds,)] = read_rows(db, "SELECT seconds FROM runs")
    [(tagger_kind, tagger_seconds, tagger_accuracy)] = read_rows(db, "SELECT kind, seconds, dev_accuracy "
                                                                     "FROM taggers")
    figures: dict[str, Any] = {"tagger_kind": tagger_kind,
                               "prepare_minutes": (prepare_seconds + tagger_seconds) / 60,
                               "stored_tagger_dev_accuracy": tagger_accuracy}
    if name != "gold":
        rows = read_rows(db,
                         "SELECT gold_tree, tags FROM sentences WHERE split = 'train' AND tags IS NOT NULL")
        gold = [[t for _, t in sentence] for sentence in gold_tags([parse_tree(tree) for tree, _ in rows])]
        predicted = [tags.split() for _, tags in rows]
        correct = sum(a == b for g, p in zip(gold, predicted) for a, b in zip(g, p))
        figures["jackknife_train_accuracy"] = 100 * correct / sum(map(len, gold))
        table.set(f"note.jackknifed training tags ({name})",
                  f"{figures['jackknife_train_accuracy']:.2f} % of the tokens "
                  f"of the {len(rows):,} training sentences (<= 15 words) tagged as in the treebank"
                  + (" (the jackknifed copies only: each has a tag unlike the treebank's)"
                     if name == "both" else ""))
    table.set(f"db.{name}", {**table.get(f"db.{name}", {}), **figures})
    run_clparse(out, "train", "--db", str(db), "--until-theta", str(args.until_theta), "--jobs",
                str(args.jobs), *TRAIN)
    [(train_seconds,)] = read_rows(db, "SELECT sum(seconds) FROM iterations")
    figures["train_minutes"] = train_seconds / 60
    table.set(f"db.{name}", {**table.get(f"db.{name}", {}), **figures})
    run_clparse(out, "calibrate", "--db", str(db), "--beam", str(args.beam))
    # What `parse --theta best` uses: the most recently updated calibration with a best Θ̂.
    [(calibration, best, settings)] = read_rows(
        db, "SELECT id, best_theta, settings_json FROM calibrations WHERE best_theta IS NOT NULL "
            "ORDER BY updated_at DESC, id DESC LIMIT 1")
    [(splits, seconds)] = read_rows(db,
                                    f"SELECT (SELECT splits FROM calibration_points WHERE calibration_id = "
                                    f"{calibration} AND theta = {best!r}), (SELECT sum(seconds) FROM "
                                    f"calibration_points WHERE calibration_id = {calibration})")
    calibrated = json.loads(settings)
    if calibrated.get("beam") != args.beam:
        raise SystemExit(f"{db}: the latest calibration is at beam {calibrated.get('beam')}, not {args.beam}")
    figures.update(best_theta=best, splits=splits, calibration_minutes=seconds / 60,
                   calibrated_with=f"{calibrated.get('tags')} tags")
    table.set(f"db.{name}", {**table.get(f"db.{name}", {}), **figures})
    return db


def crf_tags(args: argparse.Namespace, tokens: Path, output: Path, table: Table) -> None:
    """The dev tokens tagged by a CRF with default settings trained on every tree of GUM train."""
    model = args.out / "crf.bin"
    if not model.exists():
        train, _ = load("train")  # every length, files in name order, as prepare gives its tagger
        print(f"training the CRF on {len(train):,} sentences ...", file=sys.stderr, flush=True)
        tagger, wall, cpu = timed(lambda: CrfTagger.train(train))
        table.set("note.CRF for row 2", f"trained here on {len(train):,} GUM train sentences (every length, "
                  f"default settings) in {wall:.0f} s wall / {cpu:.0f} s CPU")
        partial = model.with_name(model.name + ".partial")
        partial.write_bytes(tagger.to_bytes())
        partial.replace(model)
    if not output.exists():
        tagger = CrfTagger.from_bytes(model.read_bytes())
        lines = []
        for line in tokens.read_text(encoding="utf-8").splitlines():
            words = line.split()
            lines.append(" ".join(f"{w}/{t}" for w, t in zip(words, tagger.tag(words))) + "\n")
        partial = output.with_name(output.name + ".partial")
        partial.write_text("".join(lines), encoding="utf-8")
        partial.replace(output)


def score(args: argparse.Namespace, gold: Path, parsed: Path) -> dict[str, float]:
    report = json.loads(run_clparse(args.out, "eval", str(gold), str(parsed), "--json"))["all"]
    return {k: report[k] for k in ("f1", "recall", "precision", "valid_sentences", "error_sentences")}


def parser_table(args: argparse.Namespace) -> None:
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    table = Table(out, args)
    gold, tokens = out / "dev.gold", out / "dev.tokens"
    beam = ["--theta", "best", "--beam", str(args.beam)]
    runs = [name.strip() for name in args.runs.split(",") if name.strip()]
    dbs: dict[str, Path] = {}
    trees: list[Any] = []
    for name in RUNS:
        if name not in runs:
            continue
        db = dbs[name] = build_run(name, args, table)
        these = write_dev(db, gold, tokens)
        if trees and [format_tree(t) for t in these] != [format_tree(t) for t in trees]:
            raise SystemExit(f"{db}: its dev sentences differ from the other run's")
        trees = these
        reference = gold_tags(trees)
        table.set("dev_sentences", len(reference))
        table.set("dev_tokens", sum(map(len, reference)))
        stored_tags = out / f"dev.{name}-stored.tagged"  # the database's stored tagger on the dev tokens
        if not stored_tags.exists():
            run_clparse(out, "tag", "--db", str(db), str(tokens), output=stored_tags)
        if name == "gold":
            crf_tagged = out / "dev.crf.tagged"
            crf_tags(args, tokens, crf_tagged, table)
            table.set("tags.1", 100.0)
            table.set("tags.2", tag_accuracy(reference, read_tagged(crf_tagged)))
            table.set("tags.2'", tag_accuracy(reference, read_tagged(stored_tags)))
            parses = {"1": (["--input-format", "ptb"], gold), "2": (["--input-format", "tagged"], crf_tagged),
                      "2'": (["--input-format", "tokens"], tokens)}
        else:
            raw_row = {"jackknife": "3", "both": "4"}[name]
            table.set(f"tags.{raw_row}", tag_accuracy(reference, read_tagged(stored_tags)))
            table.set(f"tags.{raw_row}'", 100.0)
            crf_tagged, model = out / "dev.crf.tagged", out / "crf.bin"
            if crf_tagged.exists() and model.exists():
                [(stored,)] = read_rows(db, "SELECT model_blob FROM taggers")
                same_model = stored is not None and bytes(stored) == model.read_bytes()
                same_tags = read_tagged(crf_tagged) == read_tagged(stored_tags)
                table.set(f"note.CRF of rows 2 and {raw_row}",
                          f"the model trained here ({model.name}) and the {name} "
                          f"run's stored CRF are {'' if same_model else 'NOT '}byte-identical; their dev "
                          f"tags are {'' if same_tags else 'NOT '}identical")
            parses = {raw_row: (["--input-format", "tokens"], tokens),
                      f"{raw_row}'": (["--input-format", "ptb"], gold)}
        for row, (fmt, source) in parses.items():
            parsed = out / f"row-{row.replace(chr(39), 'p')}.parsed"
            if not parsed.exists():
                start = time.perf_counter()
                run_clparse(out, "parse", "--db", str(db), *beam, *fmt, str(source), output=parsed)
                table.set(f"parse_seconds.{row}", time.perf_counter() - start)
            table.set(f"score.{row}", score(args, gold, parsed))
            print(f"row {row}: F1 {table.get(f'score.{row}')['f1']:.2f}", file=sys.stderr, flush=True)
    for a_row, b_row, _ in Table.COMPARISONS:
        a, b = (out / f"row-{r.replace(chr(39), 'p')}.parsed" for r in (a_row, b_row))
        if a.exists() and b.exists():
            table.set(f"compare.{a_row}.{b_row}", json.loads(run_clparse(
                out, "compare", str(gold), str(a), str(b), "--trials", str(args.trials), "--json")))
    print(table.markdown())


def raw_parse(args: argparse.Namespace) -> None:
    """F1 of the database's parser on GUM dev with gold tags and with each tagger model's tags."""
    from clparse.evaluate.evalb import EvalbParams, evaluate
    from clparse.parser import Parser

    trees = [tree for path in sorted((GUM / "dev").glob("*.ptb")) for tree in read_trees(path)]
    trees = [tree for tree in trees if gold_tags([tree])[0]]
    tagged = gold_tags(trees)
    short = [i for i, tree in enumerate(trees) if sentence_length(tree) <= 15]
    alternatives = {} if args.tag_alternatives is None else {"tag_alternatives": args.tag_alternatives}
    parser = Parser.from_db(args.raw_parse, theta=args.theta, beam=args.beam, **alternatives)
    params = EvalbParams(max_errors=len(trees))
    models = [name.strip() for name in args.models.split(",") if name.strip()]
    print(f"GUM dev, {args.raw_parse.name} at theta {args.theta:g}, beam {args.beam}, tag alternatives "
          f"{parser.options.tag_alternatives}\n")
    print("| tags | tag acc. | F1 <= 15 (scored) | F1 <= 15, all scored | F1 all (scored) "
          "| F1 all, all scored | s |")
    print("|---|---|---|---|---|---|---|")
    for name in ["gold", *models]:
        parser.tagger = None if name == "gold" else CrfTagger.from_bytes(Path(name).read_bytes())
        start = time.perf_counter()
        results = [parser.parse_tagged(s) if name == "gold" else parser.parse([w for w, _ in s])
                   for s in tagged]
        seconds = time.perf_counter() - start
        correct = sum(a == b for r, s in zip(results, tagged) for (_, a), (_, b) in zip(r.tagged, s))
        parses = [r.tree for r in results]
        regold = []  # tags only decide which tokens EVALB ignores: the gold ones score every sentence
        for tree, sentence in zip(parses, tagged):
            copy = tree.copy()
            for leaf, (_, tag) in zip(copy.preterminals(), sentence):
                leaf.label = tag
            regold.append(copy)
        cells = []
        for subset in (short, range(len(trees))):
            as_is = evaluate([trees[i] for i in subset], [parses[i] for i in subset], params).all
            fixed = evaluate([trees[i] for i in subset], [regold[i] for i in subset], params).all
            cells += [f"{as_is.f1:.2f} ({as_is.valid:,})", f"{fixed.f1:.2f}"]
        accuracy = 100 * correct / sum(map(len, tagged))
        print(f"| {name} | {accuracy:.2f} % | {' | '.join(cells)} | {seconds:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raw-parse", type=Path, default=None, metavar="DB",
                        help="parse GUM dev with DB's parser, gold tags vs each of --models")
    parser.add_argument("--models", default="", help="--raw-parse: comma-separated CRF model files")
    parser.add_argument("--theta", type=float, default=6.0, help="--raw-parse: the parser's theta")
    parser.add_argument("--tag-alternatives", type=int, default=None, metavar="N",
                        help="--raw-parse: other taggings parsed per sentence (default: the parser's; "
                             "0: the best tagging alone)")
    parser.add_argument("--parsers", action="store_true",
                        help="build the parser table instead of the tagger one")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/tagging"),
                        help="--parsers: where the databases, parses and results go")
    parser.add_argument("--gold-db", type=Path, default=None,
                        help="--parsers: start the gold-tag run as a copy of this database (prepared with "
                             "the same settings) instead of preparing it")
    parser.add_argument("--runs", default=",".join(RUNS),
                        help="--parsers: which databases to build, of gold,jackknife,both")
    parser.add_argument("--until-theta", type=float, default=2.0)
    parser.add_argument("--jobs", type=int, default=2, help="--parsers: training and jackknife processes")
    parser.add_argument("--beam", type=int, default=1000)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=10_000,
                        help="--parsers: shuffling trials of each comparison")
    parser.add_argument("--options", default="perceptron,crf", help="comma-separated: perceptron, crf")
    parser.add_argument("--c1", type=float, default=None, help="CRF L1 weight (default: the feature set's)")
    parser.add_argument("--c2", type=float, default=None, help="CRF L2 weight (default: the feature set's)")
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="CRF iterations")
    parser.add_argument("--feature-set", type=int, choices=FEATURE_SETS, default=FEATURE_SET,
                        help="CRF feature set (clparse.tag.crf)")
    parser.add_argument("--passes", type=int, default=2, help="tagging passes over dev; the best is reported")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N train and dev sentences (a smoke test)")
    parser.add_argument("--save", type=Path, default=None, help="write each stored model into this directory")
    parser.add_argument("--confusions", type=int, default=0, metavar="N",
                        help="also print each option's N commonest confusions (gold, predicted)")
    args = parser.parse_args()
    if args.raw_parse is not None:
        raw_parse(args)
        return
    if args.parsers:
        unknown_runs = [name for name in args.runs.split(",") if name.strip() and name.strip() not in RUNS]
        if unknown_runs:
            parser.error(f"--runs: unknown {', '.join(unknown_runs)}; choose from {', '.join(RUNS)}")
        args.out = args.out.resolve()
        args.gold_db = args.gold_db.resolve() if args.gold_db is not None else None
        parser_table(args)
        return
    known = options(args)
    chosen = [name.strip() for name in args.options.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in known]
    if unknown or not chosen:
        parser.error(f"--options: unknown {', '.join(unknown) or '(none given)'}; choose from "
                     f"{', '.join(known)}")
    if args.passes < 1:
        parser.error("--passes must be at least 1")

    train, _ = load("train", args.limit)
    dev, dev_lengths = load("dev", args.limit)
    rows = []
    for name in chosen:
        print(f"{name}: training on {len(train):,} sentences ...", file=sys.stderr, flush=True)
        result, stored, confusions = measure(known[name], train, dev, dev_lengths, args.passes)
        if args.save is not None:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / ("perceptron.json" if name == "perceptron" else "crf.bin")).write_bytes(stored)
        print(f"{name}: {percent(result['all_ok'], result['all'])} on dev", file=sys.stderr, flush=True)
        rows.append((known[name].name, result, confusions))

    first = rows[0][1]
    print(f"GUM train {len(train):,} sentences, {sum(map(len, train)):,} tokens; dev {len(dev):,} sentences, "
          f"{first['all']:,.0f} tokens ({first['short']:,.0f} in sentences <= 15 words, "
          f"{first['unknown']:,.0f} unknown); load average at the end {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores\n")
    print("| option | dev acc (all) | errors | dev <= 15 acc | unknown-word acc | train s (wall / CPU) "
          "| tokens/s tagging (wall / CPU) | load s (wall / CPU) | model bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r, _ in rows:
        print(f"| {label} | {percent(r['all_ok'], r['all'])} | {r['all'] - r['all_ok']:,.0f} "
              f"| {percent(r['short_ok'], r['short'])} | {percent(r['unknown_ok'], r['unknown'])} "
              f"| {r['train_wall']:.1f} / {r['train_cpu']:.1f} "
              f"| {r['tokens_per_s_wall']:,.0f} / {r['tokens_per_s_cpu']:,.0f} "
              f"| {r['load_wall']:.2f} / {r['load_cpu']:.2f} | {r['bytes']:,.0f} |")
    for label, _, confusions in rows if args.confusions else ():
        print(confusion_table(label, confusions, args.confusions))


if __name__ == "__main__":
    main()
