"""Faults of the Python API and of `clparse tag` found in session 14's hunt: wrong results with no error,
or an error from deep inside instead of one naming what was wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.data import sample_path
from clparse.errors import ParameterError
from clparse.parser import Parser, SourceSentence
from tests.conftest import invoke_cli, racing

THETA = 3.0


@pytest.fixture(scope="module")
def parser(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=THETA, beam=5)


@pytest.mark.parametrize("one", ["The dog barked .", b"The dog", None, 5, {"The": "DT"},
                                 SourceSentence(("Dogs",), ((0, 4),), ("Dogs",))])
def test_parse_many_and_parse_document_refuse_one_sentence_in_place_of_a_list(parser: Parser,
                                                                               one: object) -> None:
    """A string was read one character at a time: ``parse_many("The dog barked .")`` gave 16 one-letter
    trees, exit status 0."""
    with pytest.raises(ParameterError, match="sentences"):
        list(parser.parse_many(one))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="sentences"):
        parser.parse_document(one, progress=False)  # type: ignore[arg-type]


def test_parse_document_takes_any_iterable_as_parse_many_does(parser: Parser) -> None:
    """A generator was a TypeError (``len()`` for the progress line)."""
    sentences = ["The dog barked .", "A cat sat ."]
    expected = [r.to_dict() for r in parser.parse_many(sentences)]
    assert [r.to_dict() for r in parser.parse_document((s for s in sentences), progress=False)] == expected
    assert [r.to_dict() for r in parser.parse_document(sentences, progress=False)] == expected


@pytest.mark.parametrize("sentence", [5, 2.5, {"The": "DT", "dog": "NN"}])
def test_a_sentence_of_the_wrong_type_is_one_parameter_error(parser: Parser, sentence: object) -> None:
    """A number was ``TypeError: 'int' object is not iterable`` from deep inside; a {word: tag} dict
    parsed its words with the stored tagger's tags, its own dropped in silence."""
    with pytest.raises(ParameterError, match="sentence"):
        parser.parse(sentence)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="sentence"):
        parser.tag(sentence)  # type: ignore[arg-type]
    source = SourceSentence(("Dogs", "bark", "."), ((0, 4), (5, 9), (9, 10)), ("Dogs", "bark", "."))
    assert parser.parse(source).offsets == list(source.offsets)  # what parse_text gives parse stays taken
    assert [r.text for r in parser.parse_text("Dogs bark. Cats sleep.")] == [["Dogs", "bark", "."],
                                                                          ["Cats", "sleep", "."]]


def test_tag_eval_of_gold_without_a_word_is_an_error(trained_db: Path, tmp_path: Path) -> None:
    """Gold trees of empty elements alone gave "0 sentences, 0 tokens: 0.00 % tagged as in the gold trees"
    with exit status 0 (and ``api.evaluate_tags(db, [])`` an accuracy of 0.0): a score of nothing."""
    gold = tmp_path / "traces.mrg"
    gold.write_text("((S (NP-SBJ (-NONE- *)) (VP (-NONE- *T*))))\n")
    result = invoke_cli(["tag", "--db", trained_db, "--eval", gold])
    assert result.exit_code == 1 and result.stdout == "", result.stdout
    assert result.stderr.count("\n") == 1 and "no word to tag" in result.stderr and str(gold) in result.stderr
    with pytest.raises(ParameterError, match="gold"):
        api.evaluate_tags(trained_db, [])
    assert api.evaluate_tags(trained_db, [sample_path("dev")]).tokens > 0  # a gold with words still scores


