"""The parser, usable from Python: rebuild at Θ̂ from a database, then parse tokens or tagged tokens.

    parser = Parser.from_db("db/clparse.sqlite", theta="best")
    result = parser.parse("The dog barked .")          # tokens: tagged with the stored tagger
    result = parser.parse([("The", "DT"), ("dog", "NN"), ("barked", "VBD")])
    print(result.tree)          # PTB text over every input token
    result.to_nltk()            # nltk.Tree
    result.to_dict()            # tokens, tags, trees with scores and per-constituent confidences
    for sentence in parser.parse_text("The dog barked. It didn't stop."):   # running text
        print(sentence.offsets, sentence.tree)

    Parser.from_db(db, kbest=5).parse(...).trees   # the 5 best distinct trees, best first

Each sentence goes through the run's own preprocessing (quotation marks and outermost punctuation
are set aside, headwords lower-cased or UNK), the search, and back: set-aside tokens are put back
so the output holds every input token in order. A sentence the search cannot finish, an empty
one or an over-long one gets a flat tree (``fallback`` says why), never an exception. A search that
reaches the pop cap finishes greedily from its best state (``completion`` says so). Results, their
serialisation and the output formats: :mod:`clparse.output` (docs/output.md).
"""

from __future__ import annotations

import io
import numbers
import os
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clparse.errors import ConfigurationError, DatabaseError, ParameterError, RunningTextWarning
from clparse.features.numba_start import lean_cache_loads
from clparse.features.state import leaf_items
from clparse.output import ParsedTree, ParseResult, score_value  # ParseResult: re-exported, its old home
from clparse.preprocess.pipeline import PreprocessConfig, preprocess_tagged
from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG
from clparse.read.sentences import running_text_token
from clparse.read.tree import Tree, escape_brackets
from clparse.rebuild.model import ParserModel, best_theta, load_model
from clparse.search import aggregate as search_aggregate
from clparse.search import CandidateScorer, search_kbest
from clparse.search.best_first import Scorer
from clparse.search.brackets import BracketedScorer, BracketError, Brackets
from clparse.search.restore import flat_tree, item_tree, restore_tokens
from clparse.store import reading
from clparse.store.chooser_rows import chooser_weights
from clparse.store.database import Database
from clparse.tag.choice import FEATURES, TagChooser, theta_key

if TYPE_CHECKING:  # the tagger's modules read the database through SQLAlchemy: imported when a tagger is
    from clparse.tag.stored import PosTagger
    from types import FrameType


lean_cache_loads()  # before the first compiled call: cached kernels load without numba's compiler registries


escape = escape_brackets  # its old name here, kept for callers of clparse.parser.escape

#: Held while a stored tagger tags: a CRFsuite tagger keeps the sentence it last tagged, and its
#: alternatives read marginals from it in several calls, so two threads sharing a parser read each
#: other's sentence (an IndexError, or other taggings parsed without a word). Module-wide, so a parser
#: still pickles; tagging is a small part of a parse.
_TAGGING = threading.Lock()
#: Held while a parser loads its stored tagger (at its first untagged sentence): threads sharing a new
#: parser each loaded it, and one that read the path just after another had loaded it passed None.
_LOADING = threading.Lock()


def _checked(token: str, what: str) -> str:
    """A word or tag that PTB text can hold: not empty, no white space (the API takes any string)."""
    if token.split() != [token] or "\ufeff" in token:  # empty, white space, or a byte-order mark (which
        # the tree reader takes as white space: the tree would read back with other words)
        raise ParameterError("sentence", f"{what} {token!r}: a {what} must be non-empty, without white space")
    if "\x00" in token:  # clparse's own tree reader refuses the tree it would be in
        raise ParameterError("sentence", f"{what} {token!r}: holds a NUL character, which no tree can hold")
    if not token.isascii():
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no output format could write the tree
            raise ParameterError("sentence", f"{what} {token!r}: not valid Unicode text (a lone surrogate)") \
                from None
    return token


@dataclass(frozen=True)
class SourceSentence:
    """A sentence of running text: its treebank tokens and, per token, where its characters are in the text
    (``text[start:end] == chars[i]``; ``chars`` keeps ``(`` where the token is ``-LRB-``)."""

    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    chars: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.tokens)


Sentence = str | Sequence[str] | Sequence[tuple[str, str]] | SourceSentence


