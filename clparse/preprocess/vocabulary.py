"""The headword vocabulary: lower-cased words, rare ones mapped to ``UNK`` (Table 3, steps 8-9).

The vocabulary is data built from the training sentences and kept with the
model, so parsing normalizes words exactly as training did.

>>> vocab = Vocabulary.build(["The", "the", "THE", "dog"], min_count=2)
>>> vocab.normalize("The"), vocab.normalize("dog"), vocab.normalize("cat")
('the', 'UNK', 'UNK')
>>> Vocabulary.from_rows(vocab.to_rows(), min_count=2) == vocab
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from clparse.errors import ConfigurationError

UNK = "UNK"


@dataclass
class Vocabulary:
    """Counts of lower-cased training words; words seen fewer than ``min_count`` times are UNK."""

    counts: dict[str, int] = field(default_factory=dict)
    min_count: int = 5

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigurationError(f"vocabulary min_count must be at least 1, got {self.min_count}")

    @classmethod
    def build(cls, words: Iterable[str], min_count: int = 5) -> Vocabulary:
        return cls(dict(Counter(word.lower() for word in words)), min_count)

    def normalize(self, word: str) -> str:
        """Lower-case; ``UNK`` if seen fewer than ``min_count`` times (1 keeps every seen word)."""
        lowered = word.lower()
        return lowered if self.counts.get(lowered, 0) >= self.min_count else UNK

    def known_words(self) -> list[str]:
        return sorted(w for w, c in self.counts.items() if c >= self.min_count)

    def __len__(self) -> int:
        """Number of distinct normalized words, UNK included."""
        return len(self.known_words()) + 1

    def to_rows(self) -> list[tuple[str, int]]:
        """``(word, count)`` rows, sorted, for storage."""
        return sorted(self.counts.items())

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, int]], min_count: int) -> Vocabulary:
        return cls({word: int(count) for word, count in rows}, min_count)
