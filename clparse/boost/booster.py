"""One label's boosting loop, in memory: weights from margins, grow a tree, update margins.

The booster knows nothing of the database; :mod:`clparse.store.training` loads its inputs and
commits each :class:`IterationResult`. Its whole state is (iteration, Θ, margins), so a booster
rebuilt from a committed state continues bit-identically.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from clparse.boost.l1 import grow_tree_l1
from clparse.boost.loss import LOSSES, example_weights, total_loss
from clparse.boost.sampling import priority_sample, stratified_sample, take_rows
from clparse.boost.tree import GrownTree, grow_tree, refit
from clparse.errors import ConfigurationError, ParameterError

RULES = ("mrl", "l1")
#: Settings added after the first release, at the values that reproduce the behaviour before them.
LATER_SETTINGS: dict[str, Any] = {"smoothing": 0.0, "rule": "mrl", "sample": None, "sample_seed": 0,
                                  "sample_stratified": False}
DEFAULT_SMOOTHING = 0.5


@dataclass(frozen=True)
class BoostSettings:
    """How a label is boosted; stored with the label and fixed once training starts."""

    loss: str = "logistic"
    max_depth: int | None = None  # 1 = decision stumps (paper §3.4); None = grown until no leaf reaches Θ
    epsilon: float = 1e-8
    checkpoint_every: int = 50  # keep the margin vector every N iterations (SQL weights at any iteration)
    # Leaf smoothing (Schapire & Singer's ε; measured in docs/accuracy.md): ε^t = epsilon + smoothing ×
    # the mean weight of a candidate example at iteration t (Σ w / Σ m). Schapire & Singer (1999)
    # suggest ε = 1/(2N) for weights summing to 1,
    # i.e. smoothing = 0.5, the default since the ablation measured it +0.74 F1 (docs/accuracy.md).
    # 0 keeps the paper's fixed ε. None: the rule's default (0.5 for mrl, 0 for l1), resolved at once.
    smoothing: float | None = None
    # How trees are grown: "mrl", the paper's (ΔZ splits under Θ, κ = ½ ln(W+/W−)), or "l1",
    # the authors' 2006 release (|W+ − W−| gains and confidences under an ℓ1 penalty λ that takes Θ's place;
    # see clparse.boost.l1). Logistic loss only.
    rule: str = "mrl"
    # Split search on a priority sample of at most this many distinct examples per tree (the
    # authors' release used 100,000), leaf confidences still from all (clparse.boost.sampling). None: exact.
    sample: int | None = None
    sample_seed: int = 0  # the sample of iteration t is drawn from a generator seeded (sample_seed, t)
    # Positives and negatives sampled apart (a label with at most sample/2 positives keeps them all), and a
    # sample on which no split gains grows that tree on every example instead of ending the label (issue 27:
    # one sample over both classes lost the rare labels' positives). False: the first version, kept for
    # runs stored before it (their settings lack the key).
    sample_stratified: bool = True

    def __post_init__(self) -> None:
        if self.smoothing is None:
            object.__setattr__(self, "smoothing", DEFAULT_SMOOTHING if self.rule == "mrl" else 0.0)
        if self.sample is None:  # exact: nothing to stratify (and runs stored before the key compare equal)
            object.__setattr__(self, "sample_stratified", False)
        if self.loss not in LOSSES:
            raise ConfigurationError(f"unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}")
        if self.max_depth is not None and self.max_depth < 1:
            raise ConfigurationError(f"max_depth must be at least 1, got {self.max_depth}")
        if not self.epsilon > 0:
            raise ConfigurationError(f"epsilon must be positive, got {self.epsilon}")
        if not (self.smoothing is not None and self.smoothing >= 0 and math.isfinite(self.smoothing)):
            raise ParameterError("smoothing", f"must be a non-negative number, got {self.smoothing}")
        if self.rule not in RULES:
            raise ParameterError("rule", f"unknown tree rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.rule == "l1" and self.loss != "logistic":
            raise ConfigurationError("the l1 rule's confidences are for the logistic loss only")
        if self.rule == "l1" and self.smoothing:
            raise ParameterError("smoothing",
                                 "is for the mrl rule (give 0 with the l1 rule, whose penalty tempers "
                                 "confidences)")
        if self.checkpoint_every < 1:
            raise ParameterError("checkpoint_every", f"must be at least 1, got {self.checkpoint_every}")
        if self.sample is not None and self.sample < 2:
            raise ParameterError("sample", f"must be at least 2 examples, got {self.sample}")
        if self.sample is not None and self.rule != "mrl":
            raise ParameterError("sample", "is for the mrl rule")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> BoostSettings:
        """Stored settings; one added since they were stored takes the behaviour from before it existed."""
        return cls(**{**LATER_SETTINGS, **values})

    def leaf_epsilon(self, weights: np.ndarray, multiplicity: np.ndarray) -> float:
        """ε of this iteration's leaf confidences."""
        if self.smoothing == 0:
            return self.epsilon
        return self.epsilon + float(self.smoothing or 0.0) * float(weights.sum()) / float(multiplicity.sum())


