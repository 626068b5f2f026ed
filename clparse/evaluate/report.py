"""Text renderings of evaluation results, laid out like EVALB's own output."""

from __future__ import annotations

from clparse.evaluate.evalb import Evaluation, Totals
from clparse.evaluate.significance import Comparison


def format_sentences(evaluation: Evaluation) -> str:
    """EVALB's per-sentence table (status 0 ok, 1 error, 2 skip)."""
    codes = {"ok": 0, "error": 1, "skip": 2}
    lines = ["  Sent.                        Matched  Bracket   Cross        Correct Tag",
             " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy",
             "=" * 76]
    for s in evaluation.sentences:
        accuracy = 100.0 * s.correct_tags / s.words if s.words else 0.0
        lines.append(f"{s.index:4d}  {s.length:3d}    {codes[s.status]}  {s.recall:6.2f} {s.precision:6.2f}  "
                     f" {s.matched:3d}    {s.gold_brackets:3d}  {s.test_brackets:3d}    {s.crossing:3d}   "
                     f"{s.words:4d}  {s.correct_tags:4d}   {accuracy:6.2f}")
    lines.append("=" * 76)
    return "\n".join(lines)


def _summary(title: str, totals: Totals) -> list[str]:
    d = totals.to_dict()
    return [
        title,
        f"Number of sentence        = {totals.sentences:6d}",
        f"Number of Error sentence  = {totals.errors:6d}",
        f"Number of Skip  sentence  = {totals.skipped:6d}",
        f"Number of Valid sentence  = {totals.valid:6d}",
        f"Bracketing Recall         = {totals.recall:6.2f}",
        f"Bracketing Precision      = {totals.precision:6.2f}",
        f"Bracketing FMeasure       = {totals.f1:6.2f}",
        f"Complete match            = {totals.exact_match:6.2f}",
        f"Average crossing          = {totals.average_crossing:6.2f}",
        f"No crossing               = {d['no_crossing']:6.2f}",
        f"2 or less crossing        = {d['two_or_less_crossing']:6.2f}",
        f"Tagging accuracy          = {totals.tagging_accuracy:6.2f}",
    ]


def format_summary(evaluation: Evaluation) -> str:
    """EVALB's ``=== Summary ===`` block: all sentences, then those within the cut-off length."""
    lines = ["=== Summary ===", ""]
    lines += _summary("-- All --", evaluation.all)
    lines += [""] + _summary(f"-- len<={evaluation.params.cutoff_length} --", evaluation.short)
    return "\n".join(lines)


def format_by_length(evaluation: Evaluation, bucket: int = 5) -> str:
    lines = [f"{'length':>8} {'sents':>6} {'recall':>7} {'prec':>7} {'F1':>7} {'exact':>7}"]
    for name, totals in evaluation.by_length(bucket):
        lines.append(f"{name:>8} {totals.sentences:6d} {totals.recall:7.2f} {totals.precision:7.2f} "
                     f"{totals.f1:7.2f} {totals.exact_match:7.2f}")
    return "\n".join(lines)


def format_comparison(comparison: Comparison) -> str:
    lines = [f"stratified shuffling: {comparison.trials} trials, seed {comparison.seed}, "
             f"{comparison.sentences} sentences ({comparison.left_out} left out: not scored for both)",
             f"{'metric':<10} {'A':>7} {'B':>7} {'A-B':>7} {'p':>9}"]
    for m in comparison.metrics:
        lines.append(f"{m.metric:<10} {m.a:7.2f} {m.b:7.2f} {m.difference:7.2f} {m.p_value:9.4f}")
    return "\n".join(lines)
