"""The punctuation template (issue 27, opt-in): counts of the punctuation words a span holds and of its
children that are punctuation words, worked by hand; and end to end, a run prepared with it stores its
features and the search's window cache scores every state as a fresh scorer does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clparse.api import feature_config
from clparse.features.describe import candidate_features
from clparse.features.space import FeatureConfig
from clparse.features.state import build, leaf_items
from clparse.rebuild.model import load_model
from tests.template_runs import states_scored_alike, trained_sample_run

ONLY_PUNCTUATION = replace(FeatureConfig.paper(context=0), child=False, grandchild=False, exists=False,
                           exists_terminal=False, punctuation=True)


def counts(words: int, children: int) -> set[str]:
    return {f"punctuation[words].count = {words}", f"punctuation[children].count = {children}"}


def test_counts_of_a_hand_worked_list() -> None:
    # "Dogs , cats , and birds ran ." with each noun an NP: over the six items of the list, two commas,
    # both children; once "Dogs , cats" is one NP, the span still holds two commas but one child is a comma.
    leaves = leaf_items([("Dogs", "NNS"), (",", ","), ("cats", "NNS"), (",", ","), ("and", "CC"),
                         ("birds", "NNS"), ("ran", "VBD"), (".", ".")])
    flat = [build("NP", [leaves[0]]), leaves[1], build("NP", [leaves[2]]), leaves[3], leaves[4],
            build("NP", [leaves[5]]), leaves[6], leaves[7]]
    assert candidate_features(flat, 0, 6, head=0, config=ONLY_PUNCTUATION) == counts(2, 2)
    nested = [build("NP", leaves[0:3]), leaves[3], leaves[4], build("NP", [leaves[5]]), leaves[6], leaves[7]]
    assert candidate_features(nested, 0, 4, head=0, config=ONLY_PUNCTUATION) == counts(2, 1)
    # no punctuation: zero of each; the whole sentence: the final period too
    assert candidate_features(flat, 4, 7, head=0, config=ONLY_PUNCTUATION) == counts(0, 0)
    assert candidate_features(nested, 0, 6, head=0, config=ONLY_PUNCTUATION) == counts(3, 2)
    # the head child does not change them (they are head-free)
    assert candidate_features(flat, 0, 6, head=5, config=ONLY_PUNCTUATION) == counts(2, 2)


def test_quotes_and_colons_count_and_brackets_do_not() -> None:
    # the punctuation of EVALB and of the search's edge rule: , : . `` '' (not -LRB- -RRB-)
    leaves = leaf_items([("``", "``"), ("Yes", "UH"), ("''", "''"), (":", ":"), ("(", "-LRB-"),
                         ("no", "UH"), (")", "-RRB-")])
    assert candidate_features(leaves, 0, 7, head=0, config=ONLY_PUNCTUATION) == counts(3, 3)


def test_off_by_default_and_named_by_the_cli_spelling() -> None:
    assert not FeatureConfig().punctuation and not FeatureConfig.from_dict({"context": 2}).punctuation
    assert feature_config(templates=["length", "punctuation"]).punctuation
    assert not feature_config().punctuation
    # without the length template the buckets are still there for the counts
    assert candidate_features(leaf_items([(".", ".")]), 0, 1, head=0, config=ONLY_PUNCTUATION) == counts(1, 1)


@pytest.fixture(scope="module")
def punctuation_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_sample_run(tmp_path_factory, "punctuation", FeatureConfig(punctuation=True))


def test_the_model_stores_punctuation_features(punctuation_db: Path) -> None:
    model = load_model(punctuation_db, 4.0)
    assert model.features.punctuation
    stored = {(item, prop) for template, item, prop, _ in model.feature_ids if template == "punctuation"}
    assert stored == {("words", "count"), ("children", "count")}


def test_cached_scores_equal_fresh_scores_on_every_state(punctuation_db: Path) -> None:
    assert states_scored_alike(punctuation_db, 8) > 30
