"""Faults a user met with running text, tokens and tags in (session 13): text input's sentence splitter and
tokens, ``parse_text``, ``parse``/``tag`` on the command line, the output formats and the spaCy component.
Each test failed before its fix."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from clparse.read.text import TextSentence, split_stream, split_text
from tests.test_text_input import ALPHABET, TEXT, check_offsets

THETA = "3"  # the session's trained sample is not calibrated
BOM, ZWSP = "\ufeff", "\u200b"


def words(sentences: list[TextSentence]) -> list[list[str]]:
    return [list(s.tokens) for s in sentences]


# ---------------------------------------------------------------------- 1. byte-order marks anywhere

def test_a_line_of_byte_order_marks_is_a_blank_line() -> None:
    """Files concatenated with ``cat`` (the second one starting with a BOM and a blank line): the line holding
    only the BOM did not end the paragraph in ``split_text``/``parse_text`` (``parse --input-format text``
    read it as blank), so a heading ran into the next sentence."""
    for white in (BOM, ZWSP, f" {BOM}\t{ZWSP}"):
        text = f"Introduction\n{white}\nThe dog barked."
        expected = [["Introduction"], ["The", "dog", "barked", "."]]
        assert words(split_text(text)) == expected, repr(white)
        assert words(list(split_stream(io.StringIO(text, newline="")))) == expected, repr(white)
        check_offsets(text, split_text(text))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
@example("a\n\ufeff\nb")
@example("x.\r\n\u200b\r\n\ufeff\n“y")
def test_a_byte_order_mark_or_zero_width_space_splits_as_a_space(text: str) -> None:
    """Anywhere in the text a BOM or a zero-width space gives what a space there gives, offsets and all."""
    plain = text.replace(BOM, " ").replace(ZWSP, " ")
    assert split_text(text) == split_text(plain)
    assert list(split_stream(io.StringIO(text, newline=""))) == split_text(plain)


def test_parse_text_takes_a_byte_order_mark_anywhere_as_white_space(trained_db: Path) -> None:
    from clparse.parser import Parser

    parser = Parser.from_db(trained_db, theta=3, beam=2, tag_alternatives=0)
    text = f"Introduction\n{BOM}\n{BOM}The dog{BOM}barked.{BOM}It slept.\n"
    results = parser.parse_text(text)
    assert [r.text for r in results] == [["Introduction"], ["The", "dog", "barked", "."],
                                         ["It", "slept", "."]]
    for result in results:
        assert result.offsets is not None and [text[s:e] for s, e in result.offsets] == result.text
    cli = parser.parse_text(text.replace(BOM, " "))  # what parse --input-format text reads
    assert [str(r.tree) for r in results] == [str(r.tree) for r in cli]
# ------------------------------------------------------------------ 2. abbreviations before a number

@pytest.mark.parametrize("text, expected", [
    ("See Eq. 3 for details.", [["See", "Eq.", "3", "for", "details", "."]]),
    ("see Eq. (3) and Eqs. 4-5 here.", [["see", "Eq.", "-LRB-", "3", "-RRB-", "and", "Eqs.", "4-5", "here",
                                         "."]]),
    ("We saw No. 5 in Vol. 2 and pp. 3-4 today.",
     [["We", "saw", "No.", "5", "in", "Vol.", "2", "and", "pp.", "3-4", "today", "."]]),
    ("It is in Sec. 3. Then more.", [["It", "is", "in", "Sec.", "3", "."], ["Then", "more", "."]]),
    ("Ref. 12 says so, see Nos. 3 and 4 and Art. 5 of it.",
     [["Ref.", "12", "says", "so", ",", "see", "Nos.", "3", "and", "4", "and", "Art.", "5", "of", "it",
       "."]]),
    ("Shown in Fig.\n2 and Ch. 10 of the book.",
     [["Shown", "in", "Fig.", "2", "and", "Ch.", "10", "of", "the", "book", "."]]),
    # a real sentence end stays one: no number after it, or a word the sentence may end with
    ("The answer is No. We left.", [["The", "answer", "is", "No", "."], ["We", "left", "."]]),
    ("See Fig. 2. 4 more came.", [["See", "Fig.", "2", "."], ["4", "more", "came", "."]]),
])
def test_an_abbreviation_before_a_number_does_not_end_the_sentence(text: str,
                                                                    expected: list[list[str]]) -> None:
    """``see Eq. 3 for`` was two sentences (``see Eq.`` and ``3 for``); ``No. 5`` was ``No . 5`` in two."""
    sentences = split_text(text)
    assert words(sentences) == expected
    check_offsets(text, sentences)


# ------------------------------------------------------------- 4. jackknife: checks before progress

def _small_treebank(tmp_path: Path, count: int) -> Path:
    from clparse.data import sample_path
    from clparse.read.ptb import format_tree, read_trees

    trees = [format_tree(tree) for _, tree in zip(range(count), read_trees(sample_path("train")))]
    path = tmp_path / "small.ptb"
    path.write_text("\n".join(trees) + "\n", encoding="utf-8")
    return path


def test_prepare_says_the_jackknife_starts_only_once_its_folds_are_checked(tmp_path: Path) -> None:
    """``prepare --train-tags jackknife --folds 1000`` on 453 sentences said "training 1000 perceptron
    taggers ..." and then refused the folds: the jackknife's start is now a callback of prepare, called
    after the checks and before the first fold's tagger trains."""
    from clparse.data import sample_path
    from clparse.errors import ParameterError
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database

    train = _small_treebank(tmp_path, 30)
    events: list[str] = []

    def run(db: Path, folds: int) -> None:
        init_database(db)
        prepare(db, [train], [sample_path("dev")],
                PrepareSettings(max_words=10, tagger="perceptron", tagger_iterations=1,
                                train_tags="jackknife", folds=folds),
                on_jackknife=lambda: events.append("start"), on_fold=lambda k: events.append(f"fold {k}"))

    with pytest.raises(ParameterError, match="folds"):
        run(tmp_path / "refused.sqlite", 1000)
    assert events == []
    run(tmp_path / "ok.sqlite", 2)
    assert events == ["start", "fold 0", "fold 1"]


