"""Faults a Python user of ``Parser`` and ``api.parse`` met: settings ignored, bad trees, deep errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.errors import ParameterError
from clparse.parser import Parser
from clparse.read import parse_tree

THETA = 3.0


@pytest.fixture(scope="module")
def parser(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=THETA, beam=5)


def test_parse_tagged_spells_brackets_as_parse_does_and_writes_readable_trees(parser: Parser) -> None:
    """``parse_tagged`` wrote the word ``(`` bare, ``(-LRB- ()``, which no PTB reader takes, and parsed it
    as another word than ``parse`` of the same tagged tokens did."""
    tagged = [("a", "DT"), ("(", "-LRB-"), ("b", "NN"), (")", "-RRB-"), ("x", "(")]
    direct = parser.parse_tagged(tagged)
    assert direct.to_dict() == parser.parse(tagged).to_dict()
    assert parse_tree(str(direct)).words() == ["a", "-LRB-", "b", "-RRB-", "x"]
    assert [t for _, t in direct.tagged] == ["DT", "-LRB-", "NN", "-RRB-", "-LRB-"]


@pytest.mark.parametrize("tagged", [
    [("New York", "NNP"), ("grew", "VBD")],  # a word with a space: the tree read back had three words
    [("The", ""), ("dog", "NN")],  # an empty tag: "( The)"
    [("The", "D T"), ("dog", "NN")],
    [("", "DT"), ("dog", "NN")],
])
def test_parse_tagged_refuses_what_ptb_text_cannot_hold(parser: Parser,
                                                        tagged: list[tuple[str, str]]) -> None:
    with pytest.raises(ParameterError, match="sentence"):
        parser.parse_tagged(tagged)


@pytest.mark.parametrize("sentence", [
    [1, 2],
    ["a", ("b", "NN")],
    [("b", "NN"), "a"],
    [("b", "NN", "x")],
    [("b",)],
    "The dog".split() + [None],  # type: ignore[list-item]
])
def test_malformed_tokens_are_one_parameter_error(parser: Parser, sentence: list[object]) -> None:
    """An AttributeError or ValueError from deep inside before."""
    with pytest.raises(ParameterError, match="sentence"):
        parser.parse(sentence)  # type: ignore[arg-type]


def test_parse_tagged_of_malformed_pairs_is_one_parameter_error(parser: Parser) -> None:
    with pytest.raises(ParameterError, match="sentence"):
        parser.parse_tagged("The dog")  # type: ignore[arg-type]


def test_pairs_as_lists_parse_as_tuples(parser: Parser) -> None:
    """JSON gives pairs as lists: they were read as words (an AttributeError)."""
    tagged = [("The", "DT"), ("dog", "NN"), ("barked", "VBD")]
    assert str(parser.parse([list(p) for p in tagged])) == str(parser.parse(tagged))  # type: ignore[misc]


def test_parse_text_of_bytes_is_a_parameter_error(parser: Parser) -> None:
    with pytest.raises(ParameterError, match="text"):
        parser.parse_text(b"The dog barked.")  # type: ignore[arg-type]


def test_from_db_names_an_unknown_option_and_a_bad_theta(trained_db: Path) -> None:
    """A TypeError from SearchOptions' constructor, a ValueError from float()."""
    with pytest.raises(ParameterError, match="beem"):
        Parser.from_db(trained_db, theta=THETA, beem=5)
    with pytest.raises(ParameterError, match="theta"):
        Parser.from_db(trained_db, theta="bset")


def test_api_parse_refuses_search_settings_for_a_parser_already_open(parser: Parser, tmp_path: Path) -> None:
    """They were dropped in silence: ``api.parse(parser, files, beam=1)`` parsed at the parser's beam."""
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="beam"):
        list(api.parse(parser, [str(text)], beam=1))
    with pytest.raises(ParameterError, match="theta"):
        list(api.parse(parser, [str(text)], theta=1.5))
    assert [str(r) for r in api.parse(parser, [str(text)])] == [str(parser.parse("The dog barked ."))]


def test_api_sql_refuses_an_unknown_format(trained_db: Path) -> None:
    """``fmt="xml"`` gave the table format without a word."""
    with pytest.raises(ParameterError, match="fmt"):
        api.sql(trained_db, "SELECT 1", fmt="xml")
    assert api.sql(trained_db, "SELECT 1 AS one", fmt="json").strip().startswith("[")

