"""Which tagging's parse to keep when untagged input is parsed from several taggings.

``parse`` tries the tagger's best tagging and up to N others (one unsure word's tag swapped each,
:meth:`clparse.tag.crf.CrfTagger.scored_alternatives`). Without a fitted chooser it keeps the parse the
search's own key ranks first (the summed loss by default, or max-min). A :class:`TagChooser`, fitted on
the run's dev set by ``clparse calibrate-tags`` (:mod:`clparse.calibrate.tag_chooser`), instead weighs, for
each other tagging against the best one, four numbers by logistic regression:

* ``bias``: 1;
* ``lowest``: its parse's lowest confidence minus the best tagging's parse's (the max-min score);
* ``loss``: the best tagging's parse's summed logistic loss minus its own (every constituent counts,
  not only the weakest, which on a long sentence is usually far from the swapped word);
* ``certainty``: the tagger's log(p_best / p_other) at the swapped word.

The other tagging is kept if its probability of a better parse (sentence F1) is above one half, the most
probable of them if several are; else the best tagging's parse. Measured in docs/tagger.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from clparse.output import ParseResult
from clparse.search.aggregate import logistic_loss
from clparse.store.chooser_rows import WEIGHT_NAMES

#: Why a run whose stored tagger is not the CRF gets no chooser (said after the database's name).
NOT_CRF = ("its stored tagger is not the CRF, which alone gives other taggings to choose among (prepare "
           "again with --tagger crf, the default)")

#: The chooser's inputs, in the order of its weights (as a stored row holds them).
FEATURES = WEIGHT_NAMES


def pair_features(best: ParseResult, other: ParseResult, certainty: float) -> tuple[float, ...] | None:
    """:data:`FEATURES` of ``other`` (a tagging's parse) against ``best`` (the best tagging's); None when
    either is a flat fallback tree or has no constituent (nothing to weigh)."""
    if not _weighable(best) or not _weighable(other):
        return None
    a, b = other.trees[0], best.trees[0]
    return (1.0, min(a.confidences) - min(b.confidences),
            sum(map(logistic_loss, b.confidences)) - sum(map(logistic_loss, a.confidences)), certainty)


def _weighable(result: ParseResult) -> bool:
    """A parse with confidences to weigh: not a flat fallback tree, and at least one constituent."""
    top = result.trees[0]
    return result.fallback is None and top.score is not None and bool(top.confidences)


def probability(weights: Sequence[float], features: Sequence[float]) -> float:
    """The logistic function of ``weights · features``, without overflow."""
    z = math.fsum(w * x for w, x in zip(weights, features, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@dataclass(frozen=True)
class TagChooser:
    """A fitted chooser: one weight per :data:`FEATURES` name (stored per Θ̂: :func:`theta_key`)."""

    weights: tuple[float, ...]

    def pick(self, options: Sequence[tuple[ParseResult, float]]) -> int | None:
        """Index of the parse to keep among ``options``: (parse, the tagger's certainty against its
        tagging), the best tagging's first. Ties between other taggings: the earlier one. None when the
        best tagging's parse is a flat fallback tree (nothing to weigh against: the caller's rule, which
        ranks any parse above a flat tree, decides)."""
        chosen, highest = 0, 0.5
        best = options[0][0]
        if not _weighable(best):
            return None
        for index, (result, certainty) in enumerate(options[1:], 1):
            features = pair_features(best, result, certainty)
            if features is None:
                continue
            p = probability(self.weights, features)
            if p > highest:
                chosen, highest = index, p
        return chosen


def theta_key(theta: float, label_thetas: dict[str, float] | None) -> str:
    """The Θ̂ a chooser belongs to, as stored: the number (``repr``, exact) or the per-label Θ̂ as JSON."""
    if label_thetas is None:
        return repr(float(theta))
    return json.dumps({label: float(t) for label, t in sorted(label_thetas.items())}, sort_keys=True)
