"""Part-of-speech tagging: NLTK's averaged perceptron, trained locally, stored as data in the run.

``Tagger`` is imported on first use: the parser loads NLTK only when it meets untagged input.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Tagger"]


def __getattr__(name: str) -> Any:
    if name == "Tagger":
        from clparse.tag.perceptron import Tagger

        return Tagger
    raise AttributeError(name)
