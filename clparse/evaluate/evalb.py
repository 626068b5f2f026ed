"""PARSEVAL exactly as EVALB (Sekine & Collins 1997) computes it.

What EVALB does, and so what this module does, sentence by sentence:

1. Terminals whose POS label is a *delete label* (COLLINS.prm: ``TOP -NONE- , :
   `` '' .``; exact string match) are removed from the word positions.
2. Every phrase is a bracket ``(start, end, label)`` over the remaining
   positions. A bracket that covers no remaining word is dropped. Its label is
   cut at the first ``-`` or ``=`` (function tags), and it is dropped if that
   label equals (or is *equivalent* to) a delete label. Preterminals are not
   brackets. A ``( (S ...))`` wrapper is a bracket labeled ``""`` (counted by
   COLLINS.prm, not by clparse's default).
3. A test sentence with no remaining words is *skipped*; one whose word count
   or words differ from the gold is an *error*. Neither counts in the totals.
4. Brackets match as multisets: each gold bracket takes the first unmatched
   test bracket with the same span and an equal or equivalent label
   (COLLINS.prm: ``ADVP`` = ``PRT``).
5. Crossing: test brackets that cross some gold bracket. Tagging accuracy over
   the remaining words. Sentence length (for the cut-off table) counts every
   gold terminal except ``DELETE_LABEL_FOR_LENGTH`` ones (``-NONE-``).

clparse's default parameters are COLLINS.prm plus ``DELETE_LABEL ROOT`` and a
``DELETE_LABEL`` of the empty label, so neither a ``(ROOT ...)`` wrapper (GUM's, and
clparse's output) nor the Penn Treebank's bare ``( (S ...))`` one is counted, as a
``TOP`` wrapper is not; :meth:`EvalbParams.collins` is COLLINS.prm unchanged, and
:meth:`EvalbParams.from_prm_file` reads any EVALB parameter file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from clparse.errors import ConfigurationError, TokenMismatchError
from clparse.read.tree import Tree

COLLINS_DELETE_LABELS = ("TOP", "-NONE-", ",", ":", "``", "''", ".")


@dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter file."""

    # ROOT and "" (the bare "( (S ...))" wrapper) as TOP: a gold file in PTB layout against clparse's ROOT
    # output lost one unmatchable gold bracket per sentence (recall, and calibration's F1, too low)
    delete_labels: tuple[str, ...] = COLLINS_DELETE_LABELS + ("ROOT", "")
    delete_labels_for_length: tuple[str, ...] = ("-NONE-",)
    equivalent_labels: tuple[tuple[str, str], ...] = (("ADVP", "PRT"),)
    equivalent_words: tuple[tuple[str, str], ...] = ()
    labeled: bool = True
    cutoff_length: int = 40
    max_errors: int = 10

    @classmethod
    def collins(cls) -> EvalbParams:
        """EVALB's COLLINS.prm exactly (a ``ROOT`` wrapper then counts as a bracket)."""
        return cls(delete_labels=COLLINS_DELETE_LABELS)

    @classmethod
    def from_prm_file(cls, path: str | Path) -> EvalbParams:
        """Read an EVALB ``.prm`` file (keywords as EVALB knows them; DEBUG is ignored)."""
        delete: list[str] = []
        for_length: list[str] = []
        eq_labels: list[tuple[str, str]] = []
        eq_words: list[tuple[str, str]] = []
        labeled, cutoff, max_errors = True, 40, 10
        with open(path, "rb") as handle:
            for lineno, data in enumerate(handle, 1):
                try:  # line by line, so that a byte that is not UTF-8 is named by its line
                    raw = data.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise ConfigurationError(f"{path}:{lineno}: byte {exc.start + 1} is not UTF-8 text"
                                             ) from None
                text = raw.rstrip()
                if text.startswith("#") or len(text) < 3:
                    continue
                key, value = (text.split(None, 1) + [""])[:2]  # any white space, as EVALB's isspace()
                value = value.strip()
                values = value.split()
                try:
                    if key == "DEBUG":
                        continue
                    elif key == "MAX_ERROR":
                        max_errors = int(value)
                    elif key == "CUTOFF_LEN":
                        cutoff = int(value)
                    elif key == "LABELED":
                        labeled = int(value) != 0
                    elif key == "DELETE_LABEL":
                        delete.append(value)
                    elif key == "DELETE_LABEL_FOR_LENGTH":
                        for_length.append(value)
                    elif key in ("EQ_LABEL", "EQ_WORD") and len(values) == 2:
                        (eq_labels if key == "EQ_LABEL" else eq_words).append((values[0], values[1]))
                    elif key == "QUOTE_LABEL":  # a real keyword (EVALB of 2006 on, nk.prm): not "unknown"
                        raise ValueError("QUOTE_LABEL (later EVALB versions' re-insertion of quote and "
                                         "possessive tokens tagged apart) is not supported; remove its lines "
                                         "to score without it")
                    else:
                        raise ValueError(f"unknown keyword or wrong number of values: {text!r}")
                except ValueError as exc:
                    raise ConfigurationError(f"{path}:{lineno}: {exc}") from None
        return cls(tuple(delete), tuple(for_length), tuple(eq_labels), tuple(eq_words), labeled, cutoff,
                   max_errors)

    def labels_equal(self, a: str, b: str) -> bool:
        return a == b or any((a, b) in ((x, y), (y, x)) for x, y in self.equivalent_labels)

    def words_equal(self, a: str, b: str) -> bool:
        return a == b or any((a, b) in ((x, y), (y, x)) for x, y in self.equivalent_words)


