"""Where the raw-token gap goes: the F1 each kind of tagger error costs the parser (issue 29).

Takes one model's parses of the same sentences twice: from the gold tags, and from a tagger's tags
(``parse --tag-alternatives 0``, the tagger's tags still on the leaves). A sentence the tagger tags right
is parsed the same both ways (the search is deterministic), so every bracket lost is lost in a sentence
with a tag error. Each such sentence's loss (matched brackets and test brackets, against the gold-tag parse,
with the gold tags put back on the leaves so that EVALB reads both alike) is shared equally among its tag
errors, each error keyed by its confusion (gold tag -> tagger's tag), and summed per confusion as corpus F1
(the first-order change of F1 = 2M / (G + T) in M and T; the rows add up to about the whole gap, which is
printed beside it).

Run: ``python benchmarks/tag_error_cost.py GOLD GOLD_TAG_PARSES TAGGED_PARSES [--top 20] [--json]``
(PTB files, one tree per sentence, paired by position; ``benchmarks/coarse_tags.py`` writes such rows).
Nothing is asserted; results in docs/tagger.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from clparse.calibrate.run import put_gold_tags  # noqa: E402
from clparse.evaluate import EvalbParams  # noqa: E402
from clparse.evaluate.evalb import evaluate_sentence  # noqa: E402
from clparse.evaluate.files import read_parses  # noqa: E402
from clparse.features.space import COARSE_TAGS  # noqa: E402
from clparse.read.tree import Tree  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from tagging import gold_tags  # noqa: E402


@dataclass
class Cost:
    errors: int = 0
    alone: int = 0  # sentences whose only tag error is this one
    unchanged: int = 0  # errors in sentences whose parse came out as with gold tags
    matched: float = 0.0  # the sentences' change in matched brackets, shared among their errors
    test: float = 0.0  # and in test brackets
    examples: list[str] = field(default_factory=list)


def scores(gold: Tree, test: Tree, index: int, params: EvalbParams) -> tuple[int, int, int]:
    """(matched, gold, test) brackets of one sentence; both parses carry the gold tags, so EVALB scores every
    one (a sentence it would skip stops the script rather than count as nothing on one side only)."""
    result = evaluate_sentence(index, gold, test, params)
    if result.status != "ok":
        raise SystemExit(f"sentence {index}: EVALB status {result.status} ({result.message})")
    return result.matched, result.gold_brackets, result.test_brackets


def costs(gold: list[Tree], with_gold_tags: list[Tree],
          tagged: list[Tree]) -> tuple[dict[str, Cost], dict[str, int]]:
    params = EvalbParams()
    per: dict[str, Cost] = defaultdict(Cost)
    totals = Counter[str]()
    for index, (g, a, b) in enumerate(zip(gold, with_gold_tags, tagged, strict=True), 1):
        gold_tagged = gold_tags([g])[0]
        tags = [leaf.label for leaf in b.preterminals()]
        if len(tags) != len(gold_tagged):
            raise SystemExit(f"sentence {index}: {len(tags)} leaves against {len(gold_tagged)} gold words")
        wrong = [f"{gt} -> {pt}" for (_, gt), pt in zip(gold_tagged, tags) if gt != pt]
        b = b.copy()
        put_gold_tags(b, gold_tagged)
        a = a.copy()
        put_gold_tags(a, gold_tagged)
        ma, ga, ta = scores(g, a, index, params)
        mb, _, tb = scores(g, b, index, params)
        totals.update(matched=ma, gold=ga, test=ta, matched_tagged=mb, test_tagged=tb, errors=len(wrong),
                      sentences_wrong=bool(wrong), parse_changed=str(a) != str(b))
        if not wrong:
            if str(a) != str(b):
                totals.update(changed_without_error=1)
            continue
        for key in wrong:
            cost = per[key]
            cost.errors += 1
            cost.alone += len(wrong) == 1
            cost.unchanged += str(a) == str(b)
            cost.matched += (mb - ma) / len(wrong)
            cost.test += (tb - ta) / len(wrong)
            if len(cost.examples) < 3 and len(wrong) == 1 and str(a) != str(b):
                cost.examples.append(" ".join(w for w, _ in gold_tagged))
    return per, dict(totals)


INSIDE, VERB, ACROSS = "inside a coarse-tags class", "a verb <-> another class", "across other classes"


def kind(gold: str, tagged: str) -> str:
    """Which of three kinds a confusion of two tags is: a verb taken for another class or the other way
    round, a swap inside one class of the coarse-tags template (NN for NNP, VBD for VBN: ``COARSE_TAGS``, the
    universal tag set's classes of two tags or more; IN, CD and punctuation have none, so ``, -> :`` is
    "across"), or any other."""
    gold_class, tagged_class = COARSE_TAGS.get(gold, gold), COARSE_TAGS.get(tagged, tagged)
    if gold_class == tagged_class:
        return INSIDE
    if "<VERB>" in (gold_class, tagged_class):
        return VERB
    return ACROSS


def confusion_kind(confusion: str) -> str:
    """:func:`kind` of a ``gold -> tagged`` key."""
    gold, tagged = confusion.split(" -> ")
    return kind(gold, tagged)


def f1(matched: float, gold: float, test: float) -> float:
    return 200.0 * matched / (gold + test) if gold + test else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold")
    parser.add_argument("gold_tag_parses")
    parser.add_argument("tagged_parses")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    read = [list(read_parses(path)) for path in (args.gold, args.gold_tag_parses, args.tagged_parses)]
    per, totals = costs(*read)
    m, g, t = totals["matched"], totals["gold"], totals["test"]
    whole = f1(totals["matched_tagged"], g, totals["test_tagged"]) - f1(m, g, t)

    def share(cost: Cost) -> float:  # first-order change of corpus F1 in M and T
        return 200.0 * cost.matched / (g + t) - 200.0 * m * cost.test / (g + t) ** 2

    ranked = sorted(per.items(), key=lambda item: share(item[1]))
    rows = [{"confusion": key, "kind": confusion_kind(key), "errors": c.errors, "alone": c.alone,
             "parse_unchanged": c.unchanged, "f1": round(share(c), 3),
             "f1_per_100_errors": round(100 * share(c) / c.errors, 2),
             "examples": c.examples} for key, c in ranked]
    summary = {"sentences": len(read[0]), "tag_errors": totals.get("errors", 0),
               "sentences_with_errors": totals.get("sentences_wrong", 0),
               "parses_changed": totals.get("parse_changed", 0),
               "changed_without_error": totals.get("changed_without_error", 0),
               "f1_gold_tags": round(f1(m, g, t), 2),
               "f1_tagged": round(f1(totals["matched_tagged"], g, totals["test_tagged"]), 2),
               "gap": round(whole, 3), "sum_of_rows": round(sum(share(c) for c in per.values()), 3)}
    if args.json:
        print(json.dumps({"summary": summary, "confusions": rows}, indent=2))
        return
    print(", ".join(f"{k} {v}" for k, v in summary.items()))
    print("\n| gold -> tagger | errors | alone in its sentence | parse unchanged | F1 cost "
          "| per 100 errors |")
    print("|---|---|---|---|---|---|")
    for row in rows[:args.top]:
        print(f"| {row['confusion']} | {row['errors']} | {row['alone']} | {row['parse_unchanged']} | "
              f"{row['f1']:+.3f} | {row['f1_per_100_errors']:+.2f} |")
    rest = [cost for _, cost in ranked[args.top:]]
    kinds: dict[str, list[Cost]] = defaultdict(list)
    for key, cost in per.items():
        kinds[confusion_kind(key)].append(cost)
    print(f"| the other {len(rest)} confusions | {sum(c.errors for c in rest)} | | | "
          f"{sum(share(c) for c in rest):+.3f} | |")
    print("\n| kind | errors | F1 cost | per 100 errors |\n|---|---|---|---|")
    for name, group in sorted(kinds.items(), key=lambda item: sum(share(c) for c in item[1])):
        errors, lost = sum(c.errors for c in group), sum(share(c) for c in group)
        print(f"| {name} | {errors} | {lost:+.3f} | {100 * lost / errors:+.2f} |")


if __name__ == "__main__":
    main()
