"""Faults a user met with running text, tokens and tags in (session 13): text input's sentence splitter and
tokens, ``parse_text``, ``parse``/``tag`` on the command line, the output formats and the spaCy component.
Each test failed before its fix."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings

from clparse.read.text import TextSentence, split_stream, split_text
from tests.test_text_input import TEXT, check_offsets

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
