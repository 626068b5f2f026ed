"""Untagged input through a combination is tagged as its lead member alone would tag it: with tag
alternatives the lead parses the other taggings too and keeps one (its tag chooser or the search's rule),
and every member parses the tagging it kept. Checked against the lead member's own ``Parser.parse``."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.combine.run import CombinedParser
from clparse.data import sample_path
from clparse.output import ParseResult
from clparse.read import format_tree, read_trees


@pytest.fixture
def combo(two_theta_combo: Path) -> Path:
    return two_theta_combo


def sample_words() -> list[list[str]]:
    return [[word for word, tag in tree.tagged_words() if tag != "-NONE-"]
            for tree in read_trees(sample_path("dev"))]


def shown(result: ParseResult) -> tuple[str, list[tuple[str, str]]]:
    return format_tree(result.tree), result.tagged


def opened(combo: Path, alternatives: int) -> CombinedParser:
    parser = api.open_parser(combo, tag_alternatives=alternatives)
    assert isinstance(parser, CombinedParser)
    return parser


def test_without_alternatives_every_member_parses_the_best_tagging(combo: Path) -> None:
    parser = opened(combo, 0)
    for words in sample_words()[:8]:
        assert shown(parser.parse(words)) == shown(parser.parse_tagged(parser.tag(words)))


def test_with_alternatives_the_tagging_is_the_one_the_lead_keeps_alone(combo: Path) -> None:
    parser = opened(combo, 3)
    lead = parser.members[parser.lead]
    other_taggings = 0
    for words in sample_words():
        alone = lead.parse(words)  # the single parser's choice among its taggings
        combined = parser.parse(words)
        assert combined.tagged == alone.tagged
        assert shown(combined) == shown(parser.parse_tagged(alone.tagged))
        other_taggings += alone.tagged != lead.tag(words)
    # the sample must exercise a tagging other than the best one, or this test shows nothing
    assert other_taggings > 0


def test_the_default_is_the_single_parsers_default(combo: Path) -> None:
    from clparse.parser import TAG_ALTERNATIVES

    parser = api.open_parser(combo)
    assert isinstance(parser, CombinedParser)
    assert parser.members[parser.lead].options.tag_alternatives == TAG_ALTERNATIVES


def test_tagged_parses_pairs_each_parse_with_the_tagging_it_parsed(combo: Path) -> None:
    # what the combination hands its other members: the lead's kept tagging, from its own code path
    lead = opened(combo, 3).members[0]
    with_alternatives = 0
    for words in sample_words()[:10]:
        tagged = lead.tagged_parses(words)
        plain = lead.tagging_parses(words)
        assert [(shown(r), c) for _, r, c in tagged] == [(shown(r), c) for r, c in plain]
        assert [tagging for tagging, _, _ in tagged] == [r.tagged for _, r, _ in tagged]
        assert tagged[0][0] == lead.tag(words)
        with_alternatives += len(tagged) > 1
    assert with_alternatives > 0  # alternatives were parsed, or the pairing was not checked


def test_a_bad_tag_alternatives_is_refused_for_a_combination_too(combo: Path) -> None:
    from clparse.errors import ParameterError

    for bad in (-1, 1.5, "3"):
        with pytest.raises(ParameterError, match="tag_alternatives"):
            api.open_parser(combo, tag_alternatives=bad)  # type: ignore[arg-type]
