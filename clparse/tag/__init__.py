"""Part-of-speech tagging: NLTK's averaged perceptron, trained locally, stored as JSON text."""

from clparse.tag.perceptron import Tagger

__all__ = ["Tagger"]