# ------------------------------------------------------------------------- 3. spaCy: emoji sequences

@pytest.fixture(scope="module")
def nlp(trained_db: Path) -> object:
    spacy = pytest.importorskip("spacy")
    import clparse.spacy_component  # noqa: F401  (registers the factory)

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("clparse", config={"db": str(trained_db), "theta": 3, "beam": 2})
    return nlp


def test_spacy_emoji_sequences_are_one_word_each(nlp: object) -> None:
    """spaCy cuts emoji sequences apart (``👍`` ``🏽``, a family's zero-width joiners as tokens of their own,
    a flag's two letters, a variation selector alone): each piece was a word of the tree, invisible ones
    tagged (``(NNP \\u200d)``), one picture several words. A sequence is now one word over its tokens, as
    text input makes it; its constituents' spans cover whole sequences."""
    from clparse.read.ptb import parse_tree
    from clparse.spacy_component import NonConstituentError

    family = "👨\u200d👩\u200d👧"
    doc = nlp(f"Great 👍🏽 job {family} here 🇺🇸🇫🇷 now. Nice ☺\ufe0f day 😀.")  # type: ignore[operator]
    first, second = doc.sents
    assert parse_tree(first._.parse_string).words() == ["Great", "👍🏽", "job", family, "here", "🇺🇸", "🇫🇷",
                                                         "now", "."]
    assert parse_tree(second._.parse_string).words() == ["Nice", "☺\ufe0f", "day", "😀", "."]
    for sent, record in zip(doc.sents, doc._.clparse_sentences):
        for constituent in sent._.constituents:  # no sequence cut at either end
            covered = parse_tree(constituent._.parse_string).words()
            assert "".join(constituent.text.split()) == "".join(covered)
            assert constituent.start in record["words"] and constituent.end in record["ends"]
    thumb, tone = doc[1], doc[2]  # spaCy's two tokens of 👍🏽: one word, one tag, one constituent
    assert (thumb.text, tone.text) == ("👍", "🏽") and thumb.tag_ == tone.tag_ != ""
    assert doc[1:3]._.labels == doc[1:3]._.labels and doc[1:3]._.parse_string.endswith("👍🏽)")
    with pytest.raises(NonConstituentError):
        doc[2:4]._.parse_string  # half of 👍🏽 and "job"


def test_spacy_zero_width_space_is_white_space(nlp: object) -> None:
    """A zero-width space (U+200B) was a word of its own (an invisible leaf), as text input never makes it."""
    from clparse.read.ptb import parse_tree

    doc = nlp("The dog \u200b barked\u200bloudly .")  # type: ignore[operator]
    (sent,) = doc.sents
    assert parse_tree(sent._.parse_string).words() == ["The", "dog", "barked_loudly", "."]


# ------------------------------------------------------------------------------------ 5. the hunt

@pytest.mark.parametrize("text, expected", [
    ("I like vitamin C. It helps.", [["I", "like", "vitamin", "C", "."], ["It", "helps", "."]]),
    ("Solve for x.", [["Solve", "for", "x", "."]]),
    ("It came from A to B.\n\nNext", [["It", "came", "from", "A", "to", "B", "."], ["Next"]]),
    ('She said "I got a C."', [["She", "said", "``", "I", "got", "a", "C", ".", "''"]]),
    ("It is in (Appendix A.)", [["It", "is", "in", "-LRB-", "Appendix", "A", ".", "-RRB-"]]),
    # an initial before a name stays one token
    ("J. K. Rowling wrote it.", [["J.", "K.", "Rowling", "wrote", "it", "."]]),
])
def test_a_letter_ending_a_sentence_gives_up_its_period(text: str, expected: list[list[str]]) -> None:
    """``got a C.`` at a sentence's end was the one token ``C.`` (spaCy reads a letter and a period as an
    initial): the sentence had no final period, and the tagger saw an initial (GUM: ``C`` ``.``)."""
    sentences = split_text(text)
    assert words(sentences) == expected
    check_offsets(text, sentences)