@dataclass
class IterationResult:
    iteration: int
    tree: GrownTree
    loss_before: float
    loss_after: float
    weight_positive: float
    weight_negative: float
    weight_max: float
    seconds: float
    search_seconds: float

    @property
    def theta(self) -> float:
        return self.tree.theta

    @property
    def z(self) -> float:
        return float(sum(2.0 * math.sqrt(n.w_positive * n.w_negative) for n in self.tree.nodes if n.is_leaf))


class Booster:
    """Boosting state of one label over its (deduplicated) examples."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, n_features: int, y: np.ndarray,
                 multiplicity: np.ndarray, settings: BoostSettings = BoostSettings(),
                 margins: np.ndarray | None = None, iteration: int = 0, theta: float = math.inf) -> None:
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int32)
        self.n_features = n_features
        self.y = np.ascontiguousarray(y, dtype=np.int8)
        self.positive = self.y > 0
        self.multiplicity = np.ascontiguousarray(multiplicity, dtype=np.float64)
        self.settings = settings
        n = len(self.y)
        self.margins = (np.zeros(n, dtype=np.float64) if margins is None
                        else np.array(margins, dtype=np.float64))
        if self.margins.shape != (n,):
            raise ValueError(f"margins have shape {self.margins.shape}, expected ({n},)")
        self.iteration = iteration
        self.theta = theta
        self._loss: float | None = None  # the loss of the current margins, once computed

    def weights(self) -> np.ndarray:
        return example_weights(self.settings.loss, self.y, self.multiplicity, self.margins)

    def loss(self) -> float:
        if self._loss is None:
            self._loss = total_loss(self.settings.loss, self.y, self.multiplicity, self.margins)
        return self._loss

    def step(self) -> IterationResult | None:
        """Grow and add the next tree; None when no split reduces loss at all (converged)."""
        start = time.perf_counter()
        weights = self.weights()
        loss_before = self.loss()
        if self.settings.rule == "l1":
            grown = grow_tree_l1(self.indptr, self.indices, self.n_features, self.y, weights,
                                 self.multiplicity, self.margins, self.theta, self.settings.max_depth)
            if grown is None:
                return None
            tree = grown
        elif self.settings.sample is not None and self.settings.sample < len(weights):
            epsilon = self.settings.leaf_epsilon(weights, self.multiplicity)
            if self.settings.sample_stratified:
                kept, carried = stratified_sample(weights, self.positive, self.settings.sample,
                                                  self.settings.sample_seed, self.iteration + 1)
            else:
                kept, carried = priority_sample(weights, self.settings.sample, self.settings.sample_seed,
                                                self.iteration + 1)
            indptr, indices = take_rows(self.indptr, self.indices, kept)
            grown = grow_tree(indptr, indices, self.n_features, self.positive[kept], carried,
                              self.multiplicity[kept], self.theta, self.settings.max_depth, epsilon)
            if grown.splits > 0:
                tree = refit(grown, self.indptr, self.indices, self.positive, weights, self.multiplicity,
                             epsilon)
            elif self.settings.sample_stratified:  # the sample found nothing: ask every example
                tree = grow_tree(self.indptr, self.indices, self.n_features, self.positive, weights,
                                 self.multiplicity, self.theta, self.settings.max_depth, epsilon)
                if tree.splits == 0:
                    return None
            else:
                return None
        else:
            tree = grow_tree(self.indptr, self.indices, self.n_features, self.positive, weights,
                             self.multiplicity, self.theta, self.settings.max_depth,
                             self.settings.leaf_epsilon(weights, self.multiplicity))
            if tree.splits == 0:
                return None
        search_seconds = time.perf_counter() - start
        values = tree.forest().value
        self.margins += values[tree.leaf_of]
        self._loss = None
        self.iteration += 1
        self.theta = tree.theta
        return IterationResult(
            self.iteration, tree, loss_before, self.loss(),
            float(weights[self.positive].sum()), float(weights[~self.positive].sum()),
            float(weights.max()) if len(weights) else 0.0, time.perf_counter() - start, search_seconds)
