"""Table 3 preprocessing: each step on hand-built trees, the pipeline record, and properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.data import sample_path
from clparse.preprocess import (
    PreprocessConfig,
    PreprocessReport,
    Vocabulary,
    is_punctuation,
    preprocess_tagged,
    preprocess_tree,
    preprocess_treebank,
    sentence_length,
)
from clparse.preprocess.transforms import (
    EMPTY_ELEMENT_TAG,
    raise_punctuation,
    remove_outermost_punctuation,
    remove_quotation_marks,
    remove_unary_self_projections,
)
from clparse.read import Tree, format_tree, parse_tree, read_trees
from tests.strategies import trees


def run(text: str, **config: object) -> str:
    result = preprocess_tree(parse_tree(text), PreprocessConfig.from_dict(dict(config)))
    assert result is not None
    return format_tree(result.tree)


def test_full_pipeline_on_a_hand_built_tree() -> None:
    text = ("(ROOT (S (`` ``) (NP-SBJ-1 (NNP John)) (, ,) (VP (VBD gave) (PRT (RP up)) "
            "(S (NP (-NONE- *-1)) (VP (VBG smoking) (, ,)))) ('' '') (. .)))")
    assert run(text) == ("(ROOT (S (NP (NNP John)) (, ,) (VP (VBD gave) (ADVP (RP up)) "
                         "(S (VP (VBG smoking))))))")


def test_removed_tokens_are_recorded_with_original_positions() -> None:
    tree = parse_tree("(ROOT (S (`` ``) (NP (NNP John)) (VP (VBD left) (NP (-NONE- *))) ('' '') (. .)))")
    result = preprocess_tree(tree)
    assert result is not None
    assert result.original_words == ["``", "John", "left", "''", "."]
    assert [(r.index, r.word, r.step) for r in result.removed] == [
        (0, "``", "remove_quotation_marks"), (3, "''", "remove_quotation_marks"),
        (4, ".", "remove_outermost_punctuation"),
    ]


def test_steps_can_be_switched_off() -> None:
    text = "(ROOT (S (NP-SBJ (NNP John)) (VP (VBD gave) (PRT (RP up))) (. .)))"
    assert run(text, strip_function_tags=False, prt_to_advp=False, remove_outermost_punctuation=False) == \
        "(ROOT (S (NP-SBJ (NNP John)) (VP (VBD gave) (PRT (RP up))) (. .)))"


def test_function_tags_stripped_without_mangling_special_tags() -> None:
    assert run("(S (NP-SBJ=2 (-LRB- -LRB-) (NN x) (-RRB- -RRB-)) (VP-TMP (VBZ is)))") == \
        "(ROOT (S (NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-)) (VP (VBZ is))))"


def test_empty_constituents_disappear_recursively() -> None:
    assert run("(S (S (NP (-NONE- *)) (VP (-NONE- *?*))) (NP (PRP it)) (VP (VBZ is)))") == \
        "(ROOT (S (NP (PRP it)) (VP (VBZ is))))"


def test_raise_punctuation_goes_as_high_as_it_can() -> None:
    tree = parse_tree("(S (NP (NP (NNP Bob) (, ,)) (, ,)) (VP (VBD ran)))")
    raised, moved = raise_punctuation(tree)
    assert format_tree(raised) == "(S (NP (NP (NNP Bob))) (, ,) (, ,) (VP (VBD ran)))"
    assert moved == 3  # the inner comma moves twice


def test_punctuation_only_phrase_stays() -> None:
    tree = parse_tree("(S (NP (NN a)) (PRN (: -)) (VP (VBD b)))")
    raised, moved = raise_punctuation(tree)
    assert raised == tree and moved == 0


def test_outermost_punctuation_only_at_sentence_edges() -> None:
    tree = parse_tree("(S (: -) (NP (NN a)) (, ,) (VP (VBD b)) (. .) (. .))")
    out, removed = remove_outermost_punctuation(tree)
    assert format_tree(out) == "(S (NP (NN a)) (, ,) (VP (VBD b)))" and removed == 3


def test_all_punctuation_sentence_is_kept() -> None:
    tree = parse_tree("(S (. .) (. .))")
    assert remove_outermost_punctuation(tree) == (tree, 0)


def test_quotes_only_sentence_is_dropped_and_counted() -> None:
    report = PreprocessReport()
    kept = list(preprocess_treebank([parse_tree("(ROOT (S (`` ``) ('' '')))")], PreprocessConfig(), report))
    assert kept == [] and report.emptied == 1 and report.kept == 0


def test_unary_self_projection_collapses_chains() -> None:
    out, n = remove_unary_self_projections(parse_tree("(S (NP (NP (NP (NN it)))) (VP (VBZ is)))"))
    assert format_tree(out) == "(S (NP (NN it)) (VP (VBZ is)))" and n == 2
    # a unary over a different label is kept
    assert remove_unary_self_projections(parse_tree("(S (VP (VB go)))"))[1] == 0


def test_quotation_marks_only() -> None:
    out, n = remove_quotation_marks(parse_tree("(S (`` ``) (NP (NN a)) ('' ''))"))
    assert format_tree(out) == "(S (NP (NN a)))" and n == 2


def test_length_filter_ignores_punctuation_and_empty_elements() -> None:
    tree = parse_tree("(S (NP (NN a) (-NONE- *)) (, ,) (VP (VBD b)) (. .))")
    assert sentence_length(tree) == 2
    report = PreprocessReport()
    assert list(preprocess_treebank([tree], PreprocessConfig(max_words=1), report)) == []
    assert report.too_long == 1


def test_vocabulary_threshold_and_round_trip() -> None:
    vocab = Vocabulary.build(["a", "A", "b"] * 2 + ["c"], min_count=2)
    assert [vocab.normalize(w) for w in ["A", "b", "c", "zebra"]] == ["a", "b", "UNK", "UNK"]
    full = Vocabulary.from_rows(vocab.to_rows(), min_count=1)
    assert full.normalize("C") == "c"
    assert len(vocab) == 3  # a, b, UNK


def test_every_bundled_sample_tree_preprocesses() -> None:
    report = PreprocessReport()
    for split in ("train", "dev"):
        for result in preprocess_treebank(read_trees(sample_path(split)), PreprocessConfig(), report):
            assert result.tree.label == "ROOT" and len(result.tree.children) == 1
    assert report.sentences == 528 and report.emptied == 0


# ----------------------------------------------------------------- properties


def _yield_sets(tree: Tree, index_of: dict[int, int]) -> list[frozenset[int]]:
    """For every phrase, the original positions of the non-punctuation tokens it dominates."""
    sets = []
    for phrase in tree.phrases():
        sets.append(frozenset(index_of[id(leaf)] for leaf in phrase.preterminals()
                              if id(leaf) in index_of and not is_punctuation(leaf)))
    return sets


def _crosses(a: frozenset[int], b: frozenset[int]) -> bool:
    return bool(a & b) and not (a <= b or b <= a)


@settings(max_examples=300, deadline=None)
@given(trees())
def test_words_stay_in_order_and_only_recorded_tokens_go(tree: Tree) -> None:
    result = preprocess_tree(tree)
    tokens = [leaf for leaf in tree.preterminals() if leaf.label != EMPTY_ELEMENT_TAG]
    if result is None:
        assert all(leaf.label in ("``", "''") for leaf in tokens)
        return
    gone = {r.index for r in result.removed}
    assert result.tree.words() == [leaf.word for i, leaf in enumerate(tokens) if i not in gone]
    assert [r.word for r in result.removed] == [tokens[i].word for i in sorted(gone)]


@settings(max_examples=300, deadline=None)
@given(trees())
def test_preprocessing_never_makes_crossing_brackets(tree: Tree) -> None:
    result = preprocess_tree(tree)
    if result is None:
        return
    tokens = [leaf for leaf in tree.preterminals() if leaf.label != EMPTY_ELEMENT_TAG]
    index_of = {id(leaf): i for i, leaf in enumerate(tokens)}
    gone = {r.index for r in result.removed}
    original = [s - gone for s in _yield_sets(tree, index_of)]
    produced_sets = _yield_sets(result.tree, index_of)  # preprocessing reuses the leaf objects
    # the ROOT spans every kept non-punctuation token: the mapping really found the leaves
    assert produced_sets[0] == frozenset(i for i, leaf in enumerate(tokens)
                                         if i not in gone and not is_punctuation(leaf))
    for produced in produced_sets:
        assert not any(_crosses(produced, o) for o in original)
        # stronger: every output phrase spans what some input phrase spanned (or only punctuation)
        assert not produced or produced in original


@settings(max_examples=200, deadline=None)
@given(trees())
def test_preprocessing_is_idempotent(tree: Tree) -> None:
    once = preprocess_tree(tree)
    if once is None:
        return
    twice = preprocess_tree(once.tree)
    assert twice is not None and twice.tree == once.tree and twice.removed == []


# Tags that every deleting step acts on, and ordinary ones: flat sentences made of them meet each rule.
FLAT_TAGS = [",", ":", ".", "``", "''", EMPTY_ELEMENT_TAG, "NN", "VBD", "-LRB-", "HYPH"]
STEP_FLAGS = ["strip_function_tags", "delete_empty_elements", "prt_to_advp", "remove_quotation_marks",
              "raise_punctuation", "remove_outermost_punctuation", "remove_unary_self_projections"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "(", "''"]), st.sampled_from(FLAT_TAGS)), max_size=8),
       st.fixed_dictionaries({flag: st.booleans() for flag in STEP_FLAGS}))
def test_preprocess_tagged_equals_the_tree_steps(tagged: list[tuple[str, str]],
                                                 flags: dict[str, bool]) -> None:
    # The parser's fast path against the general one on the flat tree it stands for.
    config = PreprocessConfig.from_dict(dict(flags))
    fast = preprocess_tagged(tagged, config)
    slow = preprocess_tree(Tree("S", [Tree.preterminal(t, w) for w, t in tagged]), config)
    if slow is None:
        assert fast is None
        return
    assert fast is not None
    assert format_tree(fast.tree) == format_tree(slow.tree)
    assert fast.removed == slow.removed
    assert fast.original_words == slow.original_words
    assert fast.original is not None and slow.original is not None
    assert format_tree(fast.original) == format_tree(slow.original)


def test_preprocess_tagged_by_hand() -> None:
    result = preprocess_tagged([("``", "``"), ("Hi", "UH"), ("*", EMPTY_ELEMENT_TAG), (",", ","),
                                ("''", "''"), ("!", ".")])
    assert result is not None
    assert format_tree(result.tree) == "(ROOT (S (UH Hi)))"
    assert [(t.index, t.word, t.step) for t in result.removed] == [
        (0, "``", "remove_quotation_marks"), (2, ",", "remove_outermost_punctuation"),
        (3, "''", "remove_quotation_marks"), (4, "!", "remove_outermost_punctuation")]
    assert preprocess_tagged([("``", "``")]) is None
    assert preprocess_tagged([]) is None  # deleting steps remove a phrase left empty
