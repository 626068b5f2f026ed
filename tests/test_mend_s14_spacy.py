"""Mend, session 14: the spaCy component's attribute lookups (clparse/spacy_component.py).

Reading a token's or span's attribute rebuilt lists of the whole doc's sentences (and of the sentence's word
ends) on every read, so walking a long doc was quadratic. These tests pin what every attribute answers, for
every token and many spans (words, phrases, sentences, spans cutting an emoji sequence or crossing a
sentence), against a slow, obvious reference computed here from ``doc._.clparse_sentences`` alone: the same
value, or the same error with the same message. They also cover a doc parsed again, a doc whose
``clparse_sentences`` the user edited or replaced, a doc saved before ``ends`` existed, and a doc never
parsed: nothing read before a change may be answered after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Tuple

import pytest

spacy = pytest.importorskip("spacy", reason="the spaCy component needs the clparse[spacy] extra")

import clparse.spacy_component as component  # noqa: E402  (registers the factory)
from clparse.read.ptb import parse_tree  # noqa: E402

# punctuation, brackets, quotes, emoji sequences (one word over several tokens), white space tokens, a
# sentence of white space only, and one of 13 words that max_words=12 makes a flat tree
TEXT = ('  Dogs bark (loudly) at the cat.\n\nHe said "I got a C." and left. Great 👍🏽 job '
        "👨\u200d👩\u200d👧 here 🇺🇸🇫🇷 now. The old man saw the young woman with a big telescope in the park. "
        "Nice ☺\ufe0f day 😀.\n\n")
TOKEN_ATTRIBUTES = ("parse_string", "labels", "parent", "confidence", "confidences")
SPAN_ATTRIBUTES = ("parse_string", "labels", "constituents", "children", "parent", "confidence",
                   "confidences")
NO_PARSE = ("this doc has no clparse parse: add the component to the pipeline "
            '(nlp.add_pipe("clparse", config={"db": ...}))')


@pytest.fixture(scope="module")
def nlp(trained_db: Path) -> Any:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("clparse", config={"db": str(trained_db), "theta": 3, "beam": 2, "max_words": 12})
    return nlp


# ------------------------------------------------------------------- the reference: the slow, obvious way

def word_ranges(record: dict[str, Any]) -> list[tuple[int, int]]:
    """Each word's tokens (first, after the last); a record without ``ends`` has one token a word."""
    ends = record.get("ends")
    return [(a, a + 1 if ends is None else ends[k]) for k, a in enumerate(record["words"])]


def sentence_of(records: list[dict[str, Any]], i: int) -> Optional[dict[str, Any]]:
    """The last sentence starting at or before token ``i``."""
    before = [r for r in records if r["start"] <= i]
    return before[-1] if before else None


def locate(doc: Any, start: int, end: int) -> Tuple[Optional[dict[str, Any]], Optional[int]]:
    """(the span's sentence or None, index of the first node over exactly its words or None)."""
    records = doc._.clparse_sentences
    if records is None:
        raise ValueError(NO_PARSE)
    record = sentence_of(records, start)
    if record is None or end > record["end"] or start >= end:
        return None, None
    words = word_ranges(record)
    if any(a < cut < b for a, b in words for cut in (start, end)):
        return record, None  # it cuts a word apart
    first = sum(1 for a, _ in words if a < start)
    last = first + sum(1 for a, _ in words if start <= a < end)
    found = [n for n, node in enumerate(record["nodes"]) if tuple(node[:2]) == (first, last)]
    return record, found[0] if found else None


def node_span(doc: Any, record: dict[str, Any], node: list[Any]) -> Any:
    words = word_ranges(record)
    return doc[words[node[0]][0]:words[node[1] - 1][1]]


def parent_index(nodes: list[list[Any]], n: int) -> Optional[int]:
    """The narrowest other node around node ``n``."""
    around = [m for m, node in enumerate(nodes)
              if m != n and node[0] <= nodes[n][0] and nodes[n][1] <= node[1]]
    return min(around, key=lambda m: nodes[m][1] - nodes[m][0]) if around else None


def topmost_subtrees(ptb: str) -> dict[tuple[int, int], str]:
    """Every word span of the tree with the PTB text of the topmost node over it."""
    found: dict[tuple[int, int], str] = {}

    def walk(node: Any, at: int) -> int:
        found.setdefault((at, at + len(node)), str(node))
        for child in node.children:
            at = walk(child, at)
        return at + 1 if node.is_preterminal else at

    walk(parse_tree(ptb), 0)
    return found