def text_sentences(lines: Iterable[str]) -> Iterator[SourceSentence]:
    """The sentences of running text given as lines (:func:`clparse.read.text.split_stream`, quotes as the
    text has them, as GUM's words are), with each token's offsets and characters. Offsets count characters
    from the first line's start. Needs the ``clparse[text]`` extra."""
    from clparse.read.text import split_stream

    held: list[str] = []  # lines read from ``base`` on: a sentence's characters are in them when it comes
    base = 0
    joined, joined_for = "", (-1, -1)

    def reading() -> Iterator[str]:
        for line in lines:
            held.append(line)
            yield line

    for sentence in split_stream(reading(), quotes="raw"):
        dropped = 0
        while dropped < len(held) and base + len(held[dropped]) <= sentence.start:
            base += len(held[dropped])  # lines of paragraphs already done
            dropped += 1
        del held[:dropped]
        if joined_for != (base, len(held)):  # a paragraph's sentences come together: join its lines once
            joined, joined_for = "".join(held), (base, len(held))
        yield SourceSentence(sentence.tokens, tuple(sentence.spans),
                             tuple(joined[s - base:e - base] for s, e in sentence.spans))


def _outside_clparse() -> int:
    """The stack level of the first caller outside this package: a warning names the user's line."""
    import sys

    package = os.path.dirname(__file__) + os.sep  # not a user's clparse_demo.py beside the package
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _tokens(sentence: Sentence) -> list[Any]:
    """A sentence's tokens, all words (strings) or all (word, tag) pairs: a string is split on whitespace,
    and a pair may be a list (as JSON gives it). Anything else is one ParameterError naming the token (an
    AttributeError or an unpacking ValueError came from deep inside before)."""
    if isinstance(sentence, str):
        split: list[str] = sentence.split()
        if running_text_token(split) is not None:  # as parse warns of such a file
            # one text for every sentence, so Python's filter shows it once a calling line, not per sentence
            warnings.warn("a sentence given as a string looks like running text (punctuation on a word, as "
                          "in 'barked.'): a string is split at spaces into treebank tokens; for running "
                          "text, Parser.parse_text", RunningTextWarning, stacklevel=_outside_clparse())
        return split
    if sentence is None:  # taken as an empty sentence, as it always was
        return []
    if isinstance(sentence, (bytes, bytearray)):
        raise ParameterError("sentence", "give text (str) or a list of tokens, not bytes: decode them first")
    if isinstance(sentence, Mapping) or not isinstance(sentence, (Iterable, SourceSentence)):
        # a number was a TypeError from deep inside, and a {word: tag} dict parsed its words untagged
        raise ParameterError("sentence", f"give text (str), a list of words or a list of (word, tag) pairs, "
                                         f"not {type(sentence).__name__}")
    tokens = list(sentence.tokens if isinstance(sentence, SourceSentence) else sentence)
    words = bool(tokens) and isinstance(tokens[0], str)
    for i, token in enumerate(tokens):
        pair = isinstance(token, (tuple, list)) and len(token) == 2 and all(isinstance(x, str) for x in token)
        if not (isinstance(token, str) if words else pair):
            raise ParameterError("sentence", f"token {i} is {token!r}: give every token as a word (a "
                                             "string), or every one as a (word, tag) pair of strings")
    return tokens if words else [(token[0], token[1]) for token in tokens]


def _many(sentences: Iterable[Sentence]) -> Iterable[Sentence]:
    """``sentences`` as :meth:`Parser.parse_many` takes them: one sentence in their place (a string was
    read one character at a time, a tree per character) is one ParameterError."""
    if isinstance(sentences, (str, bytes, bytearray, SourceSentence)):
        raise ParameterError("sentences", f"give a list of sentences, such as [{sentences!r}], not one "
                                          "sentence (parse() takes one)")
    if isinstance(sentences, Mapping) or not isinstance(sentences, Iterable):
        raise ParameterError("sentences", f"give a list of sentences, not {type(sentences).__name__}")
    return sentences