@dataclass(frozen=True)
class Bracket:
    start: int
    end: int
    label: str


@dataclass
class ScoredTree:
    """A tree as EVALB sees it: kept terminals, scored brackets, length for the cut-off."""

    words: list[str]
    tags: list[str]
    brackets: list[Bracket]
    length: int


class TreeSequence(Tree):
    """Several trees read as one sentence, as EVALB reads a test line holding more than one: their words in
    order and each tree's brackets, with no bracket over them all (the root here is not a phrase)."""

    def __init__(self, trees: list[Tree]) -> None:
        super().__init__("", list(trees))


def cut_label(label: str) -> str:
    """EVALB's label trimming: everything from the first ``-`` or ``=`` goes (so ``-NONE-`` -> ``""``)."""
    for i, char in enumerate(label):
        if char in "-=":
            return label[:i]
    return label


def score_view(tree: Tree, params: EvalbParams) -> ScoredTree:
    """Terminals, brackets and length of one tree, after EVALB's deletions."""
    words: list[str] = []
    tags: list[str] = []
    length = 0
    for leaf in tree.preterminals():
        if leaf.label not in params.delete_labels_for_length:
            length += 1
        if leaf.label not in params.delete_labels:
            words.append(leaf.word or "")
            tags.append(leaf.label)
    return ScoredTree(words, tags, _brackets(tree, params), length)


def _brackets(tree: Tree, params: EvalbParams) -> list[Bracket]:
    """Scored brackets in EVALB's order (preorder of opening brackets)."""
    delete = set(params.delete_labels)
    opened: list[list] = []  # [start, end, label] in preorder
    position = 0
    stack: list[tuple[Tree, int | None]] = [(tree, None)]
    while stack:
        node, index = stack.pop()
        if index is not None:  # closing the bracket opened at ``index``
            opened[index][1] = position
            continue
        if node.is_preterminal:
            position += node.label not in delete
            continue
        if not node.children:
            continue
        if not isinstance(node, TreeSequence):
            opened.append([position, -1, node.label])
            stack.append((node, len(opened) - 1))
        stack.extend((child, None) for child in reversed(node.children))
    kept: list[Bracket] = []
    for start, end, label in opened:
        if start == end:
            continue
        label = cut_label(label)
        if any(params.labels_equal(label, d) for d in params.delete_labels):
            continue
        kept.append(Bracket(start, end, label))
    return kept


