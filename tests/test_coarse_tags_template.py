"""The coarse-tags template (issue 29, opt-in): beside every test of a tag, the same test of the tag's coarse
class, worked by hand; the features without it are exactly the run's features before it existed; and end to
end, a run prepared with it stores class features and the search's window cache scores every state as a fresh
scorer does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clparse.api import feature_config
from clparse.data import sample_path
from clparse.features.describe import candidate_features
from clparse.features.space import COARSE_CLASSES, COARSE_TAGS, FeatureConfig
from clparse.features.state import build, leaf_items
from clparse.read import read_trees
from clparse.rebuild.model import load_model
from tests.template_runs import states_scored_alike, trained_sample_run

CHILDREN_ONLY = replace(FeatureConfig.paper(context=0), grandchild=False, exists=False, exists_terminal=False)
CHILDREN_COARSE = replace(CHILDREN_ONLY, coarse_tags=True)


def test_the_classes_of_a_hand_worked_phrase() -> None:
    # "the dogs barked in vain ." ; the candidate NP over "the dogs" with "dogs" as head: each child's tag
    # label and headtag get their class (DT: <DET>, NNS: <NOUN>); head+1 is absent and gets none.
    leaves = leaf_items([("the", "DT"), ("dogs", "NNS"), ("barked", "VBD"), ("in", "IN"), ("vain", "JJ"),
                         (".", ".")])
    added = (candidate_features(leaves, 0, 2, head=1, config=CHILDREN_COARSE)
             - candidate_features(leaves, 0, 2, head=1, config=CHILDREN_ONLY))
    assert added == {f"child[{slot}].{prop} = {cls}" for slot, cls in
                     (("first", "<DET>"), ("last", "<NOUN>"), ("head", "<NOUN>"), ("head-1", "<DET>"))
                     for prop in ("label", "headtag")}
    # a phrase's label has no class, its headtag has; IN (a class of one) gets none
    phrase = [build("NP", leaves[0:2]), *leaves[2:]]
    added = (candidate_features(phrase, 0, 4, head=1, config=CHILDREN_COARSE)
             - candidate_features(phrase, 0, 4, head=1, config=CHILDREN_ONLY))
    assert added == {"child[first].headtag = <NOUN>", "child[head-1].headtag = <NOUN>",
                     "child[head].label = <VERB>", "child[head].headtag = <VERB>",
                     "child[last].label = <ADJ>", "child[last].headtag = <ADJ>"}
    # punctuation gets none either ("vain ." with the period as head)
    assert (candidate_features(phrase, 3, 5, head=1, config=CHILDREN_COARSE)
            - candidate_features(phrase, 3, 5, head=1, config=CHILDREN_ONLY)) == {
        "child[first].label = <ADJ>", "child[first].headtag = <ADJ>",
        "child[head-1].label = <ADJ>", "child[head-1].headtag = <ADJ>"}


def test_exists_terminal_tests_the_class_of_every_word() -> None:
    only_terminals = replace(FeatureConfig.paper(context=0), child=False, grandchild=False, exists=False,
                             coarse_tags=True)
    leaves = leaf_items([("Dogs", "NNS"), ("and", "CC"), ("cats", "NNS"), ("ran", "VBD")])
    got = {f for f in candidate_features(leaves, 0, 3, head=0, config=only_terminals) if "<" in f}
    assert "exists-terminal[all].headtag = <NOUN>" in got
    assert not any("<VERB>" in f for f in got)  # "ran" is outside the span
    assert not any(".label = <" in f for f in got)  # exists-terminal tests headtag and headword only


def test_without_the_template_the_features_are_the_fine_ones_alone() -> None:
    # over every candidate span of the first sample sentences: the coarse run's features are the default
    # run's and the class tests of the tags in them, no more
    full, coarse = FeatureConfig(), FeatureConfig(coarse_tags=True)
    for tree in list(read_trees(sample_path("dev")))[:5]:
        leaves = leaf_items([(w, t) for w, t in tree.tagged_words() if t != "-NONE-"])
        for first in range(len(leaves)):
            for end in range(first + 1, min(first + 5, len(leaves)) + 1):
                plain = candidate_features(leaves, first, end, head=0, config=full)
                both = candidate_features(leaves, first, end, head=0, config=coarse)
                assert plain <= both
                extra = both - plain
                assert all(f.rsplit(" = ", 1)[1] in COARSE_CLASSES for f in extra)
                # each class test stands beside the fine test it coarsens
                for f in extra:
                    head, cls = f.rsplit(" = ", 1)
                    assert any(g.startswith(head + " = ") and COARSE_TAGS.get(g.rsplit(" = ", 1)[1]) == cls
                               for g in plain), f


def test_off_by_default_named_by_the_cli_spelling_and_kept_out_of_old_settings() -> None:
    assert not FeatureConfig().coarse_tags and not FeatureConfig.from_dict({"context": 2}).coarse_tags
    assert feature_config(templates=["length", "coarse-tags"]).coarse_tags
    assert not feature_config().coarse_tags
    # a run without it stores (and digests) exactly the settings it stored before the template existed
    assert "coarse_tags" not in FeatureConfig().to_dict()
    on = FeatureConfig(coarse_tags=True)
    assert on.to_dict()["coarse_tags"] is True and FeatureConfig.from_dict(on.to_dict()) == on


def test_every_class_has_two_tags_or_more_and_each_tag_one_class() -> None:
    tags = [t for members in COARSE_CLASSES.values() for t in members]
    assert len(tags) == len(set(tags)) == len(COARSE_TAGS)
    assert all(len(members) >= 2 for members in COARSE_CLASSES.values())


@pytest.fixture(scope="module")
def coarse_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_sample_run(tmp_path_factory, "coarse", FeatureConfig(coarse_tags=True))


def test_the_model_stores_class_features(coarse_db: Path) -> None:
    model = load_model(coarse_db, 4.0)
    assert model.features.coarse_tags
    assert any(value in COARSE_CLASSES for _, _, _, value in model.feature_ids)


def test_cached_scores_equal_fresh_scores_on_every_state(coarse_db: Path) -> None:
    assert states_scored_alike(coarse_db, 8) > 30
