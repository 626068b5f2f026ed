"""The accuracy ablation on GUM (<= 15 words): one lever added per row, each measured.

Usage: python benchmarks/ablation.py [--out DIR] [--until-theta 2] [--jobs 2] [--beam 1000] [--rows N]
                                     [--trials 10000]

Each row is a full run through the command line, as a user would do it: ``clparse prepare`` (GUM
train <= 15 words + dev, the row's prepare options), ``clparse train --until-theta`` (the row's
train options), ``clparse calibrate --beam`` on the dev set with gold tags (the default Θ̂ grid),
then ``clparse parse --theta best`` of the dev set with gold tags and with the stored tagger's tags.
A row is compared with the row before it by the paired stratified shuffling test (``clparse
compare``) on the gold-tag parses. A lever is kept for the rows after it only if it raised dev F1
(gold tags); otherwise later rows leave it out, and the table says so.

Every step resumes: a row's database (``DIR/row-N.sqlite``) is prepared once, training and
calibration continue where they stopped, parses are redone only if missing. Prints the table as
Markdown (docs/accuracy.md holds the last one). Needs ../shared (the GUM treebank).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_digest import read_rows

GUM = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum"
CLPARSE = [str(Path(sys.executable).with_name("clparse"))]


# setting -> its command-line words; a later lever's words replace an earlier's
Options = dict[str, list[str]]


@dataclass
class Lever:
    name: str
    prepare: Options = field(default_factory=dict)
    train: Options = field(default_factory=dict)


RICH = ["--template", "child-extra", "--template", "head-of-child", "--template", "context-exists",
        "--template", "length"]
# Row 0 spells the paper's settings out: the defaults are now the kept levers (constraints, richer
# templates, smoothing 0.5), so every row says each setting it depends on.
LEVERS = [
    Lever("paper's settings (K = 5, one UNK, ε = 1e-8)",
          prepare={"constraints": ["--no-constraints"], "templates": ["--template", "none"]},
          train={"smoothing": ["--smoothing", "0"]}),
    Lever("+ candidate constraints", prepare={"constraints": ["--constraints"]}),
    Lever("+ leaf smoothing 0.5", train={"smoothing": ["--smoothing", "0.5"]}),
    Lever("+ UNK signatures", prepare={"unknown_words": ["--unknown-words", "signatures"]}),
    Lever("+ K = 7", prepare={"max_children": ["--max-children", "7"]}),
    Lever("+ richer templates", prepare={"templates": RICH}),
    Lever("ℓ1 rule instead of smoothing",
          train={"rule": ["--rule", "l1"], "smoothing": ["--smoothing", "0"]}),
]


def words(options: Options) -> list[str]:
    return [word for option in options.values() for word in option]


def clparse(*args: str, output: Path | None = None) -> str:
    """Run one clparse command; its stdout (or write it to ``output``)."""
    with open(output, "w") if output is not None else open("/dev/null", "w") as sink:
        result = subprocess.run(CLPARSE + list(args), stdout=subprocess.PIPE if output is None else sink,
                                stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SystemExit(f"clparse {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout or ""


def f1_of(gold: Path, test: Path) -> float:
    return json.loads(clparse("eval", str(gold), str(test), "--json"))["all"]["f1"]


def write_dev(db: Path, gold: Path, tokens: Path) -> None:
    """The stored dev sentences (<= 15 words) as gold trees and as plain tokens, once."""
    from clparse.calibrate.run import dev_trees
    from clparse.read.ptb import format_tree

    trees = dev_trees(db)
    gold.write_text("".join(format_tree(t) + "\n" for t in trees))
    tokens.write_text("".join(" ".join(w for w, tag in t.tagged_words() if tag != "-NONE-") + "\n"
                              for t in trees))


def run_row(index: int, prepare_args: list[str], train_args: list[str], args: argparse.Namespace,
            gold: Path) -> dict[str, object]:
    db = args.out / f"row-{index}.sqlite"
    if db.exists():
        clparse("init", "--db", str(db))  # a row made by an older clparse: upgrade it (after a backup)
    else:
        clparse("prepare", "--db", str(db), "--train", str(GUM / "train"), "--dev", str(GUM / "dev"),
                *prepare_args)
    words = args.out / "dev.tokens"
    if not gold.exists() or not words.exists():
        write_dev(db, gold, words)
    start = time.perf_counter()
    clparse("train", "--db", str(db), "--until-theta", str(args.until_theta), "--jobs", str(args.jobs),
            *train_args)
    clparse("calibrate", "--db", str(db), "--beam", str(args.beam))
    [(best, calibration)] = read_rows(db, "SELECT best_theta, id FROM calibrations ORDER BY updated_at DESC "
                                          "LIMIT 1")
    [(splits, f1_grid)] = read_rows(db, "SELECT splits, f1 FROM calibration_points WHERE calibration_id = "
                                        f"{calibration} AND theta = {best!r}")
    parsed = args.out / f"row-{index}.gold-tags.parsed"
    if not parsed.exists():
        clparse("parse", "--db", str(db), "--theta", "best", "--beam", str(args.beam), "--input-format",
                "ptb", str(gold), output=parsed)
    tagged = args.out / f"row-{index}.tagger-tags.parsed"
    if not tagged.exists():
        clparse("parse", "--db", str(db), "--theta", "best", "--beam", str(args.beam), str(words),
                output=tagged)
    [(train_seconds,)] = read_rows(db, "SELECT sum(seconds) FROM iterations")
    return {"db": db, "best_theta": best, "splits": splits, "f1": f1_of(gold, parsed), "f1_grid": f1_grid,
            "f1_tagger": f1_of(gold, tagged), "train_minutes": train_seconds / 60, "parsed": parsed,
            "seconds": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/ablation"))
    parser.add_argument("--until-theta", type=float, default=2.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--beam", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=len(LEVERS), help="run only the first N levers")
    parser.add_argument("--trials", type=int, default=10_000)
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    gold = args.out / "dev.gold"
    kept_prepare: Options = {}
    kept_train: Options = {}
    rows = []
    previous: dict[str, object] | None = None
    for index, lever in enumerate(LEVERS[:args.rows]):
        prepare_options, train_options = {**kept_prepare, **lever.prepare}, {**kept_train, **lever.train}
        result = run_row(index, words(prepare_options), words(train_options), args, gold)
        p_value = None
        if previous is not None:
            report = json.loads(clparse("compare", str(gold), str(previous["parsed"]), str(result["parsed"]),
                                        "--trials", str(args.trials), "--json"))
            p_value = report["metrics"]["f1"]["p_value"]
        kept = previous is None or float(result["f1"]) > float(previous["f1"])  # type: ignore[arg-type]
        if kept:
            kept_prepare, kept_train = prepare_options, train_options
            previous = result
        rows.append((lever.name, result, p_value, kept))
        print(f"row {index} ({lever.name}): F1 {result['f1']:.2f}, kept: {kept}", file=sys.stderr, flush=True)
    print(f"GUM dev <= 15 words (909 sentences), beam {args.beam}, Θ̂ calibrated on dev with gold tags; "
          f"training to Θ < {args.until_theta:g}\n")
    print("| row | F1 gold tags | F1 tagger tags | best Θ̂ | splits at Θ̂ | training (min) | p vs row kept "
          "before | kept |")
    print("|---|---|---|---|---|---|---|---|")
    for name, result, p_value, kept in rows:
        print(f"| {name} | {result['f1']:.2f} | {result['f1_tagger']:.2f} | {result['best_theta']:.3g} | "
              f"{result['splits']:,} | {result['train_minutes']:.1f} | "
              f"{'' if p_value is None else f'{p_value:.3f}'} | {'yes' if kept else 'no'} |")


if __name__ == "__main__":
    main()
