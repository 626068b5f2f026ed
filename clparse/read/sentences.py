"""Sentences to parse, from text: one tokenized sentence per line, ``word/TAG`` tokens, or PTB trees."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from clparse.errors import ClparseError
from clparse.read.ptb import read_trees

FORMATS = ("tokens", "tagged", "ptb")
Sentence = list[str] | list[tuple[str, str]]


def read_sentences(names: Iterable[str], fmt: str, warn: Callable[[str], object] = lambda _: None
                   ) -> Iterator[Sentence]:
    """Sentences from files (``-`` is stdin): token lists (``tokens``) or (word, tag) lists.

    Empty lines are skipped with a warning naming file and line; a ``tagged`` token without a
    ``/TAG`` stops with an error naming file, line and token. ``ptb`` yields each tree's tagged words.
    """
    if fmt not in FORMATS:
        raise ClparseError(f"unknown input format {fmt!r}; choose one of {', '.join(FORMATS)}")
    for name in names:
        if fmt == "ptb":
            if name == "-":
                raise ClparseError("--input-format ptb needs file names (it cannot read stdin)")
            for tree in read_trees(name):
                yield list(tree.tagged_words())
            continue
        handle: IO[str] = sys.stdin if name == "-" else open(name, encoding="utf-8")
        with handle:
            for number, line in enumerate(handle, 1):
                tokens = line.split()
                if not tokens:
                    warn(f"{name}:{number}: empty line skipped")
                elif fmt == "tokens":
                    yield tokens
                else:
                    yield [_tagged(token, name, number, column) for column, token in enumerate(tokens, 1)]


def _tagged(token: str, name: str, line: int, column: int) -> tuple[str, str]:
    word, slash, tag = token.rpartition("/")  # the last slash: words may contain slashes ("1/2/CD")
    if not slash or not word or not tag:
        raise ClparseError(f"{name}:{line}: token {column} {token!r} is not word/TAG")
    return word, tag
