"""How good the stored tagger is on gold-tagged sentences: accuracy, speed and the commonest confusions."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from clparse.errors import ParameterError


class TagsWords(Protocol):
    def tag(self, words: Sequence[str]) -> list[str]: ...


@dataclass
class TaggingReport:
    sentences: int = 0
    tokens: int = 0
    correct: int = 0
    seconds: float = 0.0
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)  # (gold, predicted) of each error

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.tokens if self.tokens else 0.0

    def to_dict(self, top: int = 20) -> dict[str, Any]:
        _check_top(top)
        return {"sentences": self.sentences, "tokens": self.tokens, "correct": self.correct,
                "accuracy": self.accuracy,
                "tokens_per_second": self.tokens / self.seconds if self.seconds else None,
                "confusions": [{"gold": g, "predicted": p, "count": n} for (g, p),
                               n in self.confusions.most_common(top)]}

    def format(self, top: int = 20) -> str:
        _check_top(top)
        speed = f", {self.tokens / self.seconds:,.0f} tokens/s" if self.seconds else ""
        lines = [(f"{self.sentences:,} sentences, {self.tokens:,} tokens: {self.accuracy:.2f} % tagged as in "
                  f"the gold trees ({self.tokens - self.correct:,} errors){speed}")]
        if self.confusions and top > 0:  # --top 0: no table, not a header over nothing
            lines += ["", f"{'gold':<8} {'tagged':<8} {'count':>6} {'share of errors':>16}"]
            errors = self.tokens - self.correct
            lines += [f"{g:<8} {p:<8} {n:>6} {100.0 * n / errors:>15.1f}%" for (g, p),
                      n in self.confusions.most_common(top)]
        return "\n".join(lines)


def _check_top(top: int) -> None:
    # Counter.most_common(-1) gives every confusion but the rarest: a negative count dropped one in silence
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ParameterError("top", f"must be a whole number ≥ 0, got {top!r}")


def evaluate_tagger(tagger: TagsWords, sentences: Iterable[Sequence[tuple[str, str]]]) -> TaggingReport:
    """Tag the words of gold (word, tag) sentences and compare; timed over the tagging calls only."""
    report = TaggingReport()
    for given in sentences:
        sentence = list(given)  # read once: a generator's pairs were read for the words, then none compared
        if not sentence:
            continue
        words = [w for w, _ in sentence]
        start = time.perf_counter()
        predicted = tagger.tag(words)
        report.seconds += time.perf_counter() - start
        report.sentences += 1
        for (_, gold), guess in zip(sentence, predicted):
            report.tokens += 1
            if gold == guess:
                report.correct += 1
            else:
                report.confusions[gold, guess] += 1
    return report
