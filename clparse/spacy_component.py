"""clparse as a spaCy pipeline component (issue 29 item 5; docs/spacy.md).

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("clparse", config={"db": "db/quickstart.sqlite"})
    for sent in nlp("The dog barked. It ran away.").sents:
        print(sent._.parse_string, sent._.labels, sent._.confidence)

The attributes follow benepar's (``parse_string``, ``labels``, ``constituents``, ``children``, ``parent``
on spans and tokens), plus ``confidence``/``confidences`` (the classifier's confidence of a constituent,
from the parse's derivation) and ``doc._.clparse_theta``. A constituent is a *distinct span* of the tree,
as in benepar: a unary chain (``ROOT`` over ``S``) is one constituent with the labels ``("ROOT", "S")``,
and every word is one (labels ``()`` unless a phrase covers just it). Unlike benepar the tree keeps
clparse's ``ROOT`` on top, so ``parse_string`` is exactly what ``clparse parse`` writes.

spaCy is imported only here (``clparse[spacy]``); clparse's parser is imported when a component is made,
because spaCy imports every ``spacy_factories`` entry point whenever it makes a pipeline. For the same
reason the extension attributes are registered when a component is made (or by
:func:`install_extensions`), never at import: installing clparse must not touch the attributes of other
packages (benepar uses the same names).

What a doc holds is plain data (``doc._.clparse_sentences``: lists, strings, numbers), so docs go through
``Doc.to_bytes``, ``DocBin`` and ``nlp.pipe(n_process=N)`` with their parses.
"""

import bisect
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from clparse.errors import ConfigurationError

if TYPE_CHECKING:
    from clparse.output import ParseResult
    from clparse.read.tree import Tree

__all__ = ["ClparseComponent", "make_component", "install_extensions", "NonConstituentError",
           "NoSentencesError", "UNSPLIT_MAX_WORDS"]

#: A doc without sentence boundaries is parsed as one sentence only up to this many words (whitespace
#: tokens not counted): one typed sentence (``nlp("The dog barked.")``) or a pre-split one passes, while
#: a paragraph whose user forgot the sentencizer gets an error instead of one long, wrong tree.
UNSPLIT_MAX_WORDS = 40

#: The component's defaults. beam 10, narrower than ``clparse parse``'s 100: on all of GUM dev (README, "every
#: sentence length"; gold tags) the all-length model scores 79.53 F1 at beam 10 against 79.34 at 1000, at
#: 3.8x the speed (16.8 against 4.4 sentences/s), and 86.49 against 86.59 on dev <= 15; running text has
#: long sentences, where beam 1000 reached the pop cap on one in seven of all GUM dev sentences. (Those were
#: max-min figures; with the summed loss, the default since 2026-11-27, the K = 8 model scores 81.72 at beam
#: 10 against 81.84 at 100 and 30: docs/search.md.)
DEFAULT_CONFIG: Dict[str, Any] = {"db": None, "theta": "best", "beam": 10, "max_words": 0,
                                  "set_tags": True, "tag_chooser": True, "aggregator": "sum"}


class NonConstituentError(ValueError):
    """The span is not a constituent of the parse (it covers no node's words exactly)."""


class NoSentencesError(ConfigurationError, ValueError):
    """A long doc without sentence boundaries: add a sentence splitter before clparse."""


# ---------------------------------------------------------------------------------------------- parsing

@Language.factory("clparse", default_config=DEFAULT_CONFIG)
def make_component(nlp: Language, name: str, db: Optional[str], theta: Union[float, str], beam: int,
                   max_words: int, set_tags: bool, tag_chooser: bool = True,
                   aggregator: str = "sum") -> "ClparseComponent":
    """spaCy's factory: ``nlp.add_pipe("clparse", config={"db": PATH})`` (docs/spacy.md)."""
    return ClparseComponent(db, theta=theta, beam=beam, max_words=max_words, set_tags=set_tags, name=name,
                            tag_chooser=tag_chooser, aggregator=aggregator)


