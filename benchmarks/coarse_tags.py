"""Issue 29: does the coarse-tags template bring raw-token parsing closer to gold tags? All of GUM dev.

Two runs in the seed-1 recipe of docs/combination.md (``prepare --max-words 0 --seed 1``, ``train
--until-theta THETA --sample 100000``), alike but for the template: ``base`` (the default templates) and
``coarse`` (the default templates and ``coarse-tags``: beside every test of a tag, the same test of its
coarse class, so that a tagger's error inside a class, NN for NNP or VBD for VBN, changes fewer features).
Both are parsed at that Θ̂ (no calibration: the same ℓ1 budget for both) at the default search on every GUM
dev sentence, with gold tags and from raw tokens (``--input-format tokens``: the run's stored CRF and the
search's rule over 3 taggings, what ``clparse parse`` does by default):

* rows G and R: the base run on gold tags and from raw tokens;
* rows GC and RC: the coarse run on gold tags and from raw tokens;
* rows B and BC: each run from raw tokens with the CRF's best tagging alone (``--tag-alternatives 0``), to
  tell the tagger's cost from what the rule over three taggings recovers.

Each row is scored with the gold tags put back on its parse's leaves (tags are not scored; they only decide
which tokens EVALB sets aside as punctuation, and a predicted tag that moves a token across that line would
leave the sentence out, or stop EVALB after ten), so every sentence counts; on all lengths and on the
sentences of at most 15 words (``sentence_length``, as the <= 15 runs count them); and compared (``clparse
compare``, paired) RC with R, GC with G, and each run's raw tokens with its gold tags (the issue's gap:
within 1.5 F1).

    python benchmarks/coarse_tags.py --out DIR [--base-db PATH] [--coarse-db PATH] [--theta 5] [--jobs 2]

The databases default to ``DIR/base.sqlite`` and ``DIR/coarse.sqlite``; each is prepared and trained
here unless it already is (both commands do nothing on a finished run, and a stopped training resumes).
Every step is cached in ``DIR``; the commands run are in ``DIR/commands.log``; the figures go to
``DIR/results.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from clparse.atomic_write import write_whole
from clparse.calibrate.run import put_gold_tags
from clparse.preprocess import sentence_length
from clparse.read import read_trees
from clparse.read.ptb import format_tree
from clparse.read.tree import Tree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tagging import GUM, gold_tags, run_clparse, score, write_dev  # noqa: E402

SHORT = 15
RECIPE = ["--max-words", "0", "--seed", "1"]
DEFAULT_TEMPLATES = ["child-extra", "head-of-child", "context-exists", "length"]
TEMPLATES = {"base": [],
             "coarse": [arg for t in [*DEFAULT_TEMPLATES, "coarse-tags"] for arg in ("--template", t)]}
BEST_ALONE = ["--tag-alternatives", "0"]
ROWS: dict[str, tuple[str, str, list[str]]] = {
    "G": ("base", "ptb", []), "R": ("base", "tokens", []), "GC": ("coarse", "ptb", []),
    "RC": ("coarse", "tokens", []), "B": ("base", "tokens", BEST_ALONE),
    "BC": ("coarse", "tokens", BEST_ALONE)}
COMPARISONS = (("RC", "R"), ("GC", "G"), ("R", "G"), ("RC", "GC"), ("BC", "B"), ("R", "B"), ("RC", "BC"))


def write_text(path: Path, text: str) -> None:
    write_whole(path, lambda where: where.write_text(text, encoding="utf-8"))


def build(out: Path, name: str, db: Path, theta: str, jobs: int) -> None:
    run_clparse(out, "prepare", "--db", str(db), "--train", str(GUM / "train"), "--dev", str(GUM / "dev"),
                *RECIPE, *TEMPLATES[name])
    run_clparse(out, "train", "--db", str(db), "--jobs", str(jobs), "--until-theta", theta,
                "--sample", "100000")


def dev_files(out: Path, db: Path) -> tuple[Path, Path, list[int]]:
    """Every dev sentence as gold trees and as tokens, one a line; and which are at most SHORT words."""
    gold, tokens = out / "devall.gold", out / "devall.tokens"
    trees = write_dev(db, gold, tokens)
    return gold, tokens, [i for i, t in enumerate(trees) if sentence_length(t) <= SHORT]


def with_gold_tags(parsed: Path, gold_trees: list[Tree]) -> Path:
    """The parses of ``parsed`` with each sentence's gold tags on their leaves."""
    scored = parsed.with_name(parsed.name + ".gold-tags")
    if not scored.exists():
        trees = list(read_trees(parsed))
        if len(trees) != len(gold_trees):
            raise SystemExit(f"{parsed}: {len(trees)} parses for {len(gold_trees)} sentences")
        for tree, tagged in zip(trees, gold_tags(gold_trees)):
            put_gold_tags(tree, tagged)
        write_text(scored, "".join(format_tree(t) + "\n" for t in trees))
    return scored


def subset(path: Path, lines: list[int], suffix: str) -> Path:
    """The given lines of a one-tree-a-line file (gold, or a parse's output)."""
    kept = path.with_name(path.name + suffix)
    if not kept.exists():
        every = path.read_text(encoding="utf-8").splitlines()
        write_text(kept, "".join(every[i] + "\n" for i in lines))
    return kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base-db", type=Path)
    ap.add_argument("--coarse-db", type=Path)
    ap.add_argument("--theta", default="5")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--trials", type=int, default=10000)
    args = ap.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    dbs = {"base": args.base_db or out / "base.sqlite", "coarse": args.coarse_db or out / "coarse.sqlite"}
    for name, db in dbs.items():
        build(out, name, db, args.theta, args.jobs)
    gold, tokens, short = dev_files(out, dbs["base"])
    sources = {"ptb": gold, "tokens": tokens}
    gold_short = subset(gold, short, f".le{SHORT}")
    gold_trees = list(read_trees(gold))
    every = len(gold.read_text(encoding="utf-8").splitlines())
    results: dict[str, object] = {"sentences": {"all": every, "short": len(short)}}
    parsed: dict[str, Path] = {}
    for row, (name, fmt, extra) in ROWS.items():
        raw = out / f"row-{row}.parsed"
        if not raw.exists():
            run_clparse(out, "parse", "--db", str(dbs[name]), "--theta", args.theta, "--input-format", fmt,
                        *extra, str(sources[fmt]), output=raw)
        parsed[row] = with_gold_tags(raw, gold_trees)
        results[f"score.{row}.all"] = score(args, gold, parsed[row])
        results[f"score.{row}.short"] = score(args, gold_short, subset(parsed[row], short, f".le{SHORT}"))
        print(row, results[f"score.{row}.all"]["f1"], results[f"score.{row}.short"]["f1"], file=sys.stderr,
              flush=True)
    for a, b in COMPARISONS:
        for part, reference, suffix in (("all", gold, ""), ("short", gold_short, f".le{SHORT}")):
            results[f"compare.{a}.{b}.{part}"] = json.loads(run_clparse(
                out, "compare", str(reference), str(parsed[a]) + suffix, str(parsed[b]) + suffix,
                "--trials", str(args.trials), "--json"))
    write_text(out / "results.json", json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
