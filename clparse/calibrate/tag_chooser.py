"""Fit the tag chooser (:mod:`clparse.tag.choice`) on the run's dev set: ``clparse calibrate-tags``.

Every dev sentence is parsed from each tagging ``parse`` tries for untagged input, exactly as ``parse``
does (:meth:`Parser.tagging_parses`), and each parse is scored against the gold tree (sentence F1, EVALB,
gold tags put back on the leaves so every sentence counts, as ``calibrate --tags tagger`` scores). The
chooser's logistic regression is fitted on the other taggings whose parse scores differently from the
best tagging's (label: scores better), by Newton's method with an L2 penalty. Besides the fit on every
sentence (stored), a two-fold estimate (fitted on every other sentence, scored on the rest, both ways)
says what to expect on text the chooser was not fitted on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import clparse
from clparse.calibrate.run import dev_trees, put_gold_tags
from clparse.errors import ConfigurationError
from clparse.evaluate import EvalbParams, evaluate
from clparse.evaluate.evalb import evaluate_sentence
from clparse.output import ParseResult
from clparse.parser import DEFAULT_AGGREGATOR, TAG_ALTERNATIVES, Parser, pick_parse, rule_pick
from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG
from clparse.read.tree import Tree
from clparse.store import tag_choosers
from clparse.tag.choice import FEATURES, NOT_CRF, TagChooser, pair_features, theta_key

#: The L2 penalty of the fit (measured on GUM dev: 1, 3 and 10 within 0.05 F1 two-fold; docs/tagger.md).
PENALTY = 3.0
#: Fewer training taggings than this and nothing is stored: too few to weigh four inputs.
MIN_PAIRS = 20
#: A fit is stored only if its two-fold dev F1 is at least the search's own choice's plus this (F1 points):
#: a chooser measured behind the rule on sentences it was not fitted on would make parse worse on new text
#: (under the summed loss the two are level on GUM: docs/tagger.md).
MIN_TWO_FOLD_GAIN = 0.0


@dataclass(frozen=True)
class ChooserFit:
    weights: dict[str, float]
    sentences: int
    pairs: int
    f1_best: float  # the best tagging alone
    f1_rule: float  # the search's own key (parse without a chooser)
    f1_chooser: float  # in sample
    f1_two_fold: float
    seconds: float
    chooser_id: int | None  # None: nothing stored (``not_stored`` says why)
    in_force: int | None = None  # with nothing stored: an earlier chooser at this Θ̂ that parse still uses
    not_stored: str | None = None  # "pairs": fewer than MIN_PAIRS; "behind": two-fold behind the rule


@dataclass
class DevSentence:
    """A dev sentence parsed from each tagging: the parses (best tagging's first) with the tagger's
    certainty against each tagging, each parse's sentence F1 (gold tags put back), the gold tree."""

    options: list[tuple[ParseResult, float]]
    f1: list[float]
    gold: Tree


def fit_logistic(x: np.ndarray, y: np.ndarray, penalty: float = PENALTY) -> np.ndarray:
    """Weights minimising the logistic loss of ``x @ w`` against labels ``y`` (0 or 1) plus
    ``penalty / 2 * |w|²``, by Newton's method (the objective is strictly convex: one minimum)."""
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x.T * (p * (1.0 - p))) @ x + penalty * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w = w - step
        if float(np.max(np.abs(step))) < 1e-12:
            break
    return w


def sentence_f1(gold: Tree, test: Tree, params: EvalbParams) -> float:
    """One sentence's labelled F1 (0 to 1) as EVALB scores it; 0 for a sentence EVALB skips."""
    result = evaluate_sentence(1, gold, test, params)
    brackets = result.gold_brackets + result.test_brackets
    return 2.0 * result.matched / brackets if result.status == "ok" and brackets else 0.0


def training_pairs(sentences: Sequence[DevSentence], indices: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    rows, labels = [], []
    for i in indices:
        s = sentences[i]
        best = s.options[0][0]
        for k, (result, certainty) in enumerate(s.options[1:], 1):
            features = pair_features(best, result, certainty)
            if features is None or s.f1[k] == s.f1[0]:
                continue
            rows.append(features)
            labels.append(1.0 if s.f1[k] > s.f1[0] else 0.0)
    return np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES)), np.array(labels, dtype=np.float64)


def corpus_f1(sentences: Sequence[DevSentence], picks: Sequence[int], params: EvalbParams) -> float:
    return evaluate([s.gold for s in sentences], [s.options[k][0].tree for s, k in zip(sentences, picks)],
                    params).all.f1


