"""The parser's model at Θ̂: for each label λ the trees 1..t with Θ_λ^t >= Θ̂ > Θ_λ^(t+1).

Since Θ only falls during training, that is a prefix of the stored trees. A label whose training
has not yet gone below Θ̂ (and has not converged) is not calibrated at Θ̂: loading refuses and
names it, rather than silently using a shorter ensemble. Everything else the parser needs (the
feature ids, vocabulary, feature settings, K) comes from the same database.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from numba import njit

from clparse.errors import ConfigurationError, DatabaseError
from clparse.examples.features import FeatureConfig, FeatureKey
from clparse.preprocess.vocabulary import Vocabulary
from clparse.store import schema
from clparse.store.database import open_engine


@dataclass
class LabelEnsemble:
    """A label's trees flattened into node arrays (child indices are global); ``roots`` per tree."""

    label: str
    trees: int
    splits: int
    roots: np.ndarray
    feature: np.ndarray
    true_child: np.ndarray
    false_child: np.ndarray
    value: np.ndarray

    def score(self, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Q(I) = Σ_t q^t(I) for every row (sorted feature ids) of a CSR batch."""
        return _score_rows(indptr, indices, self.roots, self.feature, self.true_child, self.false_child, self.value)


@njit(cache=True, nogil=True)
def _score_rows(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray, feature: np.ndarray,
                true_child: np.ndarray, false_child: np.ndarray, value: np.ndarray) -> np.ndarray:
    out = np.zeros(indptr.shape[0] - 1, dtype=np.float64)
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        total = 0.0
        for t in range(roots.shape[0]):  # trees in order: the same additions training made
            node = roots[t]
            while feature[node] >= 0:
                f = feature[node]
                a, b = lo, hi
                found = False
                while a < b:
                    mid = (a + b) >> 1
                    if indices[mid] == f:
                        found = True
                        break
                    if indices[mid] < f:
                        a = mid + 1
                    else:
                        b = mid
                node = true_child[node] if found else false_child[node]
            total += value[node]
        out[i] = total
    return out


@dataclass
class ParserModel:
    theta: float
    ensembles: dict[str, LabelEnsemble]
    feature_ids: dict[FeatureKey, int]
    vocabulary: Vocabulary
    features: FeatureConfig
    max_children: int
    db: Path
    constraints: bool = False  # the run's candidate constraints (issue #11); runs before them had none
    label_thetas: dict[str, float] | None = None  # per-label Θ̂ (then ``theta`` is the largest of them)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(sorted(self.ensembles))

    @property
    def splits(self) -> int:
        return sum(e.splits for e in self.ensembles.values())


Thetas = float | Mapping[str, float]  # one Θ̂ for every label, or one per label (per-label calibration)


def theta_of(theta: Thetas, label: str) -> float:
    return theta if isinstance(theta, (int, float)) else float(theta[label])


def trees_at_theta(connection: sa.Connection, theta: Thetas) -> tuple[dict[str, int], dict[str, str]]:
    """(label -> number of trees at Θ̂, label -> why it is not calibrated at Θ̂) for every label.

    ``theta`` is one Θ̂ for all labels or a Θ̂ per label (a label missing from it is an error)."""
    lb, lt, it = schema.labels, schema.label_training, schema.iterations
    rows = connection.execute(sa.select(lb.c.id, lb.c.name, lt.c.state, lt.c.iteration, lt.c.theta)
                              .select_from(lb.outerjoin(lt, lt.c.label_id == lb.c.id)).order_by(lb.c.name)).all()
    counts: dict[str, int] = {}
    missing: dict[str, str] = {}
    for label_id, name, state, iteration, last_theta in rows:
        if state is None:
            missing[name] = "never trained"
            continue
        kept = connection.execute(sa.select(sa.func.count()).select_from(it).where(
            it.c.label_id == label_id, it.c.theta >= theta_of(theta, name))).scalar_one()
        passed = kept < (iteration or 0) or state == "converged"
        if not passed:
            missing[name] = f"trained only down to Θ = {last_theta:.6g}" if last_theta is not None \
                else "no iteration yet"
        counts[name] = int(kept)
    return counts, missing


def run_vocabulary(settings: dict[str, Any], rows: Sequence[tuple[str, int]]) -> Vocabulary:
    """The run's vocabulary as ``prepare`` normalized words with it (runs before signatures had none)."""
    return Vocabulary.from_rows(rows, settings["vocab_min"], settings.get("unknown_words") == "signatures")


def usable_range(connection: sa.Connection) -> str:
    """Which Θ̂ give a parser with trees, said as a sentence (for error messages)."""
    it, lt = schema.iterations, schema.label_training
    top = connection.execute(sa.select(sa.func.max(it.c.theta)).where(it.c.iteration == 1)).scalar()
    floor = connection.execute(sa.select(sa.func.max(lt.c.theta)).where(lt.c.state != "converged")).scalar()
    if top is None:
        return "no label has a tree yet: run `clparse train` first"
    low = f"above {floor:.4g}" if floor is not None else "above 0"
    return f"use a Θ̂ {low} and at most {top:.4g}"


def load_model(db: str | Path, theta: Thetas) -> ParserModel:
    """Rebuild every label's classifier at Θ̂ = ``theta`` (one for all, or one per label) from the database."""
    db = Path(db)
    values = [theta] if isinstance(theta, (int, float)) else list(theta.values())
    if not all(t > 0 and math.isfinite(t) for t in values):
        raise ConfigurationError(f"Θ̂ must be a positive number, got {theta}")
    engine = open_engine(db, readonly=True)
    with engine.connect() as connection:
        run = connection.execute(sa.select(schema.runs)).mappings().first()
        if run is None:
            raise DatabaseError(f"{db}: no prepared run; run `clparse prepare` and `clparse train` first")
        config = json.loads(run["config_json"])
        if not isinstance(theta, (int, float)):
            unknown = set(theta) ^ set(connection.execute(sa.select(schema.labels.c.name)).scalars())
            if unknown:
                raise ConfigurationError(f"{db}: per-label Θ̂ must name exactly the run's labels "
                                         f"(differs on {', '.join(sorted(unknown))})")
        counts, missing = trees_at_theta(connection, theta)
        shown = f"{theta:g}" if isinstance(theta, (int, float)) else "per label"
        if missing:
            listed = "; ".join(f"{label}: {why}" for label, why in missing.items())
            lowest = min(values)
            raise ConfigurationError(f"{db}: not every label is trained past Θ̂ = {shown} ({listed}); "
                                     f"train further (`clparse train --until-theta {lowest:g}`) or pick a larger Θ̂")
        if counts and not any(counts.values()):
            raise ConfigurationError(f"{db}: Θ̂ = {shown} is above every label's first Θ, so no tree would be "
                                     f"used (a parser that builds nothing); {usable_range(connection)}")
        ensembles = {label: _ensemble(connection, label, count) for label, count in counts.items()}
        f = schema.features
        feature_ids = {(t, i, p, v): int(fid) for fid, t, i, p, v in connection.execute(
            sa.select(f.c.id, f.c.template, f.c.item, f.c.property, f.c.value).where(f.c.run_id == run["id"]))}
        words = connection.execute(sa.select(schema.vocabulary.c.word, schema.vocabulary.c.count)
                                   .where(schema.vocabulary.c.run_id == run["id"])).all()
    engine.dispose()
    settings = config["settings"]
    return ParserModel(max(values), ensembles, feature_ids, run_vocabulary(settings, words),
                       FeatureConfig.from_dict(settings["features"]), settings["max_children"], db,
                       bool(settings.get("constraints", False)),
                       None if isinstance(theta, (int, float)) else dict(theta))


def _ensemble(connection: sa.Connection, label: str, count: int) -> LabelEnsemble:
    lb, tn = schema.labels, schema.tree_nodes
    rows = connection.execute(
        sa.select(tn.c.iteration, tn.c.node, tn.c.feature_id, tn.c.true_child, tn.c.false_child, tn.c.confidence)
        .select_from(tn.join(lb, lb.c.id == tn.c.label_id))
        .where(lb.c.name == label, tn.c.iteration <= count).order_by(tn.c.iteration, tn.c.node)).all()
    roots: list[int] = []
    offsets: dict[int, int] = {}
    feature: list[int] = []
    true_child: list[int] = []
    false_child: list[int] = []
    value: list[float] = []
    for iteration, node, fid, t, f, conf in rows:
        if node == 0:
            offsets[iteration] = len(feature)
            roots.append(len(feature))
        base = offsets[iteration]
        feature.append(-1 if fid is None else fid)
        true_child.append(-1 if t is None else base + t)
        false_child.append(-1 if f is None else base + f)
        value.append(0.0 if conf is None else conf)
    return LabelEnsemble(label, count, sum(1 for x in feature if x >= 0), np.array(roots, dtype=np.int64),
                         np.array(feature, dtype=np.int32), np.array(true_child, dtype=np.int64),
                         np.array(false_child, dtype=np.int64), np.array(value, dtype=np.float64))
