"""Rebuilding classifiers from the database at a chosen Θ̂ (paper §2.1.3)."""

from clparse.rebuild.model import LabelEnsemble, ParserModel, load_model, trees_at_theta

__all__ = ["LabelEnsemble", "ParserModel", "load_model", "trees_at_theta"]