def percent(part: int, whole: int) -> float:
    """``100 * part / whole``, and 0 for an empty whole (as EVALB prints it)."""
    return 100.0 * part / whole if whole else 0.0


class _BracketScores:
    """Recall and precision from the ``matched``/``gold_brackets``/``test_brackets`` counts."""

    matched: int
    gold_brackets: int
    test_brackets: int

    @property
    def recall(self) -> float:
        return percent(self.matched, self.gold_brackets)

    @property
    def precision(self) -> float:
        return percent(self.matched, self.test_brackets)


@dataclass
class SentenceResult(_BracketScores):
    """One sentence's outcome. ``status``: ``ok``, ``skip`` (empty test) or ``error`` (mismatch)."""

    index: int
    length: int
    status: str
    gold_brackets: int = 0
    test_brackets: int = 0
    matched: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    message: str = ""


    @property
    def complete_match(self) -> bool:
        return self.status == "ok" and self.gold_brackets == self.test_brackets == self.matched


#: The message of a skipped sentence whose parse is empty (``()``, ``(ROOT)``, a blank line).
EMPTY_PARSE = "empty parse"


def evaluate_sentence(index: int, gold: Tree, test: Tree, params: EvalbParams) -> SentenceResult:
    """Compare one gold and one test tree exactly as EVALB does."""
    g, t = score_view(gold, params), score_view(test, params)
    if not t.words:
        # a parse of punctuation alone ("(ROOT (. .))") is skipped too, but is not an empty parse
        deleted = next(test.preterminals(), None) is not None
        return SentenceResult(index, g.length, "skip",
                              message=EMPTY_PARSE if not deleted else "no word left to score (the parse's "
                                                                      "tokens are all delete labels, such "
                                                                      "as punctuation)")
    if len(g.words) != len(t.words):
        return SentenceResult(index, g.length, "error",
                              message=f"length mismatch: gold has {len(g.words)} words, test {len(t.words)} "
                                      f"(gold: {' '.join(g.words)} | test: {' '.join(t.words)})")
    for position, (gw, tw) in enumerate(zip(g.words, t.words)):
        if not params.words_equal(gw, tw):
            # Words that look alike on screen (composed against decomposed accents, a no-break space) are
            # shown with their code points.
            alike = unicodedata.normalize("NFKC", gw) == unicodedata.normalize("NFKC", tw)
            shown = (ascii(gw), ascii(tw)) if alike else (repr(gw), repr(tw))
            return SentenceResult(index, g.length, "error",
                                  message=f"word mismatch at position {position + 1}: gold {shown[0]}, test "
                                          f"{shown[1]}" + (" (the same letters, encoded differently)" if alike
                                                           else ""))
    used = [False] * len(t.brackets)
    matched = 0
    for gb in g.brackets:
        for j, tb in enumerate(t.brackets):
            if used[j] or gb.start != tb.start or gb.end != tb.end:
                continue
            if not params.labeled or params.labels_equal(gb.label, tb.label):
                used[j] = True
                matched += 1
                break
    crossing = sum(
        1 for tb in t.brackets
        if any((gb.start < tb.start < gb.end < tb.end) or (tb.start < gb.start < tb.end < gb.end)
               for gb in g.brackets)
    )
    correct_tags = sum(params.labels_equal(a, b) for a, b in zip(g.tags, t.tags))
    return SentenceResult(index, g.length, "ok", len(g.brackets), len(t.brackets), matched, crossing,
                          len(g.words), correct_tags)