def _clean_pairs(tagged: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """(word, tag) pairs as PTB text can hold them: checked (non-empty, no white space), ``(`` and ``)``
    spelled -LRB- and -RRB- in words and tags, as the treebank does."""
    return [(escape_brackets(_checked(w, "word")), escape_brackets(_checked(t, "tag"))) for w, t in tagged]


#: ``SearchOptions.tag_alternatives``' default (docs/tagger.md: measured on GUM dev).
TAG_ALTERNATIVES = 3


def _rank(result: ParseResult, aggregator: str) -> tuple[int, tuple[float, ...]]:
    """Orders the parses of one sentence's taggings, smaller first: the search's own key of the best tree
    (max-min: its confidences ascending, negated; sum: the summed loss), any parse before a flat tree."""
    best = result.trees[0]
    if result.fallback is not None or best.score is None:
        return 1, ()
    if aggregator == "maxmin":
        return 0, tuple(-c for c in best.confidences)
    return 0, (-best.score,)


def _stored_chooser(connection: Any, path: Path, model: ParserModel,
                    aggregator: str) -> tuple[TagChooser | None, str | None, str]:
    """The run's latest tag chooser fitted at the model's Θ̂ on parses of ``aggregator`` from the stored
    tagger's taggings, or None and, if choosers were fitted with other settings only, a note saying so; and
    that tagger (:func:`reading.tagger_name`). A stored row that is not a chooser's weights is refused in
    one line."""
    key = theta_key(model.theta, model.label_thetas)
    tagger = reading.tagger_name(connection)
    found = reading.tag_chooser(connection, key, aggregator, tagger)
    if found is not None:
        chooser_id, weights_json = found
        values = chooser_weights(weights_json)
        if values is None:
            raise DatabaseError(f"{path}: tag chooser {chooser_id} is damaged (its weights_json is not the "
                                f"weights of {', '.join(FEATURES)}); fit it again with `clparse "
                                f"calibrate-tags --db {path}`, or parse with --no-tag-chooser")
        return TagChooser(values), None, tagger
    fitted = reading.tag_chooser_fits(connection)
    if not fitted:
        return None, None, tagger
    note = (f"the tag chooser was fitted at Θ̂ {', '.join(fitted)}, not at this Θ̂ ({key}) with this "
            f"aggregator ({aggregator}) and tagger ({tagger}): choosing among taggings by the search's score "
            "instead (run `clparse calibrate-tags` with these settings)")
    return None, note, tagger


def pick_parse(options: Sequence[tuple[ParseResult, float]], chooser: TagChooser | None,
               aggregator: str) -> int:
    """Which of a sentence's tagging parses ``parse`` keeps: the tag chooser's pick (the caller gives the
    one fitted on parses of this aggregator), else, or when the best tagging's parse is a flat tree, the
    search's own rule (:func:`rule_pick`)."""
    picked = chooser.pick(options) if chooser is not None else None
    return picked if picked is not None else rule_pick(options, aggregator)


def rule_pick(options: Sequence[tuple[ParseResult, float]], aggregator: str) -> int:
    """Which of a sentence's tagging parses (:meth:`Parser.tagging_parses`) ``parse`` keeps without a tag
    chooser: the best tagging's, unless another ranks strictly better by the search's own key."""
    chosen = 0
    for index, (result, _) in enumerate(options[1:], 1):
        if _rank(result, aggregator) < _rank(options[chosen][0], aggregator):
            chosen = index
    return chosen


#: ``SearchOptions.aggregator``' default (clparse.cli.options.AGGREGATOR holds the same: tests/test_parse.py).
DEFAULT_AGGREGATOR = search_aggregate.DEFAULT_AGGREGATOR

#: The largest beam, pop cap or k-best list a search takes (far beyond any useful one).
SEARCH_LIMIT = 2**31 - 1


@dataclass
class SearchOptions:
    beam: int = 100  # clparse.cli.options.PARSE_BEAM: beam 1000's F1 on GUM dev, 3x as fast
    max_pops: int = 10_000
    # sum: the summed logistic loss (Eq. 15), +0.9 to +1.2 F1 over max-min on all of GUM dev and level on
    # short sentences (docs/search.md, "Which aggregator")
    aggregator: str = DEFAULT_AGGREGATOR
    # 0: no limit. N: longer sentences get a flat tree. The pop cap's greedy completion keeps a long
    # sentence's search bounded (K = 5 all-length GUM model, max-min: 100 tokens 1 CPU s, 800 tokens 7 s;
    # docs/search.md).
    max_words: int = 0
    kbest: int = 1  # trees per sentence: the K best distinct ones, best first
    # Untagged input: also parse up to this many other taggings (the CRF tagger's second choice at its
    # least sure words) and keep the best-scoring parse; 0 parses the best tagging alone.
    tag_alternatives: int = TAG_ALTERNATIVES
    # Untagged input: choose among the taggings with the run's fitted tag chooser (`clparse calibrate-tags`)
    # when one was fitted at this Θ̂; False: by the search's own score, as without one.
    tag_chooser: bool = True

    def __post_init__(self) -> None:
        from clparse.search.aggregate import AGGREGATORS

        # Checked first: a float or string (the API, a spaCy config) failed deep in the search as a
        # TypeError, and True passed as beam 1 (greedy) without a word.
        for name in ("beam", "max_pops", "kbest", "max_words", "tag_alternatives"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ConfigurationError(f"{name} must be a whole number, got {value!r}")
        if self.beam < 1 or self.max_pops < 1 or self.kbest < 1:
            raise ConfigurationError("beam, max_pops and kbest must be at least 1")
        if self.max_words < 0:
            raise ConfigurationError("max_words must be at least 0 (0: no limit)")
        if max(self.beam, self.max_pops, self.kbest) > SEARCH_LIMIT:  # the search's tables count in int32
            raise ConfigurationError(f"beam, max_pops and kbest must be at most {SEARCH_LIMIT:,}")
        if self.tag_alternatives < 0:
            raise ConfigurationError("tag_alternatives must be at least 0")
        if self.aggregator not in AGGREGATORS:
            raise ConfigurationError(f"unknown aggregator {self.aggregator!r}; choose "
                                     f"{', '.join(AGGREGATORS)}")


class Parser:
    """Parses sentences with a model rebuilt at Θ̂ (:meth:`from_db`). One parser may be shared between
    threads: the stored tagger's calls take turns (:data:`_TAGGING`), and a parse changes nothing a
    later one reads, so results are those of a fresh parser in one thread."""

    def __init__(self, model: ParserModel, preprocess: PreprocessConfig, tagger: PosTagger | None = None,
                 options: SearchOptions | None = None) -> None:
        self.model = model
        self.preprocess = preprocess
        self._tagger = tagger
        # a fresh default each: one shared default instance carried a change to one parser's options (say
        # ``parser.options.kbest = 3``) to every parser made without options, then and later
        self.options = options if options is not None else SearchOptions()
        # the stored tagger, loaded when first needed (a tagger's library is slow to import)
        self._tagger_db: Path | None = None
        self.source: Path | None = None  # the database the parser was rebuilt from, if any
        # how to choose among taggings of untagged input (fitted by `clparse calibrate-tags` for this
        # model); None: the search's own key decides (docs/tagger.md)
        self.chooser: TagChooser | None = None
        # the aggregator the stored chooser was loaded for (None: any, a chooser set by hand); another
        # aggregator set on ``options`` later parses without it
        self.chooser_aggregator: str | None = None
        self.chooser_tagger: str | None = None  # the tagger it was fitted on (reading.tagger_name)
        # why a stored chooser is not used (it was fitted at another Θ̂), for the command line to say
        self.chooser_note: str | None = None

    @property
    def tagger(self) -> PosTagger | None:
        if self._tagger is None and self._tagger_db is not None:
            with _LOADING:  # threads sharing a parser: one loads, the others wait for it
                db = self._tagger_db
                if self._tagger is None and db is not None:  # None: loaded while this thread waited
                    from clparse.tag.stored import load_tagger

                    self._tagger, self._tagger_db = load_tagger(db), None
        return self._tagger

    @tagger.setter
    def tagger(self, tagger: PosTagger | None) -> None:
        self._tagger, self._tagger_db = tagger, None

    @classmethod
    def from_db(cls, db: str | Path, theta: float | str = "best", **options: Any) -> Parser:
        """Rebuild the parser at Θ̂ = ``theta`` (a number, or "best": the calibrated best Θ̂); ``options``
        are :class:`SearchOptions`' fields."""
        unknown = sorted(set(options) - {f.name for f in fields(SearchOptions)})
        if unknown:  # a TypeError from SearchOptions' constructor before
            raise ParameterError(unknown[0], "no such search option; choose from "
                                 + ", ".join(f.name for f in fields(SearchOptions)))
        if theta != "best" and (isinstance(theta, bool) or not isinstance(theta, (numbers.Real, str))):
            raise ParameterError("theta", f"{theta!r}: give a number or 'best'")
        if isinstance(theta, str) and theta != "best":
            try:
                theta = float(theta)  # "3.0" was taken, and still is
            except ValueError:
                raise ParameterError("theta", f"{theta!r}: give a number or 'best'") from None
        with Database(db, readonly=True) as database:
            search = SearchOptions(**options)
            # "best" may be a Θ̂ per label; the calibration made with this aggregator if there is one
            value = best_theta(database, search.aggregator) if theta == "best" else float(theta)
            parser = cls.from_model(database, load_model(database, value), search)
            parser.load_chooser(database)
        # absolute: the tagger loads at the first untagged sentence, and --jobs workers and explain open the
        # database, maybe after os.chdir, where a relative path named another run's database or none
        parser._tagger_db = parser.source = Path(os.path.abspath(db))
        return parser

    @classmethod
    def from_model(cls, db: Database | str | Path, model: ParserModel,
                   options: SearchOptions | None = None) -> Parser:
        """A parser over an already rebuilt model, with the run's preprocessing (no tagger loaded)."""
        database = Database.of(db, readonly=True)
        with database.raw() as connection:
            _, config = reading.run(connection, database.path)
        preprocess = PreprocessConfig.from_dict({**config["preprocess"], "max_words": None})
        return cls(model, preprocess, None, options)

    def load_chooser(self, database: Database) -> None:
        """Use the run's tag chooser fitted at this model's Θ̂ with this aggregator, if any (:attr:`chooser`;
        else :attr:`chooser_note` says if one was fitted with other settings). :meth:`from_db` calls it."""
        if not self.options.tag_chooser:  # not read at all: a damaged row cannot stop a parse without it
            self.chooser, self.chooser_note = None, None
            self.chooser_aggregator, self.chooser_tagger = None, None
            return
        with database.raw() as connection:
            self.chooser, self.chooser_note, self.chooser_tagger = _stored_chooser(
                connection, database.path, self.model, self.options.aggregator)
        self.chooser_aggregator = self.options.aggregator

    def taggings(self, sentence: Sentence) -> list[list[tuple[str, str]]]:
        """The (word, tag) pairs to parse: the given tags, or the stored tagger's best tagging and, with
        ``tag_alternatives`` N > 0 and a CRF tagger, up to N more (:meth:`CrfTagger.alternatives`)."""
        return [tagged for tagged, _ in self.scored_taggings(sentence)]

    def scored_taggings(self, sentence: Sentence) -> list[tuple[list[tuple[str, str]], float]]:
        """:meth:`taggings`, each with the tagger's certainty against it: log(p_best / p_other) at its
        swapped word (:meth:`CrfTagger.scored_alternatives`), 0 for the best or the given tagging."""
        count = self.options.tag_alternatives
        tokens = _tokens(sentence)
        if not count or not tokens or isinstance(tokens[0], tuple):  # tagged input never loads the tagger
            return [(self.tag(tokens), 0.0)]
        alternatives = getattr(self.tagger, "scored_alternatives", None)
        if alternatives is None:
            return [(self.tag(tokens), 0.0)]
        words = [escape_brackets(_checked(w, "word")) for w in tokens]
        with _TAGGING:
            found = alternatives(words, count)
        return [(list(zip(words, tags)), certainty) for tags, certainty in found]

    def tag(self, sentence: Sentence) -> list[tuple[str, str]]:
        """(word, tag) pairs: words split on whitespace if a string; tagged by the stored tagger if
        untagged."""
        tokens = _tokens(sentence)
        if not tokens:
            return []
        if isinstance(tokens[0], tuple):
            # a tag "(" (PTB .pos files) is spelled -LRB- as the treebank does: bare, it breaks the tree
            return _clean_pairs(tokens)
        words = [escape_brackets(_checked(w, "word")) for w in tokens]
        if self.tagger is None:
            raise ConfigurationError("this database has no tagger (prepare it again with this clparse "
                                     "version); give tagged input (word/TAG) instead")
        with _TAGGING:
            tags = self.tagger.tag(words)
        return list(zip(words, tags))

    def parse(self, sentence: Sentence, brackets: Brackets | None = None) -> ParseResult:
        """Parse one sentence; ``brackets``: known brackets the parse must keep, over its tokens
        (:mod:`clparse.search.brackets`)."""
        options = self.tagging_parses(sentence, brackets)
        if len(options) == 1:
            return options[0][0]
        return options[pick_parse(options, self.active_chooser, self.options.aggregator)][0]

    @property
    def active_chooser(self) -> TagChooser | None:
        """The tag chooser untagged input is parsed with: the stored one (fitted with this aggregator),
        unless the options turn it off (``tag_chooser`` False, no tag alternatives)."""
        options = self.options
        if not options.tag_chooser or not options.tag_alternatives:
            return None
        if self.chooser_aggregator is not None and self.chooser_aggregator != options.aggregator:
            return None  # fitted on parses scored another way
        if self.chooser is not None and self.chooser_tagger is not None:
            # fitted on this tagger's taggings: the tagger loads at the first untagged sentence, and a net
            # trained since the chooser was read makes it another tagger
            if getattr(self.tagger, "name", None) != self.chooser_tagger:
                return None
        return self.chooser

    def tagging_parses(self, sentence: Sentence,
                       brackets: Brackets | None = None) -> list[tuple[ParseResult, float]]:
        """The parse of each tagging :meth:`parse` tries (:meth:`scored_taggings`), the best tagging's
        first, each with the tagger's certainty against its tagging. A tagging that makes a token of
        ``brackets`` punctuation is left out (the brackets cannot be kept over it)."""
        return [(result, certainty) for _, result, certainty in self.tagged_parses(sentence, brackets)]

    def tagged_parses(self, sentence: Sentence, brackets: Brackets | None = None
                      ) -> list[tuple[list[tuple[str, str]], ParseResult, float]]:
        """:meth:`tagging_parses`, each with the tagging it parsed (as given, empty elements kept): what
        a combination's other members then parse (:mod:`clparse.combine.run`)."""
        source = sentence if isinstance(sentence, SourceSentence) else None
        (first, _), *others = self.scored_taggings(sentence)
        options = [(first, self._parse_clean(first, source, brackets), 0.0)]
        for tagged, certainty in others:
            try:
                options.append((tagged, self._parse_clean(tagged, source, brackets), certainty))
            except BracketError:  # brackets only over tokens this tagging makes punctuation
                continue
        return options

    def parse_text(self, text: str) -> list[ParseResult]:
        """Parse running text: split into sentences and treebank tokens (:mod:`clparse.read.text`, the
        ``clparse[text]`` extra, as ``parse --input-format text`` does), tagged by the stored tagger; each
        result has its tokens' ``offsets`` into ``text`` and their characters (``text``)."""
        if not isinstance(text, str):  # bytes failed with an AttributeError from deep inside
            raise ParameterError("text", f"give a str, not {type(text).__name__} (decode bytes first)")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # spaCy's tokenizer would fail on it with a traceback
            raise ParameterError("text", f"character {exc.start} ({text[exc.start]!r}) is a lone surrogate, "
                                 "not text (bytes decoded with errors='surrogateescape'?)") from None
        if "\x00" in text:  # as parse --input-format text refuses it: no tree could be read back holding it
            at = text.index("\x00")
            raise ParameterError("text", f"character {at} is a NUL byte: binary data, not text")
        # A byte-order mark (first: a file read as "utf-8", not "utf-8-sig"; further on: files joined with
        # `cat`) is not text, as in every file clparse reads. Read as a space, as parse --input-format text
        # reads it: one character for one, so the offsets still point into ``text``.
        text = text.replace("\ufeff", " ")
        return [self.parse(sentence) for sentence in text_sentences(io.StringIO(text, newline=""))]

    def parse_many(self, sentences: Iterable[Sentence]) -> Iterator[ParseResult]:
        """Parse each sentence of ``sentences`` (any iterable of what :meth:`parse` takes), in order."""
        for sentence in _many(sentences):
            yield self.parse(sentence)

    def parse_document(self, sentences: Iterable[Sentence], progress: bool = True) -> list[ParseResult]:
        """Parse a document (a list, or any iterable, of sentences) in order, with a progress line (count,
        rate, and an ETA when the count is known) on stderr when it is a terminal."""
        from clparse.progress import Progress

        results: list[ParseResult] = []
        sentences = _many(sentences)
        total = len(sentences) if isinstance(sentences, Sized) else None  # a generator: no ETA
        with Progress("parsing", total, "sentences", enabled=None if progress else False) as bar:
            for sentence in sentences:
                results.append(self.parse(sentence))
                bar.update()
        return results

    def parse_tagged(self, tagged: Sequence[tuple[str, str]], source: SourceSentence | None = None,
                     brackets: Brackets | None = None) -> ParseResult:
        """Parse a sentence whose tags are given (empty elements, tagged -NONE-, are dropped); ``source``:
        where its tokens are in the input text (kept in the result); ``brackets``: spans over the tokens
        (empty elements not counted) that must or must not be constituents. Brackets that cannot hold
        (crossing, off the sentence, only over tokens the parser sets aside) raise
        :class:`~clparse.search.brackets.BracketError`; if the model can build no tree that keeps them,
        the sentence gets a flat tree (``fallback`` says why). Words and tags are spelled and checked as
        :meth:`parse` does (``(`` is -LRB-; an empty one, or one with white space, is a ParameterError)."""
        pairs = _tokens(list(tagged))
        if pairs and not isinstance(pairs[0], tuple):
            raise ParameterError("sentence", "parse_tagged takes (word, tag) pairs; parse() takes words")
        if source is not None and len(source.offsets) != len(pairs):
            # offsets are taken by position: fewer were an IndexError, more gave other tokens' in silence
            raise ParameterError("source", f"{len(source.offsets)} token offsets for {len(pairs)} (word, "
                                           "tag) pairs: give this sentence's source, one offset per pair")
        # Spelled here too: a bare "(" word gave the unreadable tree "(-LRB- ()", and another parse
        # than parse() of the same pairs.
        return self._parse_clean(_clean_pairs(pairs), source, brackets)

    def _parse_clean(self, tagged: Sequence[tuple[str, str]], source: SourceSentence | None = None,
                     brackets: Brackets | None = None) -> ParseResult:
        """:meth:`parse_tagged` of pairs already checked and spelled (:func:`_clean_pairs`)."""
        words = [i for i, (_, t) in enumerate(tagged) if t != EMPTY_ELEMENT_TAG]
        result = self._parse([(tagged[i][0], tagged[i][1]) for i in words], brackets)
        result.aggregator = self.options.aggregator  # what its scores mean
        if source is not None:
            result.offsets = [source.offsets[i] for i in words]
            result.text = [source.chars[i] for i in words]
        return result

    def _parse(self, tagged: list[tuple[str, str]], brackets: Brackets | None = None) -> ParseResult:
        kbest = self.options.kbest
        if brackets is not None and not isinstance(brackets, Brackets):  # a dict or list: AttributeError
            raise ParameterError("brackets", "give a clparse.search.brackets.Brackets (as "
                                             "constraints_file.parse_line makes one), not "
                                             f"{type(brackets).__name__}")
        if brackets:
            brackets.check(len(tagged), self.model.labels)
        if not tagged:
            return ParseResult(Tree("ROOT", []), [], "empty sentence", kbest=kbest)
        if self.options.max_words and len(tagged) > self.options.max_words:
            return ParseResult(flat_tree(tagged), tagged, f"longer than {self.options.max_words} tokens",
                               kbest=kbest)
        prepared = preprocess_tagged(tagged, self.preprocess)
        if prepared is None:
            return ParseResult(flat_tree(tagged), tagged, "nothing left after preprocessing", kbest=kbest)
        removed = {token.index for token in prepared.removed}
        kept = [i for i in range(len(tagged)) if i not in removed]
        kept_tagged = [tagged[i] for i in kept]
        leaves = leaf_items(kept_tagged, self.model.vocabulary.normalize)
        scorer: Scorer = CandidateScorer(self.model.for_scoring())
        if brackets:
            scorer = BracketedScorer(scorer, brackets.through(kept))
        found = search_kbest(leaves, scorer, kbest, beam=self.options.beam, max_pops=self.options.max_pops,
                             aggregator=self.options.aggregator)
        best = found[0]  # search()'s parse: k = 1 is the plain parse
        if best.item is None:
            reason = f"no parse keeps the brackets given ({best.reason})" if brackets else best.reason
            return ParseResult(flat_tree(tagged), tagged, reason, best.pops, kbest=kbest)
        words = [w for w, _ in kept_tagged]
        trees = [ParsedTree(restore_tokens(item_tree(r.item, words), kept, prepared.removed),
                            score_value(r.score), tuple(float(c) for c in r.score.confidences),
                            (leaves, r.path, r.item))
                 for r in found if r.item is not None and r.score is not None]
        return ParseResult(trees[0].tree, tagged, None, best.pops, best.reason if best.completed else None,
                           trees=trees, kbest=kbest)