class ClparseComponent:
    """Parses every sentence of a doc with one :class:`~clparse.parser.Parser`, loaded once.

    Pickling keeps only the settings (a pickle never holds a model): unpickling loads the parser from
    ``db`` again, which is what ``nlp.pipe(n_process=N)`` does under the spawn start method. ``nlp.to_disk``
    writes the settings into the pipeline's config.cfg and nothing else, so ``spacy.load`` reads the
    database at ``db`` (give an absolute path for a pipeline loaded from another directory).
    """

    def __init__(self, db: Optional[str], theta: Union[float, str] = "best", beam: int = 10,
                 max_words: int = 0, set_tags: bool = True, name: str = "clparse",
                 tag_chooser: bool = True, aggregator: str = "sum") -> None:
        from clparse.parser import Parser

        if db is None or not str(db).strip():
            raise ConfigurationError('the clparse component needs its database: nlp.add_pipe("clparse", '
                                     'config={"db": "path/to/model.sqlite"})')
        self.name = name
        if not isinstance(tag_chooser, bool):  # "false" from a config would have turned it on
            raise ConfigurationError(f"clparse component: tag_chooser must be true or false, got "
                                     f"{tag_chooser!r}")
        self.settings: Dict[str, Any] = {"db": str(db), "theta": theta, "beam": beam, "max_words": max_words,
                                         "set_tags": set_tags, "tag_chooser": tag_chooser,
                                         "aggregator": aggregator}
        self.parser: Parser = Parser.from_db(db, theta=theta, beam=beam, max_words=max_words,
                                             tag_chooser=tag_chooser, aggregator=aggregator)
        model = self.parser.model
        # per-label calibration gives one Θ̂ per label; a dict of floats survives Doc.to_bytes as is
        self.theta: Union[float, Dict[str, float]] = (dict(model.label_thetas) if model.label_thetas
                                                      else float(model.theta))
        self.set_tags = set_tags
        install_extensions()

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_unpickle, (self.settings, self.name))

    def __call__(self, doc: Doc) -> Doc:
        sentences = list(_sentences(doc))
        records = [self._parse_sentence(doc, start, end) for start, end in sentences]
        doc._.clparse_sentences = records
        doc._.clparse_theta = self.theta
        return doc

    def _parse_sentence(self, doc: Doc, start: int, end: int) -> Dict[str, Any]:
        ranges = _word_ranges(doc, start, end)
        # words: each word's first token; ends: the token after its last (a word may span several tokens)
        record: Dict[str, Any] = {"start": start, "end": end, "words": [a for a, _ in ranges],
                                  "ends": [b for _, b in ranges], "ptb": "(ROOT)", "nodes": [], "score": None,
                                  "fallback": "empty sentence"}
        if not ranges:
            return record
        result = self.parser.parse([word(doc[a:b].text) for a, b in ranges])
        if len(result.tagged) != len(ranges):  # the parser keeps every token: anything else is a defect
            raise AssertionError(f"clparse returned {len(result.tagged)} words for {len(ranges)} tokens")
        if self.set_tags:
            for (a, b), (_, tag) in zip(ranges, result.tagged):
                for i in range(a, b):
                    doc[i].tag_ = tag
        record.update(ptb=str(result), nodes=_nodes(result), score=result.score, fallback=result.fallback)
        return record


def _unpickle(settings: Dict[str, Any], name: str) -> ClparseComponent:
    return ClparseComponent(name=name, **settings)


def word(text: str) -> str:
    """A spaCy token's word for the parser: white space inside a token (``Doc(words=["New York"])``) as
    ``_``, which PTB text cannot hold; "" for a token of white space only. A byte-order mark counts as
    white space, as in every text clparse reads: spaCy glues one to the first word of a file read without
    "utf-8-sig", and clparse's tree reader takes it for a separator, so a tree holding it read back with
    other words. A zero-width space does too, as in text input (it was an invisible word), and a NUL
    character (no tree holding one reads back: a constituent's ``parse_string`` failed). (The parser spells
    parentheses -LRB-/-RRB- itself: :func:`clparse.read.tree.escape_brackets`, as for every untagged
    input.)"""
    return "_".join(text.translate(_INVISIBLE_WHITE).split())


_INVISIBLE_WHITE = {0xFEFF: " ", 0x200B: " ", 0x00: " "}


def _word_ranges(doc: Doc, start: int, end: int) -> List[Tuple[int, int]]:
    """The parser's words over the tokens ``start``..``end`` as (first token, token after the last): white
    space tokens are none, and a token that goes on the symbol of the one before it, with no white space
    between, is part of its word. spaCy cuts emoji sequences apart (``👍`` ``🏽``, a family's zero-width
    joiners as tokens of their own, a flag's two letters), which made invisible words and one picture
    several; text input (:func:`clparse.read.text.one_symbol`) keeps each whole, and so does this."""
    from clparse.read.text import one_symbol

    ranges: List[Tuple[int, int]] = []
    for i in range(start, end):
        if not word(doc[i].text):
            continue
        if ranges and ranges[-1][1] == i and not doc[i - 1].whitespace_ \
                and one_symbol(doc[ranges[-1][0]:i].text, doc[i].text):
            ranges[-1] = (ranges[-1][0], i + 1)
        else:
            ranges.append((i, i + 1))
    return ranges