@dataclass
class Totals(_BracketScores):
    """Summed counts over sentences, and the figures EVALB prints from them."""

    sentences: int = 0
    errors: int = 0
    skipped: int = 0
    gold_brackets: int = 0
    test_brackets: int = 0
    matched: int = 0
    complete: int = 0
    crossing: int = 0
    no_crossing: int = 0
    two_or_less_crossing: int = 0
    words: int = 0
    correct_tags: int = 0

    def add(self, result: SentenceResult) -> None:
        self.sentences += 1
        if result.status == "error":
            self.errors += 1
            return
        if result.status == "skip":
            self.skipped += 1
            return
        self.gold_brackets += result.gold_brackets
        self.test_brackets += result.test_brackets
        self.matched += result.matched
        self.complete += result.complete_match
        self.crossing += result.crossing
        self.no_crossing += result.crossing == 0
        self.two_or_less_crossing += result.crossing <= 2
        self.words += result.words
        self.correct_tags += result.correct_tags

    @property
    def valid(self) -> int:
        return self.sentences - self.errors - self.skipped


    @property
    def f1(self) -> float:
        """EVALB's F from the two percentages (0 where EVALB would print ``nan``)."""
        r, p = self.recall, self.precision
        return 2 * p * r / (p + r) if p + r else 0.0

    def _per_valid(self, count: int, scale: float = 100.0) -> float:
        return scale * count / self.valid if self.valid else 0.0

    @property
    def exact_match(self) -> float:
        return self._per_valid(self.complete)

    @property
    def average_crossing(self) -> float:
        return self._per_valid(self.crossing, 1.0)

    @property
    def tagging_accuracy(self) -> float:
        return percent(self.correct_tags, self.words)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "sentences": self.sentences, "error_sentences": self.errors, "skipped_sentences": self.skipped,
            "valid_sentences": self.valid, "recall": self.recall, "precision": self.precision, "f1": self.f1,
            "exact_match": self.exact_match, "average_crossing": self.average_crossing,
            "no_crossing": self._per_valid(self.no_crossing),
            "two_or_less_crossing": self._per_valid(self.two_or_less_crossing),
            "tagging_accuracy": self.tagging_accuracy, "matched_brackets": self.matched,
            "gold_brackets": self.gold_brackets, "test_brackets": self.test_brackets, "words": self.words,
            "correct_tags": self.correct_tags, "crossing": self.crossing,
        }


@dataclass
class Evaluation:
    """Everything ``clparse eval`` reports."""

    params: EvalbParams
    sentences: list[SentenceResult] = field(default_factory=list)
    all: Totals = field(default_factory=Totals)
    short: Totals = field(default_factory=Totals)

    def add(self, result: SentenceResult) -> None:
        self.sentences.append(result)
        self.all.add(result)
        if result.length <= self.params.cutoff_length:
            self.short.add(result)

    def by_length(self, bucket: int = 5) -> list[tuple[str, Totals]]:
        """Totals per sentence-length bucket (``1-5``, ``6-10``, ...)."""
        groups: dict[int, Totals] = {}
        for result in self.sentences:
            key = (max(result.length, 1) - 1) // bucket
            groups.setdefault(key, Totals()).add(result)
        return [(f"{k * bucket + 1}-{(k + 1) * bucket}", groups[k]) for k in sorted(groups)]


class TooManyErrors(TokenMismatchError):
    """More mismatched sentences than the parameters allow (EVALB stops too)."""


def evaluate(gold: Iterable[Tree], test: Iterable[Tree], params: EvalbParams = EvalbParams()) -> Evaluation:
    """Score test trees against gold trees, pairing them in order.

    Raises :class:`clparse.errors.TokenMismatchError` if one side has more
    trees, and :class:`TooManyErrors` when mismatched sentences exceed
    ``params.max_errors`` (as EVALB does, which exits at that point).
    """
    result = Evaluation(params)
    gold_iter, test_iter = iter(gold), iter(test)
    index = 0
    while True:
        g = next(gold_iter, None)
        t = next(test_iter, None)
        if g is None and t is None:
            break
        index += 1
        if g is None or t is None:
            side = "gold" if t is None else "test"
            raise TokenMismatchError(f"{side} file has more trees: the other ends before sentence {index}")
        sentence = evaluate_sentence(index, g, t, params)
        result.add(sentence)
        # EVALB exits when its error counter, checked before incrementing, exceeds MAX_ERROR.
        if result.all.errors > params.max_errors + 1:
            raise TooManyErrors(f"more than {params.max_errors} sentences with mismatched words; "
                                f"last: sentence {index}: {sentence.message}")
    return result