def parse_taggings(parser: Parser, gold: Sequence[Tree],
                   on_sentence: Callable[[int, int], object] | None = None,
                   should_stop: Callable[[], bool] = lambda: False) -> list[DevSentence] | None:
    """Parse the gold trees' words from each tagging ``parser`` tries, as ``parse`` does, and score each
    parse; None if ``should_stop`` said so first."""
    params = EvalbParams(max_errors=len(gold) + 1)
    sentences: list[DevSentence] = []
    for i, tree in enumerate(gold):
        if should_stop():
            return None
        gold_tagged = [(w, t) for w, t in tree.tagged_words() if t != EMPTY_ELEMENT_TAG]
        options = parser.tagging_parses([w for w, _ in gold_tagged])
        for result, _ in options:
            put_gold_tags(result.tree, gold_tagged)
        sentences.append(DevSentence(options, [sentence_f1(tree, r.tree, params) for r, _ in options], tree))
        if on_sentence is not None:
            on_sentence(i + 1, len(gold))
    return sentences


def two_fold_picks(sentences: Sequence[DevSentence], aggregator: str) -> list[int]:
    """Per sentence, the option a chooser fitted on the other half of the sentences (every other one:
    even against odd) keeps: an estimate of the chooser on sentences it was not fitted on. ``aggregator``:
    the search's, whose rule decides where the chooser cannot (a flat best parse)."""
    picks = [0] * len(sentences)
    for fold in (0, 1):
        weights = fit_logistic(*training_pairs(sentences, range(1 - fold, len(sentences), 2)))
        chooser = TagChooser(tuple(float(w) for w in weights))
        for i in range(fold, len(sentences), 2):
            picks[i] = pick_parse(sentences[i].options, chooser, aggregator)
    return picks


def fit_tag_chooser(db: str | Path, theta: float | str = "best", beam: int = 100, max_pops: int = 10_000,
                    alternatives: int = TAG_ALTERNATIVES,
                    on_sentence: Callable[[int, int], object] | None = None,
                    should_stop: Callable[[], bool] = lambda: False,
                    aggregator: str = DEFAULT_AGGREGATOR) -> ChooserFit | None:
    """Parse the run's dev set from each tagging (the search scoring by ``aggregator``), fit the chooser and
    store it (if there were at least :data:`MIN_PAIRS` training taggings); parse uses it with that
    aggregator only. None if ``should_stop`` said so first: nothing stored."""
    started = time.monotonic()
    # tag_chooser False: a stored chooser is not read (the fit parses every tagging; a damaged row it
    # would refuse is what a new fit replaces)
    parser = Parser.from_db(db, theta=theta, beam=beam, max_pops=max_pops, tag_alternatives=alternatives,
                            aggregator=aggregator, tag_chooser=False)
    if getattr(parser.tagger, "scored_alternatives", None) is None:
        raise ConfigurationError(f"{db}: {NOT_CRF}")
    sentences = parse_taggings(parser, dev_trees(db), on_sentence, should_stop)
    if sentences is None:
        return None
    params = EvalbParams(max_errors=len(sentences) + 1)
    everything = range(len(sentences))
    x, y = training_pairs(sentences, everything)
    key = theta_key(parser.model.theta, parser.model.label_thetas)
    tagger = str(parser.tagger.name)  # type: ignore[union-attr]  # crf or crf+net:<net>: fitted to one
    weights = fit_logistic(x, y)
    chooser = TagChooser(tuple(float(w) for w in weights))
    aggregator = parser.options.aggregator
    picks = [pick_parse(s.options, chooser, aggregator) for s in sentences]
    two_fold = two_fold_picks(sentences, aggregator)
    rule = [rule_pick(s.options, aggregator) for s in sentences]
    fit = ChooserFit({name: float(w) for name, w in zip(FEATURES, weights)}, len(sentences), len(y),
                     corpus_f1(sentences, [0] * len(sentences), params), corpus_f1(sentences, rule, params),
                     corpus_f1(sentences, picks, params), corpus_f1(sentences, two_fold, params),
                     time.monotonic() - started, None)
    if should_stop():  # asked while fitting: nothing is stored, as the command says
        return None
    not_stored = ("pairs" if fit.pairs < MIN_PAIRS else
                  "behind" if fit.f1_two_fold < fit.f1_rule + MIN_TWO_FOLD_GAIN else None)
    if not_stored is not None:
        from clparse.store import reading
        from clparse.store.database import Database

        with Database(db, readonly=True) as database, database.raw() as connection:
            earlier = reading.tag_chooser(connection, key, aggregator, reading.tagger_name(connection))
        return ChooserFit(**{**fit.__dict__, "in_force": None if earlier is None else earlier[0],
                             "not_stored": not_stored})
    stored = tag_choosers.StoredChooser(key, beam, max_pops, aggregator, tagger, alternatives, fit.weights,
                                        fit.sentences, fit.pairs, fit.f1_best, fit.f1_rule, fit.f1_chooser,
                                        fit.f1_two_fold, fit.seconds, clparse.__version__)
    return ChooserFit(**{**fit.__dict__, "chooser_id": tag_choosers.write(db, stored)})

