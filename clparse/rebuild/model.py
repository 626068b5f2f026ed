"""The parser's model at Θ̂: for each label λ the trees 1..t with Θ_λ^t >= Θ̂ > Θ_λ^(t+1).

Since Θ only falls during training, that is a prefix of the stored trees. A label whose training
has not yet gone below Θ̂ (and has not converged) is not calibrated at Θ̂: loading refuses and
names it, rather than silently using a shorter ensemble. Everything else the parser needs (the
feature ids, vocabulary, feature settings, K) comes from the same database.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clparse.errors import ConfigurationError, NotCalibratedError
from clparse.features.space import FeatureConfig, FeatureKey
from clparse.forest import Forest
from clparse.preprocess.vocabulary import Vocabulary
from clparse.store import reading
from clparse.store.database import Database


@dataclass
class LabelEnsemble:
    """A label's trees 1..``trees`` at Θ̂, as one :class:`~clparse.forest.Forest`."""

    label: str
    forest: Forest

    @property
    def trees(self) -> int:
        return self.forest.trees

    @property
    def splits(self) -> int:
        return self.forest.splits

    def score(self, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Q(I) = Σ_t q^t(I) for every row (sorted feature ids) of a CSR batch."""
        return self.forest.score(indptr, indices)


class StoredFeatureIds(dict[FeatureKey, int]):
    """Every stored feature's id by key, read from the database when first looked at.

    A parser needs only the features its trees test (:meth:`ParserModel.for_scoring`); reading all of
    them (~150,000 on GUM) took longer than the rest of loading, so it waits until someone asks."""

    def __init__(self, db: Path) -> None:
        super().__init__()
        self.db: Path | None = db

    def _read(self) -> None:
        if self.db is not None:
            db, self.db = self.db, None
            with Database(db, readonly=True) as database, database.raw() as connection:
                super().update(reading.feature_ids(connection))

    def __getitem__(self, key: FeatureKey) -> int:
        self._read()
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._read()
        return super().__contains__(key)

    def __iter__(self) -> Iterator[FeatureKey]:
        self._read()
        return super().__iter__()

    def __len__(self) -> int:
        self._read()
        return super().__len__()

    def __eq__(self, other: object) -> bool:
        self._read()
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._read()
        return super().__repr__()

    def get(self, key: FeatureKey, default: Any = None) -> Any:
        self._read()
        return super().get(key, default)

    def keys(self) -> Any:
        self._read()
        return super().keys()

    def values(self) -> Any:
        self._read()
        return super().values()

    def items(self) -> Any:
        self._read()
        return super().items()

    def copy(self) -> dict[FeatureKey, int]:
        self._read()
        return dict(super().items())

    def __reduce__(self) -> Any:
        return dict, (dict(self.items()),)


@dataclass
class ParserModel:
    theta: float
    ensembles: dict[str, LabelEnsemble]
    feature_ids: dict[FeatureKey, int]  # every stored feature (from load_model: read when first used)
    vocabulary: Vocabulary
    features: FeatureConfig
    max_children: int
    db: Path
    constraints: bool = False  # the run's candidate constraints; runs prepared before they existed had none
    label_thetas: dict[str, float] | None = None  # per-label Θ̂ (then ``theta`` is the largest of them)
    order: str = "random"  # the run's item order (paper §3.5): the search allows the spans prepare did
    tested_ids: dict[FeatureKey, int] | None = None  # the features some tree tests, if read apart
    _for_scoring: ParserModel | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(sorted(self.ensembles))

    def for_scoring(self) -> ParserModel:
        """This model with ``feature_ids`` holding only the features some tree tests (its scores are the
        same: no tree tests another), made once: what the parser compiles, without reading every
        stored feature."""
        found = self._for_scoring
        if found is None:
            if self.tested_ids is None:
                tested = features_tested(self.ensembles)
                self.tested_ids = {key: i for key, i in self.feature_ids.items() if i in tested}
            found = dataclasses.replace(self, feature_ids=self.tested_ids)
            self._for_scoring = found
        return found

    @property
    def splits(self) -> int:
        return sum(e.splits for e in self.ensembles.values())


def features_tested(ensembles: Mapping[str, LabelEnsemble]) -> set[int]:
    """The ids of the features some tree tests: all that scoring reads."""
    found = [e.forest.feature[e.forest.feature >= 0] for e in ensembles.values()]
    return {int(f) for f in np.unique(np.concatenate(found))} if found else set()


Thetas = float | Mapping[str, float]  # one Θ̂ for every label, or one per label (per-label calibration)


def theta_of(theta: Thetas, label: str) -> float:
    return theta if isinstance(theta, (int, float)) else float(theta[label])


def per_label(theta: Thetas, labels: Sequence[str]) -> dict[str, float]:
    """Θ̂ for each of ``labels``."""
    return {label: theta_of(theta, label) for label in labels}


def trees_at_theta(db: Database | str | Path, theta: Thetas) -> tuple[dict[str, int], dict[str, str]]:
    """(label -> number of trees at Θ̂, label -> why it is not calibrated at Θ̂) for every label.

    ``theta`` is one Θ̂ for all labels or a Θ̂ per label (a label missing from it is an error)."""
    database = Database.of(db, readonly=True)
    with database.raw() as connection:
        counts, missing, _ = reading.trees_at(connection, database.path,
                                              per_label(theta, reading.labels(connection)))
    return counts, missing


def run_vocabulary(settings: dict[str, Any], rows: Sequence[tuple[str, int]]) -> Vocabulary:
    """The run's vocabulary as ``prepare`` normalized words with it (runs before signatures had none)."""
    return Vocabulary.from_rows(rows, settings["vocab_min"], settings.get("unknown_words") == "signatures")


def usable_range(db: Database | str | Path) -> str:
    """Which Θ̂ give a parser with trees, said as a sentence (for error messages)."""
    from clparse.store.models import Models

    top, floor = Models(Database.of(db, readonly=True)).theta_range()
    if top is None:
        return "no label has a tree yet: run `clparse train` first"
    low = f"above {floor:.4g}" if floor is not None else "above 0"
    return f"use a Θ̂ {low} and at most {top:.4g}"


def best_theta(db: Database | str | Path, aggregator: str | None = None) -> Thetas:
    """The best Θ̂ of the most recently updated calibration made with ``aggregator`` (None, or none made
    with it: of any): per label if it was calibrated per label."""
    from clparse.store.calibration import Calibrations

    database = Database.of(db, readonly=True)
    store = Calibrations(database)
    found = store.read_by_theta_best(aggregator)
    if found is None:
        with database.raw() as connection:  # no run at all: "run calibrate" led to "prepare has no dev"
            reading.run(connection, database.path)  # raises "no prepared run; run clparse prepare"
        raise NotCalibratedError(database.path, f"{database.path}: not calibrated yet; run "
                                 f"`clparse calibrate --db {database.path}` or give --theta X")
    per_label = store.per_label_thetas(found[0])
    return per_label if per_label is not None else found[1]


def load_model(db: Database | str | Path, theta: Thetas) -> ParserModel:
    """Rebuild every label's classifier at Θ̂ = ``theta`` (one for all, or one per label) from the database.

    Everything is read in one read transaction, the trees of all labels in one statement, and of the
    stored features only those some tree tests (``tested_ids``); ``feature_ids`` reads the rest when
    first used."""
    database = Database.of(db, readonly=True)
    db = database.path
    values = [theta] if isinstance(theta, (int, float)) else list(theta.values())
    if not all(t > 0 and math.isfinite(t) for t in values):
        raise ConfigurationError(f"Θ̂ must be a positive number, got {theta}")
    with database.raw() as connection:
        _, config = reading.run(connection, db)
        labels = reading.labels(connection)
        if not isinstance(theta, (int, float)):
            unknown = set(theta) ^ set(labels)
            if unknown:
                raise ConfigurationError(f"{db}: per-label Θ̂ must name exactly the run's labels "
                                         f"(differs on {', '.join(sorted(unknown))})")
        counts, missing, trees = reading.trees_at(connection, db, per_label(theta, labels), load=True)
        shown = f"{theta:g}" if isinstance(theta, (int, float)) else "per label"
        if missing:
            listed = "; ".join(f"{label}: {why}" for label, why in missing.items())
            lowest = min(values)
            raise ConfigurationError(f"{db}: not every label is trained past Θ̂ = {shown} ({listed}); "
                                     f"train further (`clparse train --until-theta {lowest:g}`) or pick a "
                                     "larger Θ̂")
        if counts and not any(counts.values()):
            raise ConfigurationError(f"{db}: Θ̂ = {shown} is above every label's first Θ, so no tree would be "
                                     f"used (a parser that builds nothing); {usable_range(database)}")
        ensembles = {label: LabelEnsemble(label, Forest.from_trees(trees[label])) for label in counts}
        words = reading.vocabulary(connection)
        tested_ids = reading.feature_ids(connection, features_tested(ensembles))
    settings = config["settings"]
    return ParserModel(max(values), ensembles, StoredFeatureIds(db), run_vocabulary(settings, words),
                       FeatureConfig.from_dict(settings["features"]), settings["max_children"], db,
                       bool(settings.get("constraints", False)),
                       None if isinstance(theta, (int, float)) else dict(theta),
                       settings.get("order", "random"), tested_ids)