def test_spacy_each_token_of_an_emoji_sequence_has_its_words_attributes(nlp: object) -> None:
    """Once an emoji sequence was one word, ``token._.parse_string`` of one of its tokens raised
    NonConstituentError (the token alone covers part of a word); each now answers for the whole word."""
    doc = nlp("The dog 👍🏽 barked.")  # type: ignore[operator]
    thumb, tone = doc[2], doc[3]
    assert (thumb.text, tone.text) == ("👍", "🏽")
    assert thumb._.parse_string == tone._.parse_string == doc[2:4]._.parse_string
    assert thumb._.parse_string.endswith(" 👍🏽)")
    assert thumb._.labels == doc[2:4]._.labels and tone._.parent == doc[2:4]._.parent


def test_a_nul_character_is_refused_by_parse_text_and_white_space_to_spacy(trained_db: Path,
                                                                            nlp: object) -> None:
    """A NUL character in text went into a word: ``parse_text`` gave a tree clparse's own reader refuses
    (binary data), as ``parse --input-format text`` refuses the input; in the spaCy component a
    constituent's ``parse_string`` (which reads the tree back) raised TreebankError."""
    from clparse.errors import ParameterError
    from clparse.parser import Parser
    from clparse.read.ptb import parse_tree

    parser = Parser.from_db(trained_db, theta=3, beam=2, tag_alternatives=0)
    with pytest.raises(ParameterError, match="character 7 is a NUL byte"):
        parser.parse_text("The dog\x00 barked.")
    doc = nlp("The dog\x00 barked \x00 .")  # type: ignore[operator]
    (sent,) = doc.sents
    assert parse_tree(sent._.parse_string).words() == ["The", "dog", "barked", "."]
    for constituent in sent._.constituents:
        constituent._.parse_string


@pytest.mark.parametrize("text, expected", [
    ("Ask Rep. Smith now.", [["Ask", "Rep.", "Smith", "now", "."]]),
    ("Gov. Brown and Lt. Dan met Rev. King.", [["Gov.", "Brown", "and", "Lt.", "Dan", "met", "Rev.", "King",
                                               "."]]),
    ("He is Assoc. Dean at the Hon.\nJudge's court in Ft. Worth.",
     [["He", "is", "Assoc.", "Dean", "at", "the", "Hon.", "Judge", "'s", "court", "in", "Ft.", "Worth",
       "."]]),
    # a sentence-starting word after it: the title's period ends the sentence (a firm's "& Assoc.")
    ("Smith and Assoc. The firm grew.", [["Smith", "and", "Assoc."], ["The", "firm", "grew", "."]]),
    ("He did a rep. Then he left.", [["He", "did", "a", "rep."], ["Then", "he", "left", "."]]),
])
def test_a_title_before_a_name_does_not_end_the_sentence(text: str, expected: list[list[str]]) -> None:
    """``Ask Rep. Smith now.`` was two sentences, ``Ask Rep.`` and ``Smith now.`` (also Gov., Lt., Rev.,
    Hon., Assoc., and Ft. Worth, which was ``Ft .`` besides): syntok knows Prof. and Gen., not these."""
    sentences = split_text(text)
    assert words(sentences) == expected
    check_offsets(text, sentences)


# ------------------------------------------------- properties: any character, and the spaCy component

# Any character but a lone surrogate (text cannot hold one), beside the hand-picked alphabet: control
# characters, other scripts, symbols, unassigned code points.
ANY_CHARACTER = st.characters(blacklist_categories=("Cs",))
# Pieces this session's fixes look at: abbreviations before numbers and names, final letters, BOM lines.
PIECES = st.sampled_from(["No.", "Eq.", "pp.", " 3", " (4)", "Rep.", " Smith", " The", "C.", "x.", '"', ")",
                          "\ufeff\n", " \u200b\n"])
ANY_TEXT = st.lists(st.one_of(ALPHABET, PIECES, ANY_CHARACTER), max_size=60).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_TEXT)
def test_offsets_cover_every_character_of_text_with_any_characters(text: str) -> None:
    sentences = split_text(text)
    check_offsets(text, sentences)
    assert list(split_stream(io.StringIO(text, newline=""))) == sentences


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(text=ANY_TEXT)
@example(text="A\x00 👍🏽 b🇺🇸🇫🇷\u200d👩 \u200b.")
def test_spacy_trees_hold_the_docs_words_and_every_attribute_answers(nlp: object, text: str) -> None:
    """On any text: each sentence's tree reads back (clparse's reader) with the words of its tokens, and
    every constituent's and every word token's attributes answer without an error."""
    from clparse.parser import escape
    from clparse.read.ptb import parse_tree
    from clparse.spacy_component import word

    doc = nlp(text)  # type: ignore[operator]
    for sent, record in zip(doc.sents, doc._.clparse_sentences):
        words = [escape(word(doc[a:b].text)) for a, b in zip(record["words"], record["ends"])]
        assert (parse_tree(sent._.parse_string).words() if words else []) == words
        for constituent in sent._.constituents:
            constituent._.parse_string, constituent._.children, constituent._.parent
        for token in sent:
            token._.labels, token._.confidence
            if word(token.text):
                token._.parse_string
