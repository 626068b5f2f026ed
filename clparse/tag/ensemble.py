"""The CRF and the tagger net as one tagger: each word's tag from both their distributions.

A word's probability of tag t is proportional to P_crf(t)^a · P_net(t)^(1-a) (a weighted geometric mean;
a = ``crf_weight``, 0.5 by default: the two count alike, nothing fitted). The CRF's are its marginals given
the whole sentence, the net's its softmax. With several nets (the same recipe, other seeds), P_net is their
geometric mean: the nets together are one opinion beside the CRF's, each net weighing (1 - a) / n. A run
stores one net (``clparse train-tagger``); several are for measuring (``benchmarks/tag_chooser.py
--tagger-net A --tagger-net B``): a second net tags GUM dev better and parses it no better. The tag of a
word is its most probable one, and the taggings ``parse`` tries besides (:meth:`scored_alternatives`) swap
the least sure words' tags for their second, as the CRF alone does. Measured in docs/tagger.md ("A second
opinion: the tagger net", and "Two nets").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from clparse.errors import ConfigurationError
from clparse.tag.checks import checked_words
from clparse.tag.crf import UNSURE, CrfTagger, swapped_taggings, tagging_accuracy
from clparse.tag.net import TaggerNet

#: The floor under a probability before its logarithm: a tag one model gives 0 is unlikely, not vetoed.
FLOOR = 1e-12
CRF_WEIGHT = 0.5
NET_TAGGER = "crf+net"


class EnsembleTagger:
    """A CRF and one or more nets over one tag set (their union: a tag one model does not know gets the floor
    from it)."""

    def __init__(self, crf: CrfTagger, nets: TaggerNet | Sequence[TaggerNet],
                 crf_weight: float = CRF_WEIGHT) -> None:
        if not 0.0 <= crf_weight <= 1.0:
            raise ConfigurationError(f"the CRF's weight in the tagger ensemble must be in [0, 1], not "
                                     f"{crf_weight}")
        self.nets = [nets] if isinstance(nets, TaggerNet) else list(nets)
        if not self.nets:
            raise ConfigurationError("a tagger ensemble needs at least one net beside the CRF")
        self.crf, self.crf_weight = crf, crf_weight
        # which tagger a tag chooser was fitted on (tag_choosers.tagger): the CRF with these very nets
        self.name = tagger_name([net.digest for net in self.nets])
        self._labels = sorted(set(crf.labels()).union(*(net.tags for net in self.nets)))
        index = {tag: k for k, tag in enumerate(self._labels)}
        self._crf_columns = [index[tag] for tag in crf.labels()]
        self._net_columns = [[index[tag] for tag in net.tags] for net in self.nets]

    def probabilities(self, words: Sequence[str]) -> np.ndarray:
        """len(words) × len(:meth:`labels`): each word's distribution over the tags."""
        words = checked_words(words)
        if not words:
            return np.zeros((0, len(self._labels)))
        crf = np.full((len(words), len(self._labels)), FLOOR)
        marginals = self.crf.marginals(words)
        for row, found in zip(crf, marginals):
            row[self._crf_columns] = np.maximum([found[tag] for tag in self.crf.labels()], FLOOR)
        scores = self.crf_weight * np.log(crf)
        share = (1.0 - self.crf_weight) / len(self.nets)
        for net, columns in zip(self.nets, self._net_columns):
            net_table = np.full_like(crf, FLOOR)
            net_table[:, columns] = np.maximum(net.probabilities(words), FLOOR)
            scores += share * np.log(net_table)
        scores -= scores.max(axis=1, keepdims=True)
        combined = np.exp(scores)
        return combined / combined.sum(axis=1, keepdims=True)

    def tag(self, words: Sequence[str]) -> list[str]:
        """One tag per word: its most probable (ties: the first in :meth:`labels` order)."""
        return [self._labels[k] for k in self.probabilities(words).argmax(axis=1)]

    def marginals(self, words: Sequence[str]) -> list[dict[str, float]]:
        return [dict(zip(self._labels, map(float, row))) for row in self.probabilities(words)]

    def alternatives(self, words: Sequence[str], count: int, threshold: float = UNSURE) -> list[list[str]]:
        return [tags for tags, _ in self.scored_alternatives(words, count, threshold)]

    def scored_alternatives(self, words: Sequence[str], count: int,
                            threshold: float = UNSURE) -> list[tuple[list[str], float]]:
        """The best tagging, then up to ``count`` more, each with one unsure word's tag swapped for its
        second most probable (words whose best tag is below ``threshold``, least sure first; ties: the
        earlier word), with log(p_best / p_other) at that word: as :meth:`CrfTagger.scored_alternatives`,
        on the combined probabilities."""
        table = self.probabilities(words)
        best_ids = table.argmax(axis=1)
        best = [self._labels[k] for k in best_ids]
        if count < 1 or not len(best):
            return [(best, 0.0)]
        unsure = []
        for t, row in enumerate(table):
            ranked = np.argsort(-row, kind="stable")
            if row[ranked[0]] < threshold and len(ranked) > 1:
                other = int(ranked[1])
                unsure.append((float(row[ranked[0]]), t, self._labels[other],
                               math.log(row[best_ids[t]]) - math.log(row[other])))
        return swapped_taggings(best, unsure, count)

    def tag_many(self, sentences: Iterable[Sequence[str]]) -> list[list[str]]:
        return [self.tag(words) for words in sentences]

    def accuracy(self, sentences: Sequence[Sequence[tuple[str, str]]]) -> float:
        """Share of tokens tagged as in ``sentences``, pooled over all of them."""
        return tagging_accuracy(self.tag, sentences)

    def labels(self) -> list[str]:
        return list(self._labels)

    def __reduce__(self) -> tuple[object, tuple[bytes, tuple[bytes, ...], float]]:
        # as the CRF: rebuilt from checked bytes in a worker process, nothing else pickled
        return (_rebuilt, (self.crf.to_bytes(), tuple(net.to_bytes() for net in self.nets), self.crf_weight))


def tagger_name(digests: Sequence[str]) -> str:
    """The tagger's name (``tag_choosers.tagger``) for the CRF with nets of these SHA-256 digests (hex), in
    order: ``crf+net:`` and each net's first 16 hex digits, joined by ``+`` (one net: what a stored pair's
    chooser records)."""
    return f"{NET_TAGGER}:" + "+".join(digest[:16] for digest in digests)


def _rebuilt(crf: bytes, nets: tuple[bytes, ...], crf_weight: float) -> EnsembleTagger:
    return EnsembleTagger(CrfTagger.from_bytes(crf), [TaggerNet.from_bytes(net) for net in nets], crf_weight)


def with_net_files(tagger: object, paths: Sequence[str | Path]) -> EnsembleTagger:
    """A run's stored CRF (``tagger``, as :func:`clparse.tag.stored.load_tagger` gives it) with the nets in
    ``paths`` (a net's bytes each, as ``tagger_nets.model_blob`` holds them), replacing any stored net: with
    one path, how ``parse`` would tag once ``clparse train-tagger`` had stored that net; with several, a
    tagger a run cannot store (for measuring). Nothing is written to the database."""
    crf = tagger.crf if isinstance(tagger, EnsembleTagger) else tagger  # nets stored already are replaced
    if not isinstance(crf, CrfTagger):
        raise ConfigurationError("a tagger net is paired with the run's CRF tagger, and this run's tagger "
                                 f"is {type(tagger).__name__}")
    return EnsembleTagger(crf, [TaggerNet.from_bytes(Path(path).read_bytes()) for path in paths])