def expected(doc: Any, start: int, end: int, attribute: str) -> Any:
    """What ``doc[start:end]._.<attribute>`` must be, computed from the records alone."""
    record, n = locate(doc, start, end)
    if attribute in ("labels", "confidences", "confidence"):
        values = () if n is None else tuple(record["nodes"][n][2 if attribute == "labels" else 3])  # type: ignore[index]
        return (values[-1] if values else None) if attribute == "confidence" else values
    if n is None:
        if record is not None and record.get("ptb") is not None and not record["words"]:
            return {"parse_string": "(ROOT)", "constituents": [], "children": [], "parent": None}[attribute]
        text = doc[start:end].text
        raise component.NonConstituentError(f"not a constituent of the clparse parse: {text!r}")
    assert record is not None
    nodes = record["nodes"]
    if attribute == "parse_string":
        return str(record["ptb"]) if n == 0 else topmost_subtrees(record["ptb"])[tuple(nodes[n][:2])]
    if attribute == "parent":
        above = parent_index(nodes, n)
        return None if above is None else node_span(doc, record, nodes[above])
    inside = [m for m, node in enumerate(nodes) if nodes[n][0] <= node[0] and node[1] <= nodes[n][1]]
    if attribute == "children":
        inside = [m for m in inside if m != n and parent_index(nodes, m) == n]
    return [node_span(doc, record, nodes[m]) for m in inside]


def token_word(doc: Any, i: int) -> tuple[int, int]:
    """The tokens of the word token ``i`` is part of; the token alone if it is no word."""
    records = doc._.clparse_sentences
    if records:
        record = sentence_of(records, i) or records[0]
        for a, b in word_ranges(record):
            if a <= i < b:
                return a, b
    return i, i + 1


# ----------------------------------------------------------------------------------- the comparison

def plain(value: Any) -> Any:
    if isinstance(value, spacy.tokens.Span):
        return ("span", value.start, value.end)
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)  # a list stays a list, a tuple a tuple
    return value


def outcome(get: Callable[[], Any]) -> Any:
    try:
        return "value", plain(get())
    except Exception as exc:  # the same error type and message, or the same value
        return "error", type(exc), str(exc)


def spans_to_check(doc: Any) -> set[tuple[int, int]]:
    """Every span of up to 8 tokens (empty ones too), every sentence, constituent and crossing pair."""
    spans = {(a, b) for a in range(len(doc) + 1) for b in range(a, min(a + 8, len(doc)) + 1)}
    spans |= {(0, len(doc)), (len(doc), 0), (3, 1)}
    if doc._.clparse_sentences is not None:
        for sent in doc.sents:
            spans |= {(sent.start, sent.end), (sent.start, min(sent.end + 2, len(doc))),
                      (max(sent.start - 2, 0), sent.end)}
        for record in doc._.clparse_sentences:
            for node in record["nodes"]:
                if node[1] <= len(record["words"]):
                    span = node_span(doc, record, node)
                    spans.add((span.start, span.end))
    return spans


def compare(doc: Any) -> int:
    """Check every token and span attribute against the reference; how many were compared."""
    compared = 0
    for token in doc:
        a, b = token_word(doc, token.i)
        for attribute in TOKEN_ATTRIBUTES:
            got = outcome(lambda: getattr(token._, attribute))
            assert got == outcome(lambda: expected(doc, a, b, attribute)), (token.i, token.text, attribute)
            compared += 1
    for start, end in sorted(spans_to_check(doc)):
        span = doc[start:end]
        for attribute in SPAN_ATTRIBUTES:
            got = outcome(lambda: getattr(span._, attribute))
            want = outcome(lambda: expected(doc, span.start, span.end, attribute))
            assert got == want, (start, end, attribute)
            compared += 1
    return compared


# ---------------------------------------------------------------------------------------------- tests

