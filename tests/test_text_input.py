"""Text input (issue 29 item 1): clparse.read.text on hand-worked paragraphs, and offsets on any text."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clparse.read.text import TextSentence, ptb_token, split_stream, split_text


def words(sentences: list[TextSentence]) -> list[list[str]]:
    return [list(s.tokens) for s in sentences]


def test_paragraph_with_clitics_quotes_brackets_abbreviations_numbers():
    text = ('Dr. Smith said "I don\'t know (really)." The U.S. economy grew 3.5 percent\n'
            "in 2023. It's self-directed, isn't it?")
    assert words(split_text(text)) == [
        ["Dr.", "Smith", "said", "``", "I", "do", "n't", "know", "-LRB-", "really", "-RRB-", ".", "''"],
        ["The", "U.S.", "economy", "grew", "3.5", "percent", "in", "2023", "."],
        ["It", "'s", "self", "-", "directed", ",", "is", "n't", "it", "?"],
    ]


def test_offsets_point_at_the_source_characters():
    text = 'He said "don\'t" (twice).'
    (sentence,) = split_text(text)
    assert sentence.source_tokens(text) == ["He", "said", '"', "do", "n't", '"', "(", "twice", ")", "."]
    assert sentence.tokens[2] == "``" and sentence.tokens[5] == "''"
    assert sentence.spans[2] == (8, 9) and text[8] == '"'
    assert (sentence.start, sentence.end) == (0, len(text))


def test_line_broken_mid_sentence_and_blank_line_ends_a_paragraph():
    text = "The cat sat\non the mat. It\nslept\n\nthen a new paragraph"
    assert words(split_text(text)) == [
        ["The", "cat", "sat", "on", "the", "mat", "."],
        ["It", "slept"],
        ["then", "a", "new", "paragraph"],
    ]


def test_curly_quotes_and_apostrophes():
    text = "“It’s fine,” she said. Citizens’ rights aren’t ‘limited’."
    assert words(split_text(text)) == [
        ["``", "It", "’s", "fine", ",", "''", "she", "said", "."],
        ["Citizens", "’", "rights", "are", "n’t", "`", "limited", "’", "."],
    ]


def test_low_and_guillemet_quotes_get_a_direction():
    # „…“ (German style): the “ closes; «…» as English text uses guillemets, spaces inside or not; a “
    # written where ” belongs closes by its context
    assert words(split_text("Er sagte „Hallo“ und ging.")) == [
        ["Er", "sagte", "``", "Hallo", "''", "und", "ging", "."]]
    assert words(split_text("Il a dit « bonjour » hier, «oui».")) == [
        ["Il", "a", "dit", "``", "bonjour", "''", "hier", ",", "``", "oui", "''", "."]]
    assert words(split_text("“Hi,“ he said.")) == [["``", "Hi", ",", "''", "he", "said", "."]]
    # raw quotes (what parse --input-format text gives the tagger) keep the characters
    assert words(split_text("Er sagte „Hallo“.", quotes="raw")) == [["Er", "sagte", "„", "Hallo", "“", "."]]


@pytest.mark.parametrize("fmt, line", [("tokens", "The dog barked ."),
                                       ("tagged", "The/DT dog/NN barked/VBD ./."),
                                       ("text", "The dog barked.")])
def test_a_byte_order_mark_past_the_first_line_is_not_part_of_a_word(tmp_path: Path, fmt: str, line: str):
    # `cat a.txt b.txt` where b.txt starts with a BOM: line 2 begins with one
    from clparse.read.sentences import read_sentences

    plain, joined = tmp_path / "plain.txt", tmp_path / "joined.txt"
    plain.write_text(f"{line}\n\n{line}\n", encoding="utf-8")
    joined.write_text(f"\ufeff{line}\n\n\ufeff{line}\n", encoding="utf-8")
    assert list(read_sentences([str(joined)], fmt)) == list(read_sentences([str(plain)], fmt))
    assert words(split_text("left\ufeff. Now")) == [["left", "."], ["Now"]]


def test_a_zero_width_space_separates_words():
    assert words(split_text("They left\u200b. Now\u200bhere")) == [["They", "left", "."], ["Now", "here"]]
    assert split_text("\u200b \u200b") == []


def test_a_web_or_mail_address_can_end_a_sentence():
    assert words(split_text("Visit https://gum.org/x. Then leave. Mail a.b@c.com. Thanks.")) == [
        ["Visit", "https://gum.org/x", "."], ["Then", "leave", "."], ["Mail", "a.b@c.com", "."],
        ["Thanks", "."]]
    # not before a lower-case word, nor without a space after the period
    assert words(split_text("See www.gum.org. and more")) == [["See", "www.gum.org", ".", "and", "more"]]
    assert len(split_text("Go to www.gum.org.Then")) == 1


def test_hyphens_prefixes_dashes_and_references():
    text = "A non-native, cross-sectional study of 22-506 e-mails--twice. It ended in 1805. [6]\n"
    assert words(split_text(text)) == [
        ["A", "non-native", ",", "cross-sectional", "study", "of", "22-506", "e-mails", "--", "twice", "."],
        ["It", "ended", "in", "1805", ".", "[", "6", "]"],
    ]


def test_abbreviations_keep_their_period():
    text = "See Smith et al. for details, e.g. the tables, etc. in Fig. 2. Mr. Jones agreed."
    assert words(split_text(text)) == [
        ["See", "Smith", "et", "al.", "for", "details", ",", "e.g.", "the", "tables", ",", "etc.", "in",
         "Fig.", "2", "."],
        ["Mr.", "Jones", "agreed", "."],
    ]


def test_stream_gives_the_same_sentences_and_offsets():
    text = "One sentence here. Two\nsentences.\n\n\nA second paragraph (short).\n  \nLast"
    streamed = list(split_stream(io.StringIO(text, newline="")))
    assert streamed == split_text(text)
    assert [s.source_tokens(text)[0] for s in streamed] == ["One", "Two", "A", "Last"]


def test_empty_and_blank_text():
    assert split_text("") == []
    assert split_text(" \n\n \t\n") == []


# ------------------------------------------------------------------------------------- properties

ALPHABET = st.sampled_from(
    list("abcxyzABCXYZ0123456789 .,;:!?'\"()[]{}-–—/&$%#@*+=<>_`~^|\\") + list("“”‘’„«»…")
    + list("éüñßçøÆŒ") + ["\n", "\n\n", "\t", "\r\n", "\u00a0", "n't", "'s", "Dr.", "U.S.", "etc.", "--",
                          ":)", "):", "e-mail", "non-", "3.5", "😀", "🏽", "\u200d", "🇺", "\ufe0f", "\u0301",
                          "\u200b", "\ufeff"]
)
ZWSP = "\u200b"  # white space for the splitter: a break between words
BOM = "\ufeff"  # likewise (a stray byte-order mark)
TEXT = st.lists(ALPHABET, max_size=80).map("".join)


def check_offsets(text: str, sentences: list[TextSentence]) -> None:
    previous_end = 0
    covered: set[int] = set()
    for sentence in sentences:
        assert len(sentence.tokens) == len(sentence.starts) == len(sentence.ends) > 0
        for token, start, end in zip(sentence.tokens, sentence.starts, sentence.ends):
            source = text[start:end]
            assert start >= previous_end and end > start  # increasing, not overlapping, not empty
            assert token in (ptb_token(source, True), ptb_token(source, False)), (token, source)
            assert not any(c.isspace() or c in (ZWSP, BOM) for c in source)
            covered.update(range(start, end))
            previous_end = end
    for i, char in enumerate(text):
        if not char.isspace() and char not in (ZWSP, BOM):
            assert i in covered, (i, char, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_offsets_cover_every_character_of_any_text(text):
    check_offsets(text, split_text(text))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_stream_matches_whole_text(text):
    assert list(split_stream(io.StringIO(text, newline=""))) == split_text(text)


@pytest.mark.parametrize("text", ["(", '"', "--", "a--", "--a", "-a-", "a-(b)-c", "\u00a0x\u2028y", "’’",
                                  "):("])
def test_odd_inputs(text):
    check_offsets(text, split_text(text))


def test_text_input_format_reads_paragraphs_into_sentences(tmp_path: Path) -> None:
    """``--input-format text``: a line may hold two sentences, a sentence may run over two lines, a blank
    line ends a paragraph; quotes keep the text's characters (as GUM's words do), brackets are escaped."""
    from clparse.read.sentences import read_sentences

    text = tmp_path / "text.txt"
    text.write_text('The dog barked. It didn\'t stop "barking"\n(loudly) at night.\n\nDr. Smith left.\n',
                    encoding="utf-8")
    assert list(read_sentences([str(text)], "text")) == [
        ["The", "dog", "barked", "."],
        ["It", "did", "n't", "stop", '"', "barking", '"', "-LRB-", "loudly", "-RRB-", "at", "night", "."],
        ["Dr.", "Smith", "left", "."],
    ]


def test_parse_command_takes_running_text(trained_db: Path) -> None:
    from click.testing import CliRunner

    from clparse.cli import main

    done = CliRunner().invoke(main, ["parse", "--db", str(trained_db), "--theta", "3", "--beam", "2",
                                     "--input-format", "text"], input="The dog barked. It slept.\n")
    assert done.exit_code == 0, done.output
    trees = [line for line in done.stdout.splitlines() if line.startswith("(ROOT")]
    assert len(trees) == 2 and "barked" in trees[0] and "slept" in trees[1]


# ------------------------------------------------------------------- review: line ends, BOM, surrogates

def test_lone_carriage_returns_end_lines_and_paragraphs(tmp_path: Path) -> None:
    """A file with CR line ends (classic Mac) was read as one line: every sentence of ``--input-format
    tokens`` or ``tag`` became one, and a blank line did not end a paragraph of text."""
    from clparse.read.sentences import read_sentences

    tokens = tmp_path / "cr.tok"
    tokens.write_bytes(b"The dog barked .\rIt slept .\r\nOK .\r")
    assert list(read_sentences([str(tokens)], "tokens")) == [
        ["The", "dog", "barked", "."], ["It", "slept", "."], ["OK", "."]]
    text = tmp_path / "cr.txt"
    text.write_bytes(b"Introduction\r\rThe dog barked.\r")
    assert list(read_sentences([str(text)], "text")) == [["Introduction"], ["The", "dog", "barked", "."]]


def test_parse_text_drops_a_leading_byte_order_mark(trained_db: Path) -> None:
    """``open(path, encoding="utf-8").read()`` keeps a file's BOM: it was glued to the first word (and tagged
    as part of it); now it is skipped as every file reader skips it, and offsets still point into the text."""
    from clparse.parser import Parser

    parser = Parser.from_db(trained_db, theta=3, beam=2, tag_alternatives=0)
    text = "\ufeffThe dog barked. It slept."
    with_bom, without = parser.parse_text(text), parser.parse_text(text[1:])
    assert [str(r.tree) for r in with_bom] == [str(r.tree) for r in without]
    assert with_bom[0].text == ["The", "dog", "barked", "."]
    for result in with_bom:
        assert [text[s:e] for s, e in result.offsets] == result.text
    assert with_bom[0].offsets[0] == (1, 4)


def test_parse_text_refuses_lone_surrogates_with_one_error(trained_db: Path) -> None:
    from clparse.errors import ParameterError
    from clparse.parser import Parser

    parser = Parser.from_db(trained_db, theta=3, beam=2)
    with pytest.raises(ParameterError, match="character 4 .* lone surrogate"):
        parser.parse_text("The \udcffdog barked.")


def test_emoji_sequences_are_one_token_and_end_sentences() -> None:
    """spaCy cut emoji sequences apart (a skin tone, a family's zero-width joiners and a flag's letters as
    tokens of their own: invisible words), and syntok glued an emoji to the period after it, so the
    sentence did not end there."""
    text = "Great 👍🏽 job 👨\u200d👩\u200d👧 here 🇺🇸🇫🇷! Nice ☺\ufe0f day 😀. Done. 😀 Next one."
    sentences = split_text(text)
    assert words(sentences) == [
        ["Great", "👍🏽", "job", "👨\u200d👩\u200d👧", "here", "🇺🇸", "🇫🇷", "!"],
        ["Nice", "☺\ufe0f", "day", "😀", "."],
        ["Done", "."],
        ["😀", "Next", "one", "."],
    ]
    check_offsets(text, sentences)