def _sentences(doc: Doc) -> Iterator[Tuple[int, int]]:
    """The doc's sentences as token ranges; a short doc without boundaries becomes one sentence."""
    if len(doc) == 0:
        return
    if not doc.has_annotation("SENT_START"):
        words = len(_word_ranges(doc, 0, len(doc)))
        if words > UNSPLIT_MAX_WORDS:
            raise NoSentencesError(
                f"clparse: this doc has no sentence boundaries and {words} words, more than "
                f"{UNSPLIT_MAX_WORDS} for one sentence: add a sentence splitter before clparse "
                f'(nlp.add_pipe("sentencizer", before="clparse")), or mark the sentences yourself '
                f"(doc[i].is_sent_start = True or False for every token)")
        for token in doc:  # one sentence, so that doc.sents gives the span the tree is on
            token.is_sent_start = token.i == 0
    for sent in doc.sents:
        yield sent.start, sent.end


def _nodes(result: "ParseResult") -> List[List[Any]]:
    """The best tree's distinct spans in pre-order, over word positions: ``[start, end, labels,
    confidences]``, a unary chain being one span with its labels top down (a word alone: no labels)."""
    parsed = result.trees[0]
    confidences = iter(parsed.confidence_per_phrase())  # phrases in pre-order, as spans() meets them
    nodes: List[List[Any]] = []
    for start, end, node in parsed.tree.spans():
        if not nodes or (nodes[-1][0], nodes[-1][1]) != (start, end):
            nodes.append([start, end, [], []])
        if not node.is_preterminal:
            nodes[-1][2].append(node.label)
            nodes[-1][3].append(next(confidences))
    return nodes


# ------------------------------------------------------------------------------------------- attributes

def install_extensions() -> None:
    """Register the ``._.`` attributes (done by every component; call it yourself to read parsed docs,
    e.g. from ``DocBin``, in a process that made no component). They replace benepar's of the same names."""
    Doc.set_extension("clparse_sentences", default=None, force=True)
    Doc.set_extension("clparse_theta", default=None, force=True)
    for name, getter in (("parse_string", parse_string), ("labels", labels), ("constituents", constituents),
                         ("children", children), ("parent", parent), ("confidence", confidence),
                         ("confidences", confidences)):
        Span.set_extension(name, getter=getter, force=True)
    for name, getter in (("parse_string", parse_string), ("labels", labels), ("parent", parent),
                         ("confidence", confidence), ("confidences", confidences)):
        Token.set_extension(name, getter=_on_token(getter), force=True)


def _on_token(getter: Any) -> Any:
    def on_token(token: Token) -> Any:
        return getter(_word_span(token))

    return on_token


def _word_span(token: Token) -> Span:
    """The tokens of the word ``token`` is part of (an emoji sequence spaCy cut apart is one word), so each of
    its tokens has the word's attributes; the token alone if it is no word."""
    doc, i = token.doc, token.i
    records = doc._.clparse_sentences
    if records:
        record = records[max(0, _sentence_at(records, i))]
        k = bisect.bisect_right(record["words"], i) - 1
        if k >= 0 and _end(record, k) > i:
            return doc[record["words"][k]:_end(record, k)]
    return doc[i:i + 1]


def _sentence_at(records: List[Dict[str, Any]], i: int) -> int:
    """The index of the last sentence starting at or before token ``i`` (-1: none). A binary search over
    the records themselves: nothing is built per read, and nothing is kept that an edit of
    ``doc._.clparse_sentences`` or a new parse of the doc could leave out of date."""
    return bisect.bisect_right(records, i, key=_START) - 1


_START = itemgetter("start")


def _find(span: Span) -> Tuple[Dict[str, Any], Optional[int], int, int]:
    """(sentence record, index of the node whose words the span covers exactly or None, words start, end)."""
    records = span.doc._.clparse_sentences
    if records is None:
        raise ValueError("this doc has no clparse parse: add the component to the pipeline "
                         '(nlp.add_pipe("clparse", config={"db": ...}))')
    at = _sentence_at(records, span.start)
    if at < 0 or span.end > records[at]["end"] or span.start >= span.end:
        return {"words": [], "nodes": [], "ptb": None}, None, 0, 0  # empty, or across sentences
    record = records[at]
    words = record["words"]
    first, last = bisect.bisect_left(words, span.start), bisect.bisect_left(words, span.end)
    if (first > 0 and _end(record, first - 1) > span.start) \
            or (last > first and _end(record, last - 1) > span.end):
        return record, None, first, last  # it cuts a word (an emoji sequence) apart
    for n, node in enumerate(record["nodes"]):
        if node[0] == first and node[1] == last:
            return record, n, first, last
    return record, None, first, last