def test_every_attribute_of_every_token_and_span_is_the_slow_obvious_one(nlp: Any) -> None:
    doc = nlp(TEXT)
    records = doc._.clparse_sentences
    # what the doc is about: a flat tree, a sentence of white space, a word of several tokens
    assert any(r["fallback"] and r["words"] for r in records)
    assert any(not r["words"] for r in records)
    assert any(b - a > 1 for r in records for a, b in word_ranges(r))
    assert compare(doc) > 3000
    outcomes = {outcome(lambda: span._.parse_string)[0] for span in (doc[2:4], doc[0:3], doc[1:3])}
    assert outcomes == {"value", "error"}  # constituents and spans that are none, both compared


def test_a_doc_read_through_bytes_answers_the_same(nlp: Any) -> None:
    from spacy.tokens import Doc

    doc = nlp(TEXT)
    again = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    compare(again)
    assert [outcome(lambda: t._.parent) for t in again] == [outcome(lambda: t._.parent) for t in doc]


def test_a_doc_parsed_again_answers_from_its_new_parse(nlp: Any, trained_db: Path) -> None:
    doc = nlp(TEXT)
    before = [t._.labels for t in doc]
    compare(doc)  # every attribute read once, before the doc is parsed again
    flat = spacy.blank("en").add_pipe("clparse", config={"db": str(trained_db), "theta": 3, "max_words": 2})
    flat(doc)  # the same Doc: every sentence of more than 2 words is now a flat tree
    assert [t._.labels for t in doc] != before
    compare(doc)


def test_a_doc_whose_parse_the_user_edits_answers_from_the_edit(nlp: Any) -> None:
    doc = nlp(TEXT)
    records = doc._.clparse_sentences
    compare(doc)
    records[0]["nodes"][1][2] = ["EDITED"]  # in place
    k, record = next((k, r) for r in records for k, (a, b) in enumerate(word_ranges(r)) if b - a > 1)
    record["ends"][k] = record["words"][k] + 1  # an emoji sequence's word now ends on its first token
    compare(doc)
    for record in records:  # as a doc saved before "ends" existed reads
        del record["ends"]
    compare(doc)
    doc._.clparse_sentences = records[1:3]  # fewer sentences, the first token before any
    compare(doc)
    doc._.clparse_sentences.append(records[3])  # the doc's own list grows, then shrinks, in place
    compare(doc)
    del doc._.clparse_sentences[0]
    compare(doc)
    doc._.clparse_sentences = []
    compare(doc)


def test_a_doc_never_parsed_says_so_on_every_attribute(nlp: Any) -> None:
    doc = nlp.make_doc("The dog barked.")
    assert compare(doc) > 50
    with pytest.raises(ValueError, match="no clparse parse"):
        doc[0]._.labels


class Counted(list):  # type: ignore[type-arg]
    """A list that counts the items read from it and the walks over all of it."""

    def __init__(self, items: Any) -> None:
        super().__init__(items)
        self.items_read = 0
        self.walks = 0

    def __getitem__(self, index: Any) -> Any:
        self.items_read += 1
        return super().__getitem__(index)

    def __iter__(self) -> Any:
        self.walks += 1
        return super().__iter__()


def test_a_read_looks_at_a_few_sentences_and_walks_a_tree_once(nlp: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each read of a token's or span's attribute built the list of every sentence's start (and copied the
    sentence's word ends), and each constituent's ``parse_string`` walked the sentence's whole tree: reading
    every token of a doc of S sentences took time S times S. A read now looks at about log2(S) sentences."""
    from clparse.read.tree import Tree

    doc = nlp(" ".join(f"The dog {k} barked at the cat." for k in range(128)))  # 128 different trees
    records = doc._.clparse_sentences = Counted(doc._.clparse_sentences)
    for record in records:
        record["ends"] = Counted(record["ends"])
    records.walks = 0
    walked: list[str] = []
    spans = Tree.spans
    monkeypatch.setattr(Tree, "spans", lambda tree: walked.append(str(tree)) or spans(tree))
    reads = 0
    for sent in doc.sents:
        for obj in [*sent, sent, *sent._.constituents]:
            for attribute in TOKEN_ATTRIBUTES:
                getattr(obj._, attribute)
                reads += 1
    assert len(records) == 128 and reads > 5000
    assert records.walks == 0 and not any(record["ends"].walks for record in records)
    assert records.items_read <= reads * (2 * 8 + 6)  # two binary searches over 2**7 sentences a read
    assert len(walked) == len(set(walked)) <= len(records)  # each tree walked at most once
    assert len({record["ptb"] for record in records}) == len(records)
