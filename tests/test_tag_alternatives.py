"""Parsing several taggings of untagged input and keeping the best parse (``tag_alternatives``, issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse.cli import main
from clparse.data import sample_path
from clparse.parser import TAG_ALTERNATIVES, Parser, SearchOptions, _rank
from clparse.read import read_trees
from clparse.tag.crf import UNSURE, CrfTagger


def dev_sentences(count: int = 20) -> list[list[str]]:
    return [[w for w, t in tree.tagged_words() if t != "-NONE-"]
            for tree in list(read_trees(sample_path("dev")))[:count]]


@pytest.fixture(scope="module")
def parser(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=3.0, beam=4)


def test_alternatives_swap_one_unsure_word_each_least_sure_first(parser: Parser) -> None:
    tagger = parser.tagger
    assert isinstance(tagger, CrfTagger)
    seen = 0
    for words in dev_sentences():
        taggings = tagger.alternatives(words, 4)
        best = tagger.tag(words)
        assert taggings[0] == best and 1 <= len(taggings) <= 5
        sureness = []
        for tags in taggings[1:]:
            (where,) = [i for i, (a, b) in enumerate(zip(tags, best)) if a != b]  # exactly one word differs
            tagger._tagger.set(tagger.features(words))
            top = max(tagger._tagger.marginal(label, where) for label in tagger.labels())
            assert top < UNSURE
            sureness.append(top)
            seen += 1
        assert sureness == sorted(sureness)
        assert tagger.alternatives(words, 0) == [best]
    assert seen > 5  # the sample's small tagger is unsure often


def test_the_parse_is_the_best_over_the_taggings_and_never_worse_than_the_best_tagging(trained_db: Path,
                                                                                      parser: Parser) -> None:
    plain = Parser.from_db(trained_db, theta=3.0, beam=4, tag_alternatives=0)
    many = Parser.from_db(trained_db, theta=3.0, beam=4, tag_alternatives=4)
    changed = 0
    for words in dev_sentences():
        results = [plain.parse_tagged(list(zip(words, tags)))
                   for tags in parser.tagger.alternatives(words, 4)]  # type: ignore[union-attr]
        ranks = [_rank(result, "sum") for result in results]  # the search's own key (sum by default)
        oracle = results[ranks.index(min(ranks))]  # the first of the best: ties keep the best tagging
        got = many.parse(words)
        assert str(got.tree) == str(oracle.tree) and got.tagged == oracle.tagged
        assert _rank(got, "sum") <= _rank(plain.parse(words), "sum")
        assert str(plain.parse(words).tree) == str(results[0].tree)
        changed += got.tagged != results[0].tagged
    assert changed > 0


def test_given_tags_are_kept_whatever_the_setting(trained_db: Path) -> None:
    many = Parser.from_db(trained_db, theta=3.0, beam=4, tag_alternatives=4)
    tagged = [("The", "DT"), ("dog", "NN"), ("barked", "VBD"), (".", ".")]
    assert many.parse(tagged).tagged == tagged


def test_defaults_agree_and_bad_values_are_refused(trained_db: Path) -> None:
    assert SearchOptions().tag_alternatives == TAG_ALTERNATIVES
    option = next(p for p in main.commands["parse"].params if p.name == "tag_alternatives")
    assert option.default == TAG_ALTERNATIVES
    result = CliRunner().invoke(main, ["parse", "--db", str(trained_db), "--tag-alternatives", "-1"],
                                input="The dog barked .\n")
    assert result.exit_code == 2 and "--tag-alternatives" in result.output
    zero = CliRunner().invoke(main, ["parse", "--db", str(trained_db), "--theta", "3", "--beam", "2",
                                     "--tag-alternatives", "0"], input="The dog barked .\n")
    assert zero.exit_code == 0 and zero.output.count("(ROOT") == 1


def test_marginals_are_probabilities_and_match_the_alternatives(parser: Parser) -> None:
    """Each word's marginals sum to 1, and the alternatives swap exactly the words whose top marginal is
    below the threshold, least sure first, to their second most probable tag (or first, if Viterbi's
    tag is not the marginals' top)."""
    tagger = parser.tagger
    assert isinstance(tagger, CrfTagger)
    assert tagger.marginals([]) == []
    for words in dev_sentences():
        marginals = tagger.marginals(words)
        best = tagger.tag(words)
        assert len(marginals) == len(words)
        assert all(abs(sum(m.values()) - 1) < 1e-6 and set(m) == set(tagger.labels()) for m in marginals)
        unsure = sorted((max(m.values()), t) for t, m in enumerate(marginals) if max(m.values()) < UNSURE)
        expected = []
        for _, t in unsure[:3]:
            ranked = sorted(marginals[t].items(), key=lambda pair: -pair[1])
            tags = list(best)
            tags[t] = ranked[1][0] if ranked[0][0] == best[t] else ranked[0][0]
            expected.append(tags)
        assert tagger.alternatives(words, 3) == [best, *expected]
