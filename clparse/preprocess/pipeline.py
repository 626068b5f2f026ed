"""Run the Table 3 steps over a treebank, recording what each step did.

Output trees always have a single ``ROOT`` on top (the wrapper of the input,
whatever it was, is replaced): completing a parse means building ``ROOT``.
Tokens a step removes are recorded as :class:`RemovedToken` with their
position in the original sentence (``-NONE-`` elements are not tokens), so
that a parser can put them back into its output for scoring.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from clparse.errors import ConfigurationError
from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG, QUOTE_TAGS, STEPS, is_punctuation
from clparse.read.ptb import WRAPPER_LABELS, unwrap
from clparse.read.tree import Tree

ROOT_LABEL = "ROOT"


@dataclass(frozen=True)
class PreprocessConfig:
    """Which steps run, and the sentence filter. Stored with every training run.

    >>> PreprocessConfig.from_dict({"max_words": 15}).max_words
    15
    >>> PreprocessConfig.from_dict({"raise_punctuatio": False})
    Traceback (most recent call last):
    ...
    clparse.errors.ConfigurationError: unknown preprocessing setting 'raise_punctuatio'; known:
    strip_function_tags, delete_empty_elements, prt_to_advp, remove_quotation_marks, raise_punctuation,
    remove_outermost_punctuation, remove_unary_self_projections, max_words
    """

    strip_function_tags: bool = True
    delete_empty_elements: bool = True
    prt_to_advp: bool = True
    remove_quotation_marks: bool = True
    raise_punctuation: bool = True
    remove_outermost_punctuation: bool = True
    remove_unary_self_projections: bool = True
    #: Keep sentences of at most this many words, punctuation not counted (None: all).
    max_words: int | None = None

    def __post_init__(self) -> None:
        if self.max_words is not None and self.max_words < 1:
            raise ConfigurationError(f"max_words must be at least 1, got {self.max_words}")

    def enabled_steps(self) -> list[str]:
        return [name for name, _ in STEPS if getattr(self, name)]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> PreprocessConfig:
        known = [f.name for f in fields(cls)]
        for key in values:
            if key not in known:
                raise ConfigurationError(f"unknown preprocessing setting {key!r}; known: {', '.join(known)}")
        return cls(**values)

    @classmethod
    def without(cls, steps: Iterable[str], **overrides: Any) -> PreprocessConfig:
        """All steps on except ``steps`` (names as in :data:`STEPS`)."""
        values: dict[str, Any] = dict(overrides)
        for name in steps:
            values[name] = False
        return cls.from_dict(values)


@dataclass(frozen=True)
class RemovedToken:
    """A token preprocessing dropped: where it was, what it was, which step took it."""

    index: int
    word: str
    tag: str
    step: str


@dataclass
class Preprocessed:
    """One sentence after preprocessing."""

    tree: Tree
    removed: list[RemovedToken]
    original_words: list[str]
    original: Tree | None = None  # the tree as read


@dataclass
class PreprocessReport:
    """Counts over a treebank: sentences in and out, and what each step changed."""

    sentences: int = 0
    kept: int = 0
    too_long: int = 0
    emptied: int = 0
    changes: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {"sentences": self.sentences, "kept": self.kept, "too_long": self.too_long,
                "emptied": self.emptied, "changes": dict(self.changes)}

    def format(self) -> str:
        lines = [f"sentences read        {self.sentences:>8}",
                 f"kept                  {self.kept:>8}",
                 f"dropped: too long     {self.too_long:>8}",
                 f"dropped: nothing left {self.emptied:>8}",
                 "changes per step:"]
        lines += [f"  {name:<30}{self.changes.get(name, 0):>8}" for name, _ in STEPS]
        return "\n".join(lines)


def sentence_length(tree: Tree) -> int:
    """Words counted by the length filter: neither punctuation nor ``-NONE-``."""
    return sum(1 for leaf in tree.preterminals() if not is_punctuation(leaf)
               and leaf.label != EMPTY_ELEMENT_TAG)


def preprocess_tree(tree: Tree, config: PreprocessConfig = PreprocessConfig(),
                    changes: Counter[str] | None = None) -> Preprocessed | None:
    """Apply the enabled steps to one tree; ``None`` if no words are left."""
    body = unwrap(tree)
    tokens = [leaf for leaf in body.preterminals() if leaf.label != EMPTY_ELEMENT_TAG]
    position = {id(leaf): i for i, leaf in enumerate(tokens)}
    removed: list[RemovedToken] = []
    current: Tree | None = body
    for name, transform in STEPS:
        if not getattr(config, name) or current is None:
            continue
        before = list(current.preterminals())
        current, count = transform(current)
        if changes is not None and count:
            changes[name] += count
        kept = {id(leaf) for leaf in current.preterminals()} if current is not None else set()
        removed += [RemovedToken(position[id(leaf)], leaf.word or "", leaf.label, name)
                    for leaf in before if id(leaf) not in kept and id(leaf) in position]
    if current is None:
        return None
    removed.sort(key=lambda token: token.index)
    return Preprocessed(_rooted(current), removed, [leaf.word or "" for leaf in tokens], tree)


def _rooted(body: Tree) -> Tree:
    """``body`` under one ``ROOT``. A wrapper that had several children when read (``( (S ...) (. .))``,
    ``(TOP (S ...) (. .))``) is still on top after the steps: it is the root, not a phrase, so it is
    dropped if the steps left it one child and renamed ``ROOT`` otherwise; else a label ``""`` (written
    ``(ROOT ( (S ...)))``, which no reader takes back) or a ``ROOT`` inside ``ROOT`` was trained."""
    body = unwrap(body)
    if body.label in WRAPPER_LABELS and not body.is_preterminal:
        return Tree(ROOT_LABEL, body.children)
    return Tree(ROOT_LABEL, [body])


def preprocess_tagged(tagged: Sequence[tuple[str, str]],
                      config: PreprocessConfig = PreprocessConfig()) -> Preprocessed | None:
    """:func:`preprocess_tree` of the flat tree ``(S (tag word) ...)`` over ``tagged`` (word, tag) pairs, what
    the parser preprocesses for every sentence, without walking the tree once per step: on a flat tree
    only the deletions act (the relabelling steps see ``S``; nothing can be raised or collapsed), so it
    is the same result, token for token (``tests/test_preprocess.py`` holds the two together)."""
    leaves = [Tree.preterminal(tag, word) for word, tag in tagged]
    tokens = [leaf for leaf in leaves if leaf.label != EMPTY_ELEMENT_TAG]
    position = {id(leaf): i for i, leaf in enumerate(tokens)}
    removed: list[RemovedToken] = []

    def drop(current: list[Tree], step: str, doomed: Callable[[int, Tree], bool]) -> list[Tree] | None:
        """``current`` without the doomed leaves; None if none is left (the phrase goes too)."""
        kept = []
        for i, leaf in enumerate(current):
            if not doomed(i, leaf):
                kept.append(leaf)
            elif id(leaf) in position:
                removed.append(RemovedToken(position[id(leaf)], leaf.word or "", leaf.label, step))
        return kept or None

    current: list[Tree] | None = leaves
    if config.delete_empty_elements:
        current = drop(leaves, "delete_empty_elements", lambda _, leaf: leaf.label == EMPTY_ELEMENT_TAG)
    if current is not None and config.remove_quotation_marks:
        current = drop(current, "remove_quotation_marks", lambda _, leaf: leaf.label in QUOTE_TAGS)
    if current is not None and config.remove_outermost_punctuation:
        words = [i for i, leaf in enumerate(current) if not is_punctuation(leaf)]
        if words:  # a sentence of punctuation alone stays as it is
            first, last = words[0], words[-1]
            current = drop(current, "remove_outermost_punctuation", lambda i, _: i < first or i > last)
    if current is None:
        return None
    removed.sort(key=lambda token: token.index)
    return Preprocessed(Tree(ROOT_LABEL, [Tree("S", list(current))]), removed,
                        [leaf.word or "" for leaf in tokens], Tree("S", leaves))


def preprocess_treebank(trees: Iterable[Tree], config: PreprocessConfig = PreprocessConfig(),
                        report: PreprocessReport | None = None) -> Iterator[Preprocessed]:
    """Preprocess and filter a stream of trees, counting into ``report``."""
    report = report if report is not None else PreprocessReport()
    for tree in trees:
        report.sentences += 1
        if config.max_words is not None and sentence_length(tree) > config.max_words:
            report.too_long += 1
            continue
        result = preprocess_tree(tree, config, report.changes)
        if result is None:
            report.emptied += 1
            continue
        report.kept += 1
        yield result
