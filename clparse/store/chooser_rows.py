"""What a ``tag_choosers`` row's ``weights_json`` must hold: the chooser's weights by name, in order.

Kept apart from :mod:`clparse.store.tag_choosers` (SQLAlchemy) so that loading a parser, which reads the
row in plain SQL (:mod:`clparse.store.reading`), and ``clparse check`` (:mod:`clparse.store.verify`) judge a
row by the same rule without importing more than this.
"""

from __future__ import annotations

import json
import math

#: A chooser's inputs, in the order of its weights (:data:`clparse.tag.choice.FEATURES` is this tuple).
WEIGHT_NAMES = ("bias", "lowest", "loss", "certainty")


def chooser_weights(weights_json: object) -> tuple[float, ...] | None:
    """The weights a row holds, in :data:`WEIGHT_NAMES` order; None if it holds anything else: not JSON,
    other names or another order, a value that is not a finite number (a string or a boolean included)."""
    if not isinstance(weights_json, str):
        return None
    try:
        weights = json.loads(weights_json)
    except ValueError:
        return None
    if not isinstance(weights, dict) or list(weights) != list(WEIGHT_NAMES):
        return None
    values = [weights[name] for name in WEIGHT_NAMES]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return None
    return tuple(float(v) for v in values)
