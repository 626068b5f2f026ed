"""Correct inferences, random paths and features on hand-built trees."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings

from clparse.features.describe import candidate_features
from clparse.features.space import FeatureConfig
from clparse.examples.generate import (
    ExampleGenerator,
    item_to_tree,
    random_path,
    remove_duplicate_brackets,
    replay,
)
from clparse.features.state import Oracle, build, candidates, leaf_items
from clparse.preprocess import preprocess_tree
from clparse.read import Tree, format_tree, parse_tree
from tests.strategies import trees

SENTENCE = "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD saw) (NP (PRP me)))))"


def test_initially_correct_are_the_bottom_phrases() -> None:
    tree = parse_tree(SENTENCE)
    oracle = Oracle(tree, leaf_items(tree.tagged_words()))
    # NP(The dog) over frontier 0..2 and NP(me) over frontier 3..4; VP needs NP(me) built first
    assert oracle.correct_keys() == {(0, 2, "NP"), (3, 4, "NP")}


def test_unary_chain_is_built_bottom_up() -> None:
    tree = parse_tree("(ROOT (S (VP (VB Go))))")
    oracle = Oracle(tree, leaf_items(tree.tagged_words()))
    assert oracle.correct_keys() == {(0, 1, "VP")}
    oracle.apply(oracle.buildable()[0])
    assert oracle.correct_keys() == {(0, 1, "S")}  # S over the VP alone, not over the word
    oracle.apply(oracle.buildable()[0])
    assert oracle.correct_keys() == {(0, 1, "ROOT")}


def test_flat_phrase_needs_all_children_at_once() -> None:
    tree = parse_tree("(ROOT (NP (DT the) (JJ big) (JJ red) (NN dog)))")
    oracle = Oracle(tree, leaf_items(tree.tagged_words()))
    assert oracle.correct_keys() == {(0, 4, "NP")}


def test_gold_span_with_unbuilt_children_is_incorrect() -> None:
    tree = parse_tree(SENTENCE)
    oracle = Oracle(tree, leaf_items(tree.tagged_words()))
    # VP over (saw me) has the right span but its child NP(me) is not built yet
    assert (2, 4, "VP") not in oracle.correct_keys()


def test_candidates_exclude_duplicates_and_partial_root() -> None:
    leaves = leaf_items([("dogs", "NNS"), ("bark", "VBP")])
    np_item = build("NP", leaves[:1])
    frontier = [np_item, leaves[1]]
    found = {(c.first, c.end, c.label) for c in candidates(frontier, ["NP", "VP", "ROOT"], max_children=5)}
    assert (0, 1, "NP") not in found  # NP over NP(dogs): same span, same label
    assert (0, 1, "VP") in found and (0, 2, "ROOT") in found and (1, 2, "ROOT") not in found


def test_k_children_limit() -> None:
    leaves = leaf_items([(f"w{i}", "NN") for i in range(7)])
    spans = {(c.first, c.end) for c in candidates(leaves, ["NP"], max_children=5)}
    assert max(end - first for first, end in spans) == 5
    wide = parse_tree("(ROOT (NP " + " ".join(f"(NN w{i})" for i in range(6)) + "))")
    generator = ExampleGenerator(["NP", "ROOT"], FeatureConfig(), max_children=5)
    assert generator.prepare_tree(wide) is None and generator.report.too_wide == 1


def test_duplicate_span_and_label_is_removed() -> None:
    tree = parse_tree("(ROOT (S (VP (S (VP (VB Go))))))")
    fixed, removed = remove_duplicate_brackets(tree)
    assert removed == 2 and format_tree(fixed) == "(ROOT (S (VP (VB Go))))"


def test_same_seed_same_path_and_examples() -> None:
    tree = parse_tree("(ROOT (S (NP (DT a) (NN b)) (VP (VBD c) (NP (DT d) (NN e)) (PP (IN f) (NP (NN g))))))")
    assert random_path(tree, 3, 0) == random_path(tree, 3, 0)
    assert len({tuple(random_path(tree, seed, 0)) for seed in range(20)}) > 1  # it really is random

    def run(seed: int) -> list[np.ndarray]:
        generator = ExampleGenerator(["NP", "VP", "S", "PP", "ROOT"], FeatureConfig(), seed=seed)
        generator.add_sentence(tree, 0)
        return [a for label in generator.labels for a in generator.examples.deduplicated(label)]

    assert all(np.array_equal(a, b) for a, b in zip(run(3), run(3)))


@settings(max_examples=150, deadline=None)
@given(trees(max_leaves=10))
def test_every_path_replays_to_its_gold_tree(raw: Tree) -> None:
    result = preprocess_tree(raw)
    if result is None:
        return
    generator = ExampleGenerator(["X"], FeatureConfig(), max_children=50)
    tree = generator.prepare_tree(result.tree)
    assert tree is not None
    for number in range(3):  # path 0, and two more of `prepare --paths 3`
        path = random_path(tree, 0, 1, number=number)
        assert item_to_tree(replay(tree.tagged_words(), path), tree.words()) == tree


def item(template: str, slot: str, label: str, tag: str, word: str) -> set[str]:
    """The three features (label, headtag, headword) of one item position, readable."""
    return {f"{template}[{slot}].label = {label}", f"{template}[{slot}].headtag = {tag}",
            f"{template}[{slot}].headword = {word}"}


def test_features_of_a_hand_worked_state() -> None:
    # state: NP(The dog) built; frontier = NP, saw/VBD, me/PRP. Candidate: VP over (VBD, PRP), head = VBD.
    leaves = leaf_items([("The", "DT"), ("dog", "NN"), ("saw", "VBD"), ("me", "PRP")])
    frontier = [build("NP", leaves[:2]), leaves[2], leaves[3]]
    got = candidate_features(frontier, 1, 3, head=0,
                             config=replace(FeatureConfig.paper(context=1), exists_terminal=False))

    none = ("<none>",) * 3
    expected = (
        item("child", "first", "VBD", "VBD", "saw") | item("child", "last", "PRP", "PRP", "me")
        | item("child", "head", "VBD", "VBD", "saw") | item("child", "head-1", *none)
        | item("child", "head+1", "PRP", "PRP", "me")
        | item("context", "left-1", "NP", "NN", "dog") | item("context", "right-1", *none)
        | item("grandchild", "first.first", *none) | item("grandchild", "first.last", *none)
        | item("grandchild", "last.first", *none) | item("grandchild", "last.last", *none)
        | item("grandchild", "head.first", *none) | item("grandchild", "head.last", *none)
        | item("exists", "all", "VBD", "VBD", "saw") | item("exists", "all", "PRP", "PRP", "me")
        | item("exists", "non-leftmost", "PRP", "PRP", "me")
        | item("exists", "non-rightmost", "VBD", "VBD", "saw")
        | item("exists", "non-head", "PRP", "PRP", "me") | item("exists", "right-of-head", "PRP", "PRP", "me")
        | item("exists", "head-and-left", "VBD", "VBD", "saw")
        | item("exists", "head-and-right", "VBD", "VBD", "saw")
        | item("exists", "head-and-right", "PRP", "PRP", "me")
    )
    assert got == expected


def test_terminal_exists_features_look_inside_items() -> None:
    leaves = leaf_items([("The", "DT"), ("dog", "NN"), ("barks", "VBZ")])
    frontier = [build("NP", leaves[:2]), leaves[2]]
    got = candidate_features(frontier, 0, 2, config=FeatureConfig(context=0, child=False, grandchild=False,
                                                                  exists=False))
    assert "exists-terminal[all].headword = the" in got  # headwords are lower-cased
    assert "exists-terminal[non-rightmost].headtag = NN" in got
    assert "exists-terminal[non-leftmost].headword = dog" not in got


def test_richer_templates_of_a_hand_worked_state() -> None:
    # frontier: NP(The dog) saw/VBD a/DT cat/NN . ; candidate over (saw, NP(a cat)) is not built yet, so
    # take VP over frontier[1:4] = saw, a, cat with head 0 (saw), context 1 each side.
    leaves = leaf_items([("The", "DT"), ("dog", "NN"), ("saw", "VBD"), ("a", "DT"), ("cat", "NN"),
                         ("now", "RB")])
    np_item = build("NP", leaves[:2])  # head child: dog (NN)
    frontier = [np_item, leaves[2], leaves[3], leaves[4], leaves[5]]
    config = FeatureConfig(context=1, child=False, grandchild=False, exists=False, exists_terminal=False,
                           child_extra=True, head_of_child=True, context_exists=True, length=True)
    got = candidate_features(frontier, 1, 4, head=0, config=config)

    none = ("<none>",) * 3
    expected = (
        item("context", "left-1", "NP", "NN", "dog") | item("context", "right-1", "RB", "RB", "now")
        | item("child", "second", "DT", "DT", "a") | item("child", "second-to-last", "DT", "DT", "a")
        | item("child", "head-2", *none) | item("child", "head+2", "NN", "NN", "cat")
        # leaves have no head child
        | item("grandchild", "first.head", *none) | item("grandchild", "last.head", *none)
        | item("grandchild", "head.head", *none)
        | item("exists", "left-context", "NP", "NN", "dog")
        | item("exists", "right-context", "RB", "RB", "now")
        | {"length[children].count = 3", "length[terminals].count = 3"}
    )
    assert got == expected
    # over NP(The dog) and saw: the first child's head child is dog; 3 terminals, 2 children
    wider = candidate_features(frontier, 0, 2, config=config)
    assert item("grandchild", "first.head", "NN", "NN", "dog") <= wider
    assert {"length[children].count = 2", "length[terminals].count = 3"} <= wider
    assert not any(f.startswith("exists[left-context]") for f in wider)  # nothing to the left


def test_span_edge_template_of_a_hand_worked_state() -> None:
    # frontier: NP(The dog) saw/VBD NP(a cat) now/RB; candidate over (saw, NP(a cat)): its first terminal is
    # saw, its last cat; just before it is dog (the NP's last terminal, not its head), just after it now.
    leaves = leaf_items([("The", "DT"), ("dog", "NN"), ("saw", "VBD"), ("a", "DT"), ("cat", "NN"),
                         ("now", "RB")])
    frontier = [build("NP", leaves[:2]), leaves[2], build("NP", leaves[3:5]), leaves[5]]
    config = replace(FeatureConfig.paper(context=1), child=False, grandchild=False, exists=False,
                     exists_terminal=False, span_edges=True)
    got = candidate_features(frontier, 1, 3, head=0, config=config)

    def terminal(slot: str, tag: str, word: str) -> set[str]:
        return {f"span-edge[{slot}].headtag = {tag}", f"span-edge[{slot}].headword = {word}"}

    edges = (terminal("first", "VBD", "saw") | terminal("last", "NN", "cat")
             | terminal("before", "NN", "dog") | terminal("after", "RB", "now"))
    assert got - {f for f in got if f.startswith("context[")} == edges
    # at the sentence's edges: <none> outside; over NP(The dog) alone the first terminal is "the"
    whole = candidate_features(frontier, 0, 4, head=0, config=config)
    assert terminal("before", "<none>", "<none>") | terminal("after", "<none>", "<none>") <= whole
    assert terminal("first", "DT", "the") | terminal("last", "RB", "now") <= whole
    # without context the outside terminals are not in the window (nor in the search's cache key): none
    bare = candidate_features(frontier, 1, 3, head=0, config=replace(config, context=0))
    assert bare == terminal("first", "VBD", "saw") | terminal("last", "NN", "cat")
    # off by default, and a stored configuration from before the template reads as off
    assert not FeatureConfig().span_edges and not FeatureConfig.from_dict({"context": 2}).span_edges


def test_length_buckets() -> None:
    from clparse.features.kernel import count_bucket

    assert [count_bucket(k) for k in (1, 4, 5, 6, 7, 9, 10, 14, 15, 24, 25, 90)] == \
        ["1", "4", "5-6", "5-6", "7-9", "7-9", "10-14", "10-14", "15-24", "15-24", "25+", "25+"]
