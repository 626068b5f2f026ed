"""``clparse calibrate``: parse the dev set at each candidate Θ̂ and store the scores as they come.

Every finished Θ̂ is committed at once (its totals and per-label scores), so a calibration that is
stopped resumes at the first Θ̂ it has not finished; nothing finished is parsed again. A
calibration is identified by its dev sentences and search settings: other settings start another.
The best Θ̂ (highest F1; on a tie the larger Θ̂, which has fewer splits) is marked as points arrive.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from clparse.errors import ConfigurationError, ParameterError
from clparse.evaluate import EvalbParams, evaluate
from clparse.evaluate.evalb import score_view
from clparse.parser import DEFAULT_AGGREGATOR, Parser, SearchOptions
from clparse.preprocess.pipeline import PreprocessConfig, sentence_length
from clparse.read import read_trees
from clparse.read.ptb import format_tree, parse_tree
from clparse.read.tree import Tree
from clparse.rebuild.model import ParserModel, load_model, trees_at_theta, usable_range
from clparse.store.calibration import Calibrations
from clparse.store.database import Database
from clparse.store.models import Models
from clparse.store.runs import Runs
from clparse.tag.stored import NONE_TAG, PosTagger, load_tagger

EQUIVALENT = {"PRT": "ADVP"}  # COLLINS.prm's EQ_LABEL, for the per-label table


@dataclass(frozen=True)
class CalibrationSettings:
    beam: int = 1000
    max_pops: int = 10_000
    aggregator: str = DEFAULT_AGGREGATOR
    tags: str = "gold"  # gold | tagger

    def __post_init__(self) -> None:
        if self.tags not in ("gold", "tagger"):
            raise ConfigurationError(f"tags must be 'gold' or 'tagger', got {self.tags!r}")
        _ = self.search  # validates

    @property
    def search(self) -> SearchOptions:
        """The search settings, as ``parse`` takes them (the same dataclass and checks)."""
        return SearchOptions(self.beam, self.max_pops, self.aggregator)


@dataclass
class CalibrationPoint:
    theta: float
    trees: int
    splits: int
    sentences: int
    fallbacks: int
    recall: float
    precision: float
    f1: float
    exact: float
    seconds: float
    completions: int = 0  # sentences the search finished greedily at the pop cap
    resumed: bool = False  # read back, not parsed now


@dataclass
class CalibrationResult:
    calibration_id: int  # 0: none (every Θ̂ skipped, nothing stored)
    points: list[CalibrationPoint] = field(default_factory=list)
    best_theta: float | None = None
    skipped: dict[float, str] = field(default_factory=dict)  # Θ̂ not calibrated, and why


def default_tags(db: Database | str | Path) -> str:
    """``tagger`` if the run's training trees carry jackknifed tagger tags alone, else ``gold`` (``both``
    runs too: their gold-tag copies are every sentence)."""
    settings = Runs(Database.of(db, readonly=True)).config()["settings"]
    return "tagger" if settings.get("train_tags") == "jackknife" else "gold"


def dev_trees(db: Database | str | Path, files: Sequence[str | Path] = (),
              note: Callable[[str], object] | None = None) -> list[Tree]:
    """Gold dev trees: the database's dev split, or ``files`` filtered to the run's length limit (``note``
    is told how many were left out, if any)."""
    runs = Runs(Database.of(db, readonly=True))
    config = runs.config()
    stored = runs.gold_trees("dev")
    if not files:
        if not stored:
            raise ParameterError("dev", f"{runs.path} has no dev sentences: give dev treebank files")
        return [parse_tree(text) for text in stored]
    limit = PreprocessConfig.from_dict(config["preprocess"]).max_words
    trees = [t for path in files for t in read_trees(path)]
    kept = [t for t in trees if limit is None or sentence_length(t) <= limit]
    if not kept:  # the calibration's row was written, then its first point failed as a database error
        names = ", ".join(map(str, files))
        raise ParameterError("dev", f"{names}: none of the {len(trees)} trees has at most {limit} words, the "
                                    "run's length limit (prepare's --max-words): nothing to calibrate on")
    if note is not None and len(kept) < len(trees):  # the F1 is of these alone: said, not left out in silence
        note(f"dev: {len(kept)} of the {len(trees)} trees, those of at most {limit} words (the run's length "
             "limit)")
    return kept


def default_grid(db: Database | str | Path, points: int = 12) -> list[float]:
    """Up to ``points`` stored Θ values, spread geometrically, at which every label is calibrated."""
    stored, floors, unstarted = Models(Database.of(db, readonly=True)).stored_thetas()
    values = np.array(stored, dtype=float)
    if unstarted or not len(values):
        raise ConfigurationError(f"{db}: not every label has been trained; run `clparse train --db {db}` "
                                 "first")
    lowest = max((f for f in floors if f is not None), default=0.0)
    usable = values[values > lowest]
    if not len(usable):
        raise ConfigurationError(f"{db}: no Θ̂ at which every label is calibrated; train further")
    top = float(np.quantile(usable, 0.9))
    usable = usable[usable <= top] if (usable <= top).any() else usable
    targets = np.geomspace(usable.min(), usable.max(), num=min(points, len(usable)))
    chosen = {float(usable[np.searchsorted(usable, t, side="left").clip(0, len(usable) - 1)])
              for t in targets}
    return sorted(chosen, reverse=True)


def _digest(settings: CalibrationSettings, gold: Sequence[Tree]) -> str:
    # "pop_cap": since 0.2 a search at the pop cap completes greedily instead of giving a flat tree, so
    # points parsed before cannot be resumed into the same calibration.
    # tagger tags: see parse_dev
    extra: dict[str, str] = {"scoring": "gold tags on the leaves"} if settings.tags == "tagger" else {}
    if any(tree.label == "" for tree in gold):  # points scored with the bare wrapper counted are not resumed
        extra["wrapper"] = "bare wrapper not scored"
    payload = json.dumps({"settings": asdict(settings), "dev": [format_tree(t) for t in gold],
                          "pop_cap": "complete greedily", **extra}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def calibration_id(db: Database, settings: CalibrationSettings, gold: Sequence[Tree], source: str) -> int:
    """The calibration of these settings and dev trees (created if new)."""
    return Calibrations(db).find_or_create(_digest(settings, gold),
                                           json.dumps({**asdict(settings), "dev": source}))


def per_label(gold: Sequence[Tree], test: Sequence[Tree],
              params: EvalbParams) -> dict[str, tuple[int, int, int]]:
    """label -> (gold brackets, test brackets, matched), brackets as EVALB scores them."""
    counts: dict[str, list[int]] = {}
    for g, t in zip(gold, test):
        gold_view, test_view = score_view(g, params), score_view(t, params)
        if gold_view.words != test_view.words:
            continue  # EVALB leaves such sentences out
        gb = Counter((EQUIVALENT.get(b.label, b.label), b.start, b.end) for b in gold_view.brackets)
        tb = Counter((EQUIVALENT.get(b.label, b.label), b.start, b.end) for b in test_view.brackets)
        for key in gb | tb:
            row = counts.setdefault(key[0], [0, 0, 0])
            row[0] += gb[key]
            row[1] += tb[key]
            row[2] += min(gb[key], tb[key])
    return {label: (g, t, m) for label, (g, t, m) in sorted(counts.items())}


def _f1(recall: float, precision: float) -> float:
    return 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)


def calibrate(db: str | Path, dev_files: Sequence[str | Path] = (), thetas: Sequence[float] | None = None,
              settings: CalibrationSettings = CalibrationSettings(),
              on_sentence: Callable[[float, int, int], object] | None = None,
              should_stop: Callable[[], bool] = lambda: False) -> CalibrationResult:
    """Parse the dev trees at each Θ̂ (default: :func:`default_grid`), storing each point as it finishes."""
    with Database(db) as database:
        gold = dev_trees(database, dev_files)
        grid = sorted({float(t) for t in (thetas if thetas else default_grid(database))}, reverse=True)
        if any(not (t > 0 and math.isfinite(t)) for t in grid):
            raise ConfigurationError("every Θ̂ must be a positive number")
        # refused before the calibration's row is written: a failure after it left an empty calibration
        # (best NULL) that `report` listed as an empty table
        untrained: dict[float, dict[str, str]] = {}
        for theta in grid:
            counts, missing = trees_at_theta(database, theta)
            if missing:
                untrained[theta] = missing
            elif counts and not any(counts.values()):
                raise ConfigurationError(f"{db}: Θ̂ = {theta:g} is above every label's first Θ, so no tree "
                                         f"would be used (a parser that builds nothing); "
                                         f"{usable_range(database)}")
        skipped = {theta: "; ".join(f"{label}: {why}" for label, why in missing.items())
                   for theta, missing in untrained.items()}
        if len(untrained) == len(grid):  # nothing to parse: no calibration row (`report` listed it, empty)
            return CalibrationResult(0, skipped=skipped)
        tagger = load_tagger(database) if settings.tags == "tagger" else None
        if settings.tags == "tagger" and tagger is None:
            raise ConfigurationError(f"{db} has no tagger; run `clparse prepare` again with the same inputs "
                                     "to add one")
        params = EvalbParams()
        store = Calibrations(database)
        result = CalibrationResult(calibration_id(database, settings, gold,
                                                  ",".join(map(str, dev_files)) or "database"))
        for theta in grid:
            done = store.point(result.calibration_id, theta)
            if done is not None:
                result.points.append(_stored_point(done))
                continue
            if theta in skipped:
                result.skipped[theta] = skipped[theta]
                continue
            if should_stop():
                break
            _refuse_per_label(store, result.calibration_id, db)
            point = _parse_point(database, result.calibration_id, theta, gold, settings, tagger, params,
                                 on_sentence, should_stop)
            if point is None:  # stopped midway: the unfinished Θ̂ is dropped and parsed again on resume
                break
            result.points.append(point)
        result.best_theta = store.mark_best(result.calibration_id)
    return result


def _refuse_per_label(store: Calibrations, calibration_id: int, db: str | Path) -> None:
    """A calibration tuned per label takes no new Θ̂: the trials started from its best Θ̂ and walked its grid,
    so a new point could move the best under them, and `--theta best` would use trials measured from one
    Θ̂ with every other label at another (a parser nobody scored)."""
    trials = store.trials(calibration_id)
    if trials:
        raise ConfigurationError(
            f"{db}: calibration {calibration_id} was tuned per label ({len(trials)} trials from its best "
            f"Θ̂ {store.best_theta(calibration_id):g}), so it takes no new Θ̂; calibrate with other settings, "
            f"or delete the trials first: clparse sql --db {db} --write \"DELETE FROM label_theta_steps "
            f"WHERE calibration_id = {calibration_id}\"")


def _parse_point(db: Database, calibration_id: int, theta: float, gold: Sequence[Tree],
                 settings: CalibrationSettings, tagger: PosTagger | None, params: EvalbParams,
                 on_sentence: Callable[[float, int, int], object] | None,
                 should_stop: Callable[[], bool]) -> CalibrationPoint | None:
    start = time.perf_counter()
    model = load_model(db, theta)
    parsed = parse_dev(db, model, gold, settings, tagger,
                       None if on_sentence is None else lambda done: on_sentence(theta, done, len(gold)),
                       should_stop)
    if parsed is None:
        return None
    test, fallbacks, completions = parsed
    totals = evaluate(gold, test, params).all
    labels = per_label(gold, test, params)
    point = CalibrationPoint(theta, sum(e.trees for e in model.ensembles.values()), model.splits, len(gold),
                             fallbacks, totals.recall, totals.precision, totals.f1, totals.exact_match,
                             time.perf_counter() - start, completions)
    store = Calibrations(db)
    try:
        store.add_point(calibration_id, {k: v for k, v in asdict(point).items() if k != "resumed"}, [
            {"label": label, "gold": g, "test": t, "matched": m,
             "recall": 100.0 * m / g if g else 0.0, "precision": 100.0 * m / t if t else 0.0,
             "f1": _f1(100.0 * m / g if g else 0.0, 100.0 * m / t if t else 0.0)}
            for label, (g, t, m) in labels.items()])
    except Exception:
        done = store.point(calibration_id, theta)
        if done is None:
            raise
        # Another `calibrate` of the same settings and dev set stored this Θ̂ first (the same point): it
        # is kept, where the insert failed as "database error: UNIQUE constraint failed".
        return _stored_point(done)
    return point


def _stored_point(row: dict[str, Any]) -> CalibrationPoint:
    fields = ("theta", "trees", "splits", "sentences", "fallbacks", "recall", "precision", "f1", "exact",
              "seconds", "completions")
    return CalibrationPoint(**{k: row[k] for k in fields}, resumed=True)


def put_gold_tags(parsed: Tree, gold_tagged: Sequence[tuple[str, str]]) -> None:
    """Put the gold tags back on the leaves of a tree parsed from the tagger's tags (in place), so that EVALB
    deletes the same tokens (punctuation) on both sides and the sentence is scored (:func:`parse_dev`)."""
    leaves = list(parsed.preterminals())  # one per input token, in order
    if len(leaves) == len(gold_tagged):
        for leaf, (_, tag) in zip(leaves, gold_tagged):
            leaf.label = tag


def parse_dev(db: Database | str | Path, model: ParserModel, gold: Sequence[Tree],
              settings: CalibrationSettings,
              tagger: PosTagger | None, on_sentence: Callable[[int], object] | None = None,
              should_stop: Callable[[], bool] = lambda: False) -> tuple[list[Tree], int, int] | None:
    """Parse the gold trees' words (gold tags or the tagger's): (trees, flat fallbacks, pop-cap completions).

    The trees are for scoring: parsed from the tagger's tags, they carry the gold tags on their leaves,
    since EVALB deletes tokens by their tag (punctuation), and a token the tagger tags across that line
    would make the sentence an EVALB error, left out of the F1 (past MAX_ERROR, the end of the
    calibration). Tags are not scored here; every dev sentence counts.

    None if ``should_stop`` said so before the last sentence."""
    base = Parser.from_model(db, model, settings.search)
    base.tagger = tagger  # tagger tags go through the parser's own tagging, as raw text does
    test: list[Tree] = []
    fallbacks = completions = 0
    for i, tree in enumerate(gold):
        if should_stop():
            return None
        gold_tagged = [(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
        tagged = base.tag([w for w, _ in gold_tagged]) if tagger is not None else gold_tagged
        parsed = base.parse_tagged(tagged)
        fallbacks += parsed.fallback is not None
        completions += parsed.completion is not None
        if tagger is not None:
            put_gold_tags(parsed.tree, gold_tagged)
        test.append(parsed.tree)
        if on_sentence is not None:
            on_sentence(i + 1)
    return test, fallbacks, completions