def _located(span: Span) -> Optional[Tuple[Dict[str, Any], int]]:
    """(sentence record, node index) of a constituent; None for a sentence without words (no tree to
    walk); :class:`NonConstituentError` for any other span."""
    record, n, _, _ = _find(span)
    if n is None:
        if _is_empty_sentence(record):
            return None
        raise NonConstituentError(f"not a constituent of the clparse parse: {span.text!r}")
    return record, n


def _end(record: Dict[str, Any], k: int) -> int:
    """The token after word ``k``'s last (records of older docs have one token a word)."""
    ends: Optional[List[int]] = record.get("ends")
    words: List[int] = record["words"]
    return words[k] + 1 if ends is None else ends[k]


def _span(doc: Doc, record: Dict[str, Any], node: List[Any]) -> Span:
    return doc[record["words"][node[0]]:_end(record, node[1] - 1)]


def _is_empty_sentence(record: Dict[str, Any]) -> bool:
    return record.get("ptb") is not None and not record["words"]


def parse_string(span: Span) -> str:
    """The PTB tree of the constituent (a sentence: its whole tree, ``ROOT`` on top, as ``clparse parse``
    writes it; a sentence without words: ``(ROOT)``)."""
    located = _located(span)
    if located is None:
        return "(ROOT)"
    record, n = located
    if n == 0:
        return str(record["ptb"])
    start, end = record["nodes"][n][:2]
    from clparse.read.ptb import format_tree

    node = _topmost(record["ptb"]).get((start, end))
    if node is None:
        raise AssertionError(f"no node over words {start}..{end} in {record['ptb']}")
    return format_tree(node)


@lru_cache(maxsize=64)
def _topmost(ptb: str) -> Dict[Tuple[int, int], "Tree"]:
    """The tree's word spans, each with the topmost node over it: one walk of a sentence's tree for all
    of its constituents (keyed by the tree's text, which cannot change under it)."""
    from clparse.read.ptb import parse_tree

    topmost: Dict[Tuple[int, int], "Tree"] = {}
    for start, end, node in parse_tree(ptb).spans():  # pre-order: the topmost node over a span comes first
        topmost.setdefault((start, end), node)
    return topmost


def labels(span: Span) -> Tuple[str, ...]:
    """The labels of the phrases over exactly the span's words, top down; () if none (white space at
    either end of the span does not count)."""
    record, n, _, _ = _find(span)
    return () if n is None else tuple(record["nodes"][n][2])


def confidences(span: Span) -> Tuple[Optional[float], ...]:
    """The classifiers' confidences of those phrases, one per label (None: no classifier built it, as a
    flat tree's ROOT); the values of ``--format json``'s ``constituents[].confidence``."""
    record, n, _, _ = _find(span)
    return () if n is None else tuple(record["nodes"][n][3])


def confidence(span: Span) -> Optional[float]:
    """The confidence of the lowest phrase over the span: the decision that made these words a
    constituent (the phrases above it in a unary chain relabel the same words). None if there is none."""
    found = confidences(span)
    return found[-1] if found else None


def _subtree(span: Span) -> Tuple[Dict[str, Any], List[List[Any]]]:
    """The constituent's node and the nodes inside it, pre-order (none for a sentence without words)."""
    located = _located(span)
    if located is None:
        return {}, []
    record, n = located
    nodes = record["nodes"]
    end = nodes[n][1]
    inside = n + 1
    while inside < len(nodes) and nodes[inside][0] < end:
        inside += 1
    return record, nodes[n:inside]


def constituents(span: Span) -> List[Span]:
    """The constituent and every constituent inside it, pre-order (a sentence: all of its tree's)."""
    record, nodes = _subtree(span)
    return [_span(span.doc, record, node) for node in nodes]


def children(span: Span) -> List[Span]:
    """The constituents right below this one, left to right (none below a word)."""
    record, nodes = _subtree(span)
    out = []
    expected = nodes[0][0] if nodes else 0
    for node in nodes[1:]:
        if node[0] == expected:  # pre-order: the first node starting there is the largest, the child
            out.append(_span(span.doc, record, node))
            expected = node[1]
    return out


def parent(span: Span) -> Optional[Span]:
    """The constituent right above this one; None above a sentence's tree."""
    located = _located(span)
    if located is None:
        return None
    record, n = located
    nodes = record["nodes"]
    start, end = nodes[n][:2]
    for node in reversed(nodes[:n]):  # pre-order: the nearest earlier node around it is its parent
        if node[0] <= start and end <= node[1]:
            return _span(span.doc, record, node)
    return None
