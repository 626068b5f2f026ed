"""Last step of the pipeline: EVALB-exact PARSEVAL scoring and significance tests."""

from clparse.evaluate.evalb import (
    EvalbParams,
    Evaluation,
    SentenceResult,
    TooManyErrors,
    Totals,
    evaluate,
    evaluate_sentence,
)
from clparse.evaluate.files import evaluate_files, read_parses
from clparse.evaluate.significance import Comparison, compare

__all__ = [
    "Comparison", "EvalbParams", "Evaluation", "SentenceResult", "TooManyErrors", "Totals", "compare",
    "evaluate", "evaluate_files", "evaluate_sentence", "read_parses",
]
