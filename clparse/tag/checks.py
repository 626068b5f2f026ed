"""Input checks every tagger shares (no tagger library imported: loading one tagger loads only its own)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def checked_words(words: Iterable[str]) -> list[str]:
    """The words as a list, read once (a generator was read here and was then empty for the tagging: the
    perceptron gave no tags, the CRF a TypeError); a bare string or a word that is not a non-empty string
    is refused."""
    if isinstance(words, str):
        raise TypeError("tag() takes a sequence of words, not one string")
    words = list(words)
    for position, word in enumerate(words):
        if not isinstance(word, str) or not word:
            raise ValueError(f"word {position} is {word!r}; the tagger needs non-empty string tokens")
    return words


def checked_sentence(sentence: Sequence[tuple[str, str]], index: int) -> list[tuple[str, str]]:
    """Copy one training sentence, refusing empty words or tags (NLTK treats an empty tag as 'no tag')."""
    pairs = [(word, tag) for word, tag in sentence]
    for position, (word, tag) in enumerate(pairs):
        if not is_label(word) or not is_label(tag):
            raise ValueError(f"sentence {index}, word {position}: ({word!r}, {tag!r}) needs a non-empty "
                             "word and tag")
    return pairs


def is_label(value: Any) -> bool:
    return isinstance(value, str) and value != ""
