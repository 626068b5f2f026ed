"""One output for parses, k-best lists and constituent confidences (issue 28 items 1-2, issue 29 item 4):
``parse --kbest K``, ``parse --format ptb|pretty|json``, ``Parser.parse_text`` and :mod:`clparse.output`.

Everything reads the session's ``trained_db`` at Θ̂ = 3 with a small beam (k-best needs an agenda).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.features.state import leaf_items
from clparse.output import from_dict, to_dict
from clparse.parser import ParseResult, Parser, SearchOptions
from clparse.preprocess.pipeline import preprocess_tree
from clparse.read import read_trees
from clparse.read.ptb import format_tree, iter_trees_from_lines, parse_tree
from clparse.read.text import ptb_token
from clparse.read.tree import Tree
from clparse.search import CandidateScorer, search_kbest
from clparse.search.derivation import confidences
from tests.test_parse import invoke

DEV = sample_path("dev")
SEARCH = ["--theta", "3", "--beam", "20"]
K = 5
# Quotes and outer punctuation are set aside by preprocessing and put back into the tree afterwards, so
# a phrase's output span is wider than the span its classifier saw.
TEXT_INPUT = 'The dog barked. "It didn\'t stop,"\nshe said (twice).\n\nDr. Smith left.'
SENTENCES = ['" The dog barked at the cat . "', "He said : the report was late .", "She sleeps .",
             "The ( big ) dog ran home , quickly .", "`` Yes , '' she said ."]


def parse_cli(db: Path, *args: object, stdin: str | None = None) -> str:
    done = invoke(["parse", "--db", db, *SEARCH, *args], stdin)
    assert done.exit_code == 0, done.stderr
    return done.stdout


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def kbest(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=3.0, beam=20, kbest=K)


@pytest.fixture(scope="module")
def dev_tokens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 25 dev sentences as lines of tokens, and the hand-made ones with quotes and brackets."""
    lines = [" ".join(w for w, t in tree.tagged_words() if t != "-NONE-") for tree in read_trees(DEV)][:25]
    path = tmp_path_factory.mktemp("output") / "tokens.txt"
    path.write_text("\n".join(SENTENCES + lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ k-best


def test_kbest_lists_are_sorted_distinct_and_start_with_the_1best(trained_db: Path) -> None:
    # max-min's lists (the sum aggregator's: the next test, and `kbest` in the others)
    kbest = Parser.from_db(trained_db, theta=3.0, beam=20, kbest=K, aggregator="maxmin")
    one = Parser.from_db(trained_db, theta=3.0, beam=20, aggregator="maxmin")
    longer = 0
    for sentence in SENTENCES + [" ".join(tree.words()) for tree in list(read_trees(DEV))[:15]]:
        result = kbest.parse(sentence)
        assert result.kbest == K and 1 <= len(result.trees) <= K
        longer += len(result.trees) > 1
        ptb = [format_tree(t.tree) for t in result.trees]
        assert len(set(ptb)) == len(ptb)  # distinct
        assert ptb[0] == format_tree(one.parse(sentence).tree) == format_tree(result.tree)
        # max-min's key compares the sorted confidences lowest first: non-decreasing down the list
        keys = [tuple(-c for c in t.confidences) for t in result.trees]
        assert keys == sorted(keys)
        scores = [t.score for t in result.trees]
        assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore
        assert all(t.score == t.confidences[0] for t in result.trees)  # the lowest confidence
        assert all(list(t.confidences) == sorted(t.confidences) for t in result.trees)
    assert longer >= 10  # most sentences do have several trees


def test_kbest_score_under_the_sum_aggregator_is_minus_the_summed_loss(trained_db: Path) -> None:
    from clparse.search.aggregate import logistic_loss

    summed = Parser.from_db(trained_db, theta=3.0, beam=20, kbest=K, aggregator="sum")
    one = Parser.from_db(trained_db, theta=3.0, beam=20)  # the default aggregator is sum
    for sentence in SENTENCES:
        trees = summed.parse(sentence).trees
        assert format_tree(trees[0].tree) == format_tree(one.parse(sentence).tree)
        assert len({format_tree(t.tree) for t in trees}) == len(trees)  # distinct
        scores = [t.score for t in trees]
        assert len(trees) > 1 and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        for t in trees:
            assert t.score == pytest.approx(-sum(logistic_loss(c) for c in t.confidences), abs=1e-9)


def test_kbest_1_is_the_plain_parse_byte_for_byte(trained_db: Path, dev_tokens: Path) -> None:
    for fmt in ("ptb", "pretty", "json"):
        plain = parse_cli(trained_db, "--format", fmt, dev_tokens)
        assert parse_cli(trained_db, "--format", fmt, "--kbest", "1", dev_tokens) == plain
    assert parse_cli(trained_db, dev_tokens) == parse_cli(trained_db, "--format", "ptb", dev_tokens)


def test_kbest_ptb_lines_are_score_and_tree_with_a_blank_line_per_sentence(trained_db: Path,
                                                                           dev_tokens: Path) -> None:
    text = parse_cli(trained_db, "--kbest", K, dev_tokens)
    blocks = text.split("\n\n")
    assert blocks[-1] == "" and len(blocks) - 1 == len(dev_tokens.read_text().splitlines())
    plain = parse_cli(trained_db, dev_tokens).splitlines()
    data = json_lines(parse_cli(trained_db, "--kbest", K, "--format", "json", dev_tokens))
    for block, best, entry in zip(blocks, plain, data):
        rows = [line.split("\t") for line in block.splitlines()]
        assert rows[0][1] == best and [tree for _, tree in rows] == [t["ptb"] for t in entry["trees"]]
        assert [float(score) for score, _ in rows] == [t["score"] for t in entry["trees"]]


def test_kbest_must_be_positive(trained_db: Path) -> None:
    with pytest.raises(ConfigurationError, match="kbest"):
        Parser.from_db(trained_db, theta=3.0, kbest=0)
    done = invoke(["parse", "--db", trained_db, "--kbest", "0"], "The dog barked .\n")
    assert done.exit_code == 2 and "--kbest" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------------------------ JSON


def test_json_constituents_are_the_ptb_trees_brackets(trained_db: Path, dev_tokens: Path) -> None:
    data = json_lines(parse_cli(trained_db, "--kbest", K, "--format", "json", dev_tokens))
    assert len(data) == len(dev_tokens.read_text().splitlines())
    for entry in data:
        for tree_data in entry["trees"]:
            tree = parse_tree(tree_data["ptb"])
            assert [(c["start"], c["end"], c["label"]) for c in tree_data["constituents"]] == \
                tree.labeled_spans()
            assert tree.tagged_words() == list(zip(entry["tokens"], entry["tags"]))
            assert entry["offsets"] is None and all(c["chars"] is None for c in tree_data["constituents"])


def test_json_share_is_the_fraction_of_the_k_trees_holding_the_labelled_span(trained_db: Path,
                                                                             dev_tokens: Path) -> None:
    data = json_lines(parse_cli(trained_db, "--kbest", K, "--format", "json", dev_tokens))
    for entry in data:
        spans = [{(c["label"], c["start"], c["end"]) for c in t["constituents"]} for t in entry["trees"]]
        for tree_data in entry["trees"]:
            for c in tree_data["constituents"]:
                held = sum((c["label"], c["start"], c["end"]) in s for s in spans)
                assert c["share"] == held / len(spans)
    plain = json_lines(parse_cli(trained_db, "--format", "json", dev_tokens))
    assert all(c["share"] is None for e in plain for t in e["trees"] for c in t["constituents"])


def leaf_span(kept: list[int], start: int, end: int) -> tuple[int, int]:
    """The span in the search's leaf positions of the output tokens start..end (their kept tokens)."""
    inside = [i for i, position in enumerate(kept) if start <= position < end]
    return inside[0], inside[-1] + 1


def test_confidences_are_the_paths_on_the_right_nodes(trained_db: Path, kbest: Parser) -> None:
    """Each constituent's confidence is the one its inference had in the search's own path: the search is
    run again here, and each output span is taken back to leaf positions through the kept tokens."""
    grown = 0
    for sentence in SENTENCES:
        result = kbest.parse(sentence)
        tagged = result.tagged
        prepared = preprocess_tree(Tree("S", [Tree.preterminal(t, w) for w, t in tagged]), kbest.preprocess)
        assert prepared is not None
        removed = {token.index for token in prepared.removed}
        assert removed  # each of these sentences has tokens set aside and put back
        kept = [i for i in range(len(tagged)) if i not in removed]
        leaves = leaf_items([tagged[i] for i in kept], kbest.model.vocabulary.normalize)
        found = search_kbest(leaves, CandidateScorer(kbest.model.for_scoring()), K, beam=20)
        assert len(found) == len(result.trees)
        for index, (parsed, searched) in enumerate(zip(result.trees, found)):
            expected = confidences(leaves, searched.path)
            out = result.constituents(index)
            for c in out:
                start, end = leaf_span(kept, c.start, c.end)
                grown += end - start < c.end - c.start  # punctuation put back inside it
                assert c.confidence == expected[(c.label, start, end)], (sentence, c)
            # every inference built one phrase of the tree, so the values are the derivation's, once each
            assert sorted(c.confidence for c in out if c.confidence is not None) == list(parsed.confidences)
            assert len(out) == len(searched.path)
    assert grown  # output spans do differ from the spans the classifiers saw


def test_flat_and_empty_sentences_in_json(trained_db: Path) -> None:
    text = parse_cli(trained_db, "--max-words", "3", "--format", "json", "--kbest", "3",
                     stdin="The dog barked at the cat .\n\nShe sleeps .\n")
    flat, empty, parsed = json_lines(text)
    assert flat["fallback"] == "longer than 3 tokens" and len(flat["trees"]) == 1
    (tree,) = flat["trees"]
    assert tree["score"] is None and tree["confidences"] == []
    assert tree["constituents"] == [{"label": "ROOT", "start": 0, "end": 7, "chars": None, "confidence": None,
                                     "share": 1.0}]
    assert empty["fallback"] == "empty sentence" and empty["tokens"] == [] and \
        empty["trees"][0]["ptb"] == "(ROOT)"
    assert empty["trees"][0]["constituents"][0]["start"] == empty["trees"][0]["constituents"][0]["end"] == 0
    assert parsed["fallback"] is None and all(c["confidence"] is not None
                                              for t in parsed["trees"] for c in t["constituents"])


@pytest.mark.parametrize("aggregator", ["sum", "maxmin", None])
def test_json_names_the_aggregator_its_scores_come_from(trained_db: Path, aggregator: str | None) -> None:
    # a score alone does not say whether it is a summed loss or a lowest confidence
    given = [] if aggregator is None else ["--aggregator", aggregator]
    results = json_lines(parse_cli(trained_db, "--format", "json", "--kbest", "3", *given,
                                   stdin="The dog barked at the cat .\nShe sleeps .\n"))
    named = aggregator or "sum"  # the default
    for result in results:
        assert result["aggregator"] == named
        for tree in result["trees"]:
            lowest = min(tree["confidences"])
            summed = -sum(math.log1p(math.exp(-c)) for c in tree["confidences"])
            assert tree["score"] == pytest.approx(summed if named == "sum" else lowest)
        assert from_dict(result).aggregator == named


def test_a_sentence_of_any_length_gets_a_tree_by_default(trained_db: Path) -> None:
    # 160 tokens: over the old default limit of 100, which gave a flat tree; --max-words still caps
    words = " , and ".join(["the dog barked at the cat"] * 23) + " ."
    assert len(words.split()) > 150
    (parsed,) = json_lines(parse_cli(trained_db, "--format", "json", stdin=words + "\n"))
    assert parsed["fallback"] is None and parsed["trees"][0]["ptb"].count("(") > len(words.split()) + 1
    capped_text = parse_cli(trained_db, "--format", "json", "--max-words", "100", stdin=words + "\n")
    (capped,) = json_lines(capped_text)
    assert capped["fallback"] == "longer than 100 tokens"
    with pytest.raises(ConfigurationError, match="max_words"):
        SearchOptions(max_words=-1)


def test_brackets_follow_the_ptb_convention_in_json_and_text_keeps_the_characters(trained_db: Path) -> None:
    # --tag-alternatives 0: the best tagging alone, as `clparse tag` gives it (with alternatives the parse
    # may keep another tag at an unsure word: tests/test_tag_alternatives.py)
    tokens = json_lines(parse_cli(trained_db, "--format", "json", "--tag-alternatives", "0",
                                  stdin="He ( really ) left .\n"))[0]
    assert tokens["tokens"] == ["He", "-LRB-", "really", "-RRB-", "left", "."] and tokens["text"] is None
    text = json_lines(parse_cli(trained_db, "--format", "json", "--input-format", "text",
                                stdin="He (really) left.\n"))[0]
    assert text["tokens"] == tokens["tokens"]
    assert text["text"] == ["He", "(", "really", ")", "left", "."]
    assert parse_tree(text["trees"][0]["ptb"]).words() == text["tokens"]
    # `clparse tag` spells them the same way, and tags them as the parser's JSON does
    tagged = invoke(["tag", "--db", trained_db], "He ( really ) left .\n")
    assert tagged.exit_code == 0, tagged.stderr
    pairs = [token.rsplit("/", 1) for token in tagged.stdout.split()]
    assert [w for w, _ in pairs] == tokens["tokens"] and [t for _, t in pairs] == tokens["tags"]


def test_pretty_trees_read_back_as_the_ptb_trees(trained_db: Path, dev_tokens: Path) -> None:
    ptb = parse_cli(trained_db, dev_tokens).splitlines()
    pretty = parse_cli(trained_db, "--format", "pretty", dev_tokens)
    assert [format_tree(t) for t in iter_trees_from_lines(pretty.splitlines(), allow_empty=True)] == ptb
    ranked = parse_cli(trained_db, "--format", "pretty", "--kbest", K, dev_tokens)
    heads = [line for line in ranked.splitlines() if line.startswith("#")]
    assert heads[0].startswith("# sentence 1, tree 1 of ") and ", score " in heads[0]
    trees = list(iter_trees_from_lines([line for line in ranked.splitlines() if not line.startswith("#")]))
    assert len(trees) == len(heads)


def test_to_dict_and_from_dict_give_the_same_json(kbest: Parser) -> None:
    for result in [kbest.parse(sentence) for sentence in SENTENCES] + kbest.parse_text(TEXT_INPUT):
        back = from_dict(json.loads(json.dumps(to_dict(result))), result.kbest)
        assert isinstance(back, ParseResult) and back.tree == result.tree
        assert to_dict(back) == to_dict(result)


# ------------------------------------------------------------------------------ text: offsets


def test_parse_text_gives_sentences_with_offsets_tags_and_trees(trained_db: Path) -> None:
    parser = Parser.from_db(trained_db, theta=3.0, beam=2)
    text = TEXT_INPUT
    results = parser.parse_text(text)
    assert [r.tree.words() for r in results] == [
        ["The", "dog", "barked", "."], ['"', "It", "did", "n't", "stop", ",", '"', "she", "said", "-LRB-",
                                        "twice", "-RRB-", "."], ["Dr.", "Smith", "left", "."]]
    for r in results:
        assert r.offsets is not None and r.text == [text[s:e] for s, e in r.offsets]
        assert [t for _, t in r.tagged] == r.tree.tags()
    assert results[1].text is not None and results[2].offsets is not None
    assert results[1].text[9] == "(" and results[2].offsets[0] == (text.index("Dr."), text.index("Dr.") + 3)


def test_parse_text_is_the_commands_text_input(trained_db: Path, tmp_path: Path) -> None:
    text = 'One line. Two\r\nlines here.\r\n\r\n  A "quoted" (bracketed) one.\n\n\nLast'
    path = tmp_path / "text.txt"
    path.write_bytes(text.encode("utf-8"))
    parser = Parser.from_db(trained_db, theta=3.0, beam=20)
    expected = [json.dumps(to_dict(r), ensure_ascii=False) for r in parser.parse_text(text)]
    assert parse_cli(trained_db, "--input-format", "text", "--format", "json", path).splitlines() == expected


ALPHABET = st.sampled_from(
    list("abcxyzAXZ0189 .,;:!?'\"()[]-–/&$%*") + list("“”‘’…éüß") +
    ["\n", "\n\n", "\t", "\r\n", "\u00a0", "n't", "'s", "Dr.", "U.S.", "--", "dog", "the", "barked"])
TEXT = st.lists(ALPHABET, max_size=40).map("".join)


@pytest.fixture(scope="module")
def greedy(trained_db: Path) -> Parser:
    return Parser.from_db(trained_db, theta=3.0, beam=1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(TEXT)
def test_offsets_slice_the_input_to_each_tokens_characters(greedy: Parser, text: str) -> None:
    covered: set[int] = set()
    previous = 0
    for result in greedy.parse_text(text):
        data = result.to_dict()
        assert data["tokens"] == result.tree.words()
        for token, (start, end), chars in zip(data["tokens"], data["offsets"], data["text"]):
            assert text[start:end] == chars and start >= previous and end > start
            assert token in (chars, ptb_token(chars, True), ptb_token(chars, False))
            covered.update(range(start, end))
            previous = end
        for c in data["trees"][0]["constituents"]:
            if c["end"] > c["start"]:
                assert c["chars"] == [data["offsets"][c["start"]][0], data["offsets"][c["end"] - 1][1]]
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())  # nothing dropped


def test_dask_gives_the_bytes_of_one_process_for_json_and_kbest(trained_db: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    path = tmp_path / "text.txt"
    path.write_text(TEXT_INPUT, encoding="utf-8")
    args = ["--kbest", K, "--format", "json", "--input-format", "text", path]
    one = parse_cli(trained_db, *args)
    assert parse_cli(trained_db, *args, "--dask", "local:1") == one and '"offsets": [[' in one
