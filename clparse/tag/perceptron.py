"""Part-of-speech tagging with NLTK's averaged perceptron, trained here and stored as one JSON string.

NLTK's ``PerceptronTagger()`` loads a downloaded model from ``nltk_data`` and
its ``save_to_json`` writes three files into a directory. clparse keeps every
piece of trained state in SQLite, so this wrapper trains from the caller's
treebank (``load=False``: nothing is downloaded or read from ``nltk_data``) and
turns the weights, tag dictionary and tag set into a single JSON object for a
TEXT column. JSON, not pickle, so a stored model can never run code on load.

>>> data = [[("the", "DT"), ("dog", "NN"), ("barks", "VBZ")], [("a", "DT"), ("cat", "NN"), ("sleeps", "VBZ")]]
>>> tagger = Tagger.train(data * 10)
>>> tagger.tag(["a", "dog", "sleeps"])
['DT', 'NN', 'VBZ']
>>> Tagger.from_json(tagger.to_json()).to_json() == tagger.to_json()
True
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from typing import Any

from nltk.tag.perceptron import PerceptronTagger

from clparse.errors import ConfigurationError
from clparse.tag.checks import checked_sentence, checked_words, is_label

FORMAT = "clparse.tag.perceptron"
FORMAT_VERSION = 1
_KEYS = {"format", "version", "classes", "tagdict", "weights"}


class Tagger:
    """Averaged-perceptron POS tagger (NLTK's implementation), trained locally; JSON in and out."""

    def __init__(self, nltk_tagger: PerceptronTagger) -> None:
        """Wrap a trained NLTK tagger; use :meth:`train` or :meth:`from_json` rather than this."""
        self._tagger = nltk_tagger

    @classmethod
    def train(cls, sentences: Sequence[Sequence[tuple[str, str]]], iterations: int = 5,
              seed: int = 0) -> Tagger:
        """Train on ``(word, tag)`` sentences; the same data and ``seed`` give the same model.

        NLTK shuffles the sentences between iterations with the *global*
        ``random`` module, so that state is saved, seeded and restored here:
        training is reproducible and callers' random streams are untouched.
        """
        if iterations < 1:
            raise ConfigurationError(f"tagger iterations must be at least 1, got {iterations}")
        data = [checked_sentence(sentence, n) for n, sentence in enumerate(sentences)]
        data = [sentence for sentence in data if sentence]  # NLTK cannot unzip an empty sentence
        if not data:
            raise ValueError("no tagged words to train the tagger on")
        tagger = PerceptronTagger(load=False)
        state = random.getstate()
        random.seed(seed)
        try:
            tagger.train(data, nr_iter=iterations)
        finally:
            random.setstate(state)
        return cls(tagger)

    def tag(self, words: Sequence[str]) -> list[str]:
        """One tag per word. Words are the original tokens: case is a feature, so do not lower them."""
        return [tag for _, tag in self._tagger.tag(checked_words(words))]

    def tag_many(self, sentences: Iterable[Sequence[str]]) -> list[list[str]]:
        return [self.tag(words) for words in sentences]

    def accuracy(self, sentences: Sequence[Sequence[tuple[str, str]]]) -> float:
        """Share of tokens tagged as in ``sentences``, pooled over all of them (not per sentence)."""
        correct = total = 0
        for sentence in sentences:
            words = [word for word, _ in sentence]
            predicted = self.tag(words)
            correct += sum(p == gold for p, (_, gold) in zip(predicted, sentence))
            total += len(words)
        if total == 0:
            raise ValueError("no tagged words to score the tagger on")
        return correct / total

    def to_json(self) -> str:
        """The whole model as one JSON object; keys sorted so equal models give equal strings."""
        payload = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "classes": sorted(self._tagger.classes),
            "tagdict": self._tagger.tagdict,
            "weights": self._tagger.model.weights,
        }
        return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Tagger:
        """Rebuild a tagger from :meth:`to_json` output, checking the shape before NLTK sees it.

        A stored model is external input: a bad one must fail here with a
        message, not later inside NLTK with a ``KeyError`` or a wrong tag.
        """
        try:
            payload = json.loads(text, parse_constant=_reject_constant)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ConfigurationError(f"tagger model is not valid JSON: {exc}") from exc
        _require(isinstance(payload, dict), "the top level is not a JSON object")
        _require(payload.get("format") == FORMAT, f"'format' is {payload.get('format')!r}, not {FORMAT!r}")
        _require(payload.get("version") == FORMAT_VERSION,
                 f"format version {payload.get('version')!r} is not supported (expected {FORMAT_VERSION})")
        _require(set(payload) == _KEYS, f"keys are {sorted(payload)}, expected {sorted(_KEYS)}")
        classes, tagdict, weights = payload["classes"], payload["tagdict"], payload["weights"]
        _require(isinstance(classes, list) and classes and all(is_label(c) for c in classes),
                 "'classes' must be a non-empty list of non-empty strings")
        known = set(classes)
        _require(isinstance(tagdict, dict) and all(is_label(w) and t in known for w, t in tagdict.items()),
                 "'tagdict' must map words to tags listed in 'classes'")
        _require(isinstance(weights, dict) and all(_is_row(row, known) for row in weights.values()),
                 "'weights' must map features to {tag in 'classes': finite number}")
        tagger = PerceptronTagger(load=False)
        tagger.decode_json_params((weights, tagdict, classes))
        return cls(tagger)


def _is_row(row: Any, known: set[str]) -> bool:
    return isinstance(row, dict) and all(
        tag in known and isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
        for tag, w in row.items())


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} in tagger weights")


def _require(condition: object, problem: str) -> None:
    if not condition:
        raise ConfigurationError(f"malformed tagger model: {problem}")