@pytest.mark.parametrize("name", ["nope.jsonl", ".", ""])
def test_api_parse_names_a_missing_constraints_file(parser: Parser, tmp_path: Path, name: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing file was ``FileNotFoundError`` from the reader, a directory ``IsADirectoryError``, and
    only once the first sentence was read; --constraints names them, and so does api.parse now."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("The dog barked .\n")
    with pytest.raises(ParameterError, match="constraints"):
        list(api.parse(parser, ["in.txt"], constraints=name))
    (tmp_path / "brackets.jsonl").write_text('{"require": [[0, 2, "NP"]]}\n')
    result, = api.parse(parser, ["in.txt"], constraints="brackets.jsonl")
    assert result.fallback is None and "(NP (DT The) (NN dog))" in str(result.tree)


def test_a_parser_opened_by_a_relative_path_tags_with_its_own_tagger_after_a_chdir(
        trained_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored tagger loads at the first untagged sentence, from the path given to from_db: after
    ``os.chdir`` a relative one named no database there (an error at the first parse), or another run's
    of the same name, whose tagger then tagged in silence."""
    expected = Parser.from_db(trained_db, theta=THETA, beam=5).parse("The dog barked .").to_dict()
    monkeypatch.chdir(trained_db.parent)
    parser = Parser.from_db(trained_db.name, theta=THETA, beam=5)
    monkeypatch.chdir(tmp_path)
    assert parser.parse("The dog barked .").to_dict() == expected


def test_a_parser_opened_by_a_relative_path_explains_and_parses_in_jobs_after_a_chdir(
        trained_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Parser.source`` kept the relative path given to from_db: after ``os.chdir`` explain opened no
    database there (or another run's), and --jobs workers rebuilt the parser from whatever that name
    meant in the new directory."""
    from clparse.explain import explain

    expected = Parser.from_db(trained_db, theta=THETA, beam=5)
    monkeypatch.chdir(trained_db.parent)
    parser = Parser.from_db(trained_db.name, theta=THETA, beam=5)
    monkeypatch.chdir(tmp_path)
    assert parser.source == trained_db.resolve()
    assert explain(parser, "The dog barked .").to_dict() == explain(expected, "The dog barked .").to_dict()
    (tmp_path / "in.txt").write_text("The dog barked .\nA cat sat on the mat .\n")
    assert ([r.to_dict() for r in api.parse(parser, ["in.txt"], jobs=2)]
            == [r.to_dict() for r in api.parse(expected, ["in.txt"])])


def test_a_tagger_tags_a_generator_of_words_as_it_tags_the_list(trained_db: Path) -> None:
    """The word check read a generator to its end before the tagging read it: the perceptron tagged it as
    no words (``[]``, no error), the CRF tagger raised ``TypeError: object of type 'generator' has no
    len()`` from its features."""
    from clparse.tag.crf import CrfTagger
    from clparse.tag.perceptron import Tagger
    from clparse.tag.stored import load_tagger

    words = ["The", "dog", "barked", "."]
    crf = load_tagger(trained_db)
    assert isinstance(crf, CrfTagger)
    assert crf.tag(w for w in words) == crf.tag(words)
    assert crf.marginals(iter(words)) == crf.marginals(words)
    assert crf.alternatives(iter(words), 2, threshold=0.99) == crf.alternatives(words, 2, threshold=0.99)
    perceptron = Tagger.train([[("the", "DT"), ("dog", "NN"), ("barked", "VBD"), (".", ".")]] * 5)
    assert perceptron.tag(w for w in words) == perceptron.tag(words) and len(perceptron.tag(words)) == 4


def test_evaluate_tagger_scores_sentences_given_as_generators() -> None:
    """A sentence's pairs were read once for its words and then compared with none: each generator
    sentence counted, with 0 tokens, and the report said 0.00 % of 0 tokens."""
    from clparse.tag.evaluate import evaluate_tagger

    class Nouns:
        def tag(self, words: list[str]) -> list[str]:
            return ["NN"] * len(words)

    gold = [[("a", "DT"), ("dog", "NN")], [("cats", "NNS")]]
    report = evaluate_tagger(Nouns(), ((pair for pair in sentence) for sentence in gold))
    assert (report.sentences, report.tokens, report.correct) == (2, 3, 1)


def test_parsers_made_without_search_options_do_not_share_them(trained_db: Path) -> None:
    """``Parser(...)`` and ``Parser.from_model(...)`` shared one default SearchOptions instance: setting
    ``options.kbest`` on one parser changed the search of every parser made without options."""
    from clparse.rebuild.model import load_model
    from clparse.store.database import Database

    with Database(trained_db, readonly=True) as database:
        model = load_model(database, THETA)
    first = Parser.from_model(trained_db, model)
    first.options.kbest = 3
    later = Parser.from_model(trained_db, model)
    direct = Parser(model, later.preprocess)
    assert later.options.kbest == 1 and direct.options.kbest == 1


def test_threads_sharing_a_new_parser_load_its_tagger_once(trained_db: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each thread that reached the parser's lazy tagger before the first had loaded it loaded it again
    (a model read per thread), and one that read the database's path just after another thread had set it
    to None passed None to load_tagger."""
    import time

    import clparse.tag.stored as stored

    loads: list[object] = []
    load = stored.load_tagger

    def slow_load(db: object) -> object:
        loads.append(db)
        time.sleep(0.3)  # the others reach the property meanwhile
        return load(db)  # type: ignore[arg-type]

    monkeypatch.setattr(stored, "load_tagger", slow_load)
    parser = Parser.from_db(trained_db, theta=THETA, beam=5)
    taggers = racing(lambda k: parser.tagger)
    assert len(loads) == 1 and taggers[0] is not None and all(t is taggers[0] for t in taggers)


def test_parse_tagged_refuses_a_source_of_another_length(parser: Parser) -> None:
    """A source with more tokens than the pairs gave the result the offsets of its first tokens, in
    silence; one with fewer an IndexError."""
    pairs = [("Dogs", "NNS"), ("bark", "VBP"), (".", ".")]
    longer = SourceSentence(("Big", "dogs", "bark", "."), ((0, 3), (4, 8), (9, 13), (13, 14)),
                            ("Big", "dogs", "bark", "."))
    shorter = SourceSentence(("Dogs",), ((0, 4),), ("Dogs",))
    for source in (longer, shorter):
        with pytest.raises(ParameterError, match="source"):
            parser.parse_tagged(pairs, source)
    right = SourceSentence(("Dogs", "bark", "."), ((0, 4), (5, 9), (9, 10)), ("Dogs", "bark", "."))
    assert parser.parse_tagged(pairs, right).offsets == [(0, 4), (5, 9), (9, 10)]
