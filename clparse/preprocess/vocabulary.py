"""The headword vocabulary: lower-cased words, rare ones mapped to ``UNK`` (Table 3, steps 8-9).

The vocabulary is data built from the training sentences and kept with the
model, so parsing normalizes words exactly as training did. With
``signatures`` a rare word becomes an *UNK signature* instead of
one ``UNK``: its shape (digits, capitals, hyphen) and a common suffix, so
features can still tell "UNK-ly" from "UNK-Cap".

>>> vocab = Vocabulary.build(["The", "the", "THE", "dog"], min_count=2)
>>> vocab.normalize("The"), vocab.normalize("dog"), vocab.normalize("cat")
('the', 'UNK', 'UNK')
>>> Vocabulary.from_rows(vocab.to_rows(), min_count=2) == vocab
True
>>> shapes = Vocabulary.build(["the"], min_count=1, signatures=True)
>>> [shapes.normalize(w) for w in ["The", "Obama", "1984", "re-elected", "quickly", "NATO", "zzz"]]
['the', 'UNK-Cap', 'UNK-num', 'UNK-hyph-ed', 'UNK-ly', 'UNK-CAPS', 'UNK']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from clparse.errors import ConfigurationError

UNK = "UNK"
#: Suffixes an UNK signature keeps (the first that matches, longest first), after Petrov et al.'s
#: Berkeley parser signatures: inflection and derivation that predict a word's category.
SUFFIXES = ("ment", "ness", "able", "ible", "tion", "sion", "ing", "ity", "ous", "ive", "est", "ist", "ism",
            "ful", "ize", "ise", "ed", "ly", "er", "al", "ic", "es", "s", "y")


def signature(word: str) -> str:
    """The UNK signature of a rare word: ``UNK`` plus shape marks and a suffix.

    >>> signature("Running"), signature("3.5"), signature("x-ray"), signature("iPhone")
    ('UNK-Cap-ing', 'UNK-num', 'UNK-hyph-y', 'UNK-mixed')
    """
    parts = [UNK]
    if any(c.isdigit() for c in word):
        parts.append("num")
    elif word[:1].isupper():
        parts.append("CAPS" if len(word) > 1 and word.isupper() else "Cap")
    elif any(c.isupper() for c in word[1:]):
        parts.append("mixed")
    if "-" in word:
        parts.append("hyph")
    lower = word.lower()
    if not any(c.isdigit() for c in word) and lower.isascii():
        suffix = next((x for x in SUFFIXES if lower.endswith(x) and len(lower) >= len(x) + 2), None)
        if suffix is not None and not word.isupper():
            parts.append(suffix)
    return "-".join(parts)


@dataclass
class Vocabulary:
    """Counts of lower-cased training words; words seen fewer than ``min_count`` times are UNK."""

    counts: dict[str, int] = field(default_factory=dict)
    min_count: int = 5
    signatures: bool = False  # rare words become UNK signatures instead of one UNK

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigurationError(f"vocabulary min_count must be at least 1, got {self.min_count}")

    @classmethod
    def build(cls, words: Iterable[str], min_count: int = 5, signatures: bool = False) -> Vocabulary:
        return cls(dict(Counter(word.lower() for word in words)), min_count, signatures)

    def normalize(self, word: str) -> str:
        """Lower-case; ``UNK`` (or its signature) if seen fewer than ``min_count`` times (1 keeps every seen
        word)."""
        lowered = word.lower()
        if self.counts.get(lowered, 0) >= self.min_count:
            return lowered
        return signature(word) if self.signatures else UNK

    def known_words(self) -> list[str]:
        return sorted(w for w, c in self.counts.items() if c >= self.min_count)

    def __len__(self) -> int:
        """Number of distinct normalized words, UNK included."""
        return len(self.known_words()) + 1

    def to_rows(self) -> list[tuple[str, int]]:
        """``(word, count)`` rows, sorted, for storage."""
        return sorted(self.counts.items())

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, int]], min_count: int,
                  signatures: bool = False) -> Vocabulary:
        return cls({word: int(count) for word, count in rows}, min_count, signatures)
