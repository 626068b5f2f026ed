"""EVALB-exact scoring on hand-worked cases.

Every expected figure below was worked out by hand following EVALB's
algorithm (evalb.c with COLLINS.prm): delete punctuation terminals, drop
brackets that cover no word, cut labels at '-'/'=', match brackets as
multisets with ADVP = PRT.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from clparse.errors import ConfigurationError, TokenMismatchError
from clparse.evaluate import EvalbParams, TooManyErrors, evaluate, evaluate_sentence
from clparse.evaluate.evalb import Bracket, score_view
from clparse.read import Tree, parse_tree
from tests.strategies import trees

COLLINS = EvalbParams.collins()
DEFAULT = EvalbParams()


def counts(gold: str, test: str, params: EvalbParams = DEFAULT) -> tuple[str, int, int, int]:
    r = evaluate_sentence(1, parse_tree(gold), parse_tree(test), params)
    return r.status, r.matched, r.gold_brackets, r.test_brackets


def test_punctuation_at_span_edges_does_not_matter() -> None:
    gold = "(S (NP (NNP John) (, ,)) (VP (VBD left)) (. .))"
    test = "(S (NP (NNP John)) (, ,) (VP (VBD left) (. .)))"
    # words: John=0 left=1; both sides S(0,2) NP(0,1) VP(1,2)
    assert counts(gold, test) == ("ok", 3, 3, 3)


def test_bracket_spans_skip_deleted_words() -> None:
    view = score_view(parse_tree("(S (`` ``) (NP (DT the) (NN cat)) (: --) (VP (VBD sat)) (. .))"), DEFAULT)
    assert view.words == ["the", "cat", "sat"]
    assert view.brackets == [Bracket(0, 3, "S"), Bracket(0, 2, "NP"), Bracket(2, 3, "VP")]
    assert view.length == 6  # punctuation counts for the length cut-off; only -NONE- does not


def test_unary_chains_count_each_bracket() -> None:
    gold = "(S (VP (VB Go)))"  # S(0,1) and VP(0,1)
    assert counts(gold, "(VP (VB Go))") == ("ok", 1, 2, 1)
    assert counts(gold, "(S (S (VP (VB Go))))") == ("ok", 2, 2, 3)


def test_duplicate_brackets_match_as_multisets() -> None:
    gold = "(S (NP (NP (NNS dogs))) (VP (VBP bark)))"  # NP(0,1) twice
    assert counts(gold, "(S (NP (NNS dogs)) (VP (VBP bark)))") == ("ok", 3, 4, 3)
    assert counts(gold, "(S (NP (NP (NP (NNS dogs)))) (VP (VBP bark)))") == ("ok", 4, 4, 5)


def test_advp_and_prt_are_the_same_label() -> None:
    gold = "(S (NP (PRP I)) (VP (VBD gave) (PRT (RP up))))"
    test = "(S (NP (PRP I)) (VP (VBD gave) (ADVP (RP up))))"
    assert counts(gold, test) == ("ok", 4, 4, 4)
    unequal = EvalbParams(equivalent_labels=())
    assert counts(gold, test, unequal) == ("ok", 3, 4, 4)


def test_function_tags_and_indices_are_cut() -> None:
    assert counts("(S (NP-SBJ-1 (PRP I)) (VP=2 (VBD ran)))",
                  "(S (NP (PRP I)) (VP (VBD ran)))") == ("ok", 3, 3, 3)


def test_empty_elements_and_their_brackets_vanish() -> None:
    gold = "(S (NP-SBJ (-NONE- *)) (VP (VB Go)))"
    r = evaluate_sentence(1, parse_tree(gold), parse_tree("(S (VP (VB Go)))"), DEFAULT)
    assert (r.matched, r.gold_brackets, r.test_brackets, r.length) == (2, 2, 2, 1)
    assert r.complete_match


def test_punctuation_only_bracket_is_dropped() -> None:
    assert counts("(S (NP (NN x)) (PRN (, ,)) (VP (VBZ is)))",
                  "(S (NP (NN x)) (VP (VBZ is)))") == ("ok", 3, 3, 3)


def test_root_and_top_wrappers() -> None:
    gold = "(ROOT (S (NP (PRP I)) (VP (VBD ran))))"
    assert counts(gold, gold) == ("ok", 3, 3, 3)  # clparse default: ROOT deleted
    assert counts(gold, gold, COLLINS) == ("ok", 4, 4, 4)  # COLLINS.prm counts ROOT
    top = "(TOP (S (NP (PRP I)) (VP (VBD ran))))"
    assert counts(top, top, COLLINS) == ("ok", 3, 3, 3)
    bare = "( (S (NP (PRP I)) (VP (VBD ran))))"  # EVALB counts the unlabeled wrapper as a bracket
    assert counts(bare, bare, COLLINS) == ("ok", 4, 4, 4)


def test_empty_parse_is_skipped_not_counted() -> None:
    gold = [parse_tree("(S (NP (PRP I)) (VP (VBD ran)))"), parse_tree("(S (NP (PRP You)) (VP (VBD sat)))")]
    test = [Tree("", []), parse_tree("(S (NP (PRP You)) (VP (VBD sat)))")]
    result = evaluate(gold, test)
    assert result.sentences[0].status == "skip"
    assert (result.all.skipped, result.all.valid, result.all.gold_brackets,
            result.all.recall) == (1, 1, 3, 100.0)


def test_word_and_length_mismatches_are_errors_that_name_the_tokens() -> None:
    gold = parse_tree("(S (NP (PRP I)) (VP (VBD ran)))")
    r = evaluate_sentence(7, gold, parse_tree("(S (NP (PRP I)) (VP (VBD run)))"), DEFAULT)
    assert r.status == "error" and "'ran'" in r.message and "'run'" in r.message
    r = evaluate_sentence(7, gold, parse_tree("(S (NP (PRP I)) (VP (VBD ran) (RB fast)))"), DEFAULT)
    assert r.status == "error" and "length mismatch" in r.message
    # EVALB's known behaviour: a punctuation tag on one side only changes the length
    r = evaluate_sentence(1, parse_tree("(S (NN x) (. !))"), parse_tree("(S (NN x) (NN !))"), DEFAULT)
    assert r.status == "error"


def test_errors_are_left_out_of_totals_and_too_many_stop() -> None:
    gold = parse_tree("(S (NP (PRP I)) (VP (VBD ran)))")
    bad = parse_tree("(S (NP (PRP We)) (VP (VBD ran)))")
    result = evaluate([gold, gold], [bad, gold])
    assert (result.all.errors, result.all.valid, result.all.matched) == (1, 1, 3)
    with pytest.raises(TooManyErrors):
        evaluate([gold] * 3, [bad] * 3, EvalbParams(max_errors=1))
    assert evaluate([gold] * 2, [bad] * 2, EvalbParams(max_errors=1)).all.errors == 2  # EVALB tolerates MAX+1


def test_different_number_of_trees_is_an_error() -> None:
    gold = parse_tree("(S (NP (PRP I)) (VP (VBD ran)))")
    with pytest.raises(TokenMismatchError, match="gold file has more trees"):
        evaluate([gold, gold], [gold])


def test_totals_follow_evalb_formulas() -> None:
    gold = [parse_tree("(S (NP (PRP I)) (VP (VBD ran)))"), parse_tree("(S (VP (VB Go)))")]
    test = [parse_tree("(S (NP (PRP I)) (VP (VBD ran)))"), parse_tree("(VP (VB Go))")]
    totals = evaluate(gold, test).all
    assert (totals.matched, totals.gold_brackets, totals.test_brackets) == (4, 5, 4)
    assert totals.recall == pytest.approx(80.0) and totals.precision == pytest.approx(100.0)
    assert totals.f1 == pytest.approx(2 * 80 * 100 / 180)
    assert totals.exact_match == pytest.approx(50.0)


def test_crossing_counts_test_brackets() -> None:
    gold = parse_tree("(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (PRP me))))")
    test = parse_tree("(S (DT the) (X (NN dog) (VBD saw)) (NP (PRP me)))")
    r = evaluate_sentence(1, gold, test, DEFAULT)
    assert r.crossing == 1  # X(1,3) crosses NP(0,2) and VP(2,4): counted once
    assert (r.matched, r.gold_brackets, r.test_brackets) == (2, 4, 3)


def test_tagging_accuracy_over_kept_words() -> None:
    r = evaluate_sentence(1, parse_tree("(S (NN a) (VB b) (. .))"), parse_tree("(S (NN a) (NN b) (. .))"),
                          DEFAULT)
    assert (r.words, r.correct_tags) == (2, 1)


def test_cutoff_table_uses_gold_length() -> None:
    long_gold = parse_tree("(S " + " ".join(f"(NN w{i})" for i in range(41)) + ")")
    short = parse_tree("(S (NN a))")
    result = evaluate([long_gold, short], [long_gold, short])
    assert (result.all.sentences, result.short.sentences) == (2, 1)


def test_unlabeled_scoring() -> None:
    assert counts("(S (NP (PRP I)) (VP (VBD ran)))", "(S (X (PRP I)) (Y (VBD ran)))",
                  EvalbParams(labeled=False)) == ("ok", 3, 3, 3)


def test_prm_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    prm = tmp_path / "COLLINS.prm"
    prm.write_text("## comment\nDEBUG 0\nMAX_ERROR 10\nCUTOFF_LEN 40\nLABELED 1\n"
                   + "".join(f"DELETE_LABEL {x}\n" for x in ["TOP", "-NONE-", ",", ":", "``", "''", "."])
                   + "DELETE_LABEL_FOR_LENGTH -NONE-\nEQ_LABEL ADVP PRT\n\n# EQ_WORD  Example example\n")
    assert EvalbParams.from_prm_file(prm) == COLLINS
    prm.write_text("EQ_LABEL ADVP\n")
    with pytest.raises(ConfigurationError, match="COLLINS.prm:1"):
        EvalbParams.from_prm_file(prm)


def _right_branching(tree: Tree) -> Tree:
    leaves = list(tree.preterminals())
    node: Tree = leaves[-1]
    for leaf in reversed(leaves[:-1]):
        node = Tree("NP", [leaf, node])
    return Tree("S", [node])


@settings(max_examples=200, deadline=None)
@given(trees())
def test_properties(a: Tree) -> None:
    ra = evaluate_sentence(1, a, a, DEFAULT)
    if ra.status == "skip":  # every word is punctuation or -NONE-
        return
    assert ra.matched == ra.gold_brackets == ra.test_brackets and ra.crossing == 0
    # same words, other brackets: swapping gold and test swaps recall and precision
    b = _right_branching(a)
    ab, ba = evaluate_sentence(1, a, b, DEFAULT), evaluate_sentence(1, b, a, DEFAULT)
    assert ab.status == ba.status == "ok"
    assert (ab.matched, ab.gold_brackets, ab.test_brackets) == (ba.matched, ba.test_brackets,
                                                                ba.gold_brackets)
    assert ab.matched <= min(ab.gold_brackets, ab.test_brackets)


def test_a_word_mismatch_between_lookalike_spellings_shows_code_points() -> None:
    # "Zoë" composed (U+00EB) against decomposed (e + U+0308): printed alike, so shown as code points
    composed, decomposed = "Zo\u00eb", "Zoe\u0308"
    gold = parse_tree(f"(S (NP (NNP {composed})) (VP (VBD ran)))")
    test = parse_tree(f"(S (NP (NNP {decomposed})) (VP (VBD ran)))")
    result = evaluate_sentence(0, gold, test, EvalbParams())
    assert result.status == "error"
    assert result.message == ("word mismatch at position 1: gold 'Zo\\xeb', test 'Zoe\\u0308' (the same "
                              "letters, encoded differently)")
    other = evaluate_sentence(0, gold, parse_tree("(S (NP (NNP Zoe)) (VP (VBD ran)))"), EvalbParams())
    assert other.message == "word mismatch at position 1: gold 'Zoë', test 'Zoe'"
