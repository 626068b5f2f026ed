"""Evaluate treebank files: the library side of ``clparse eval`` and ``clparse compare``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clparse.evaluate.evalb import EvalbParams, Evaluation, TreeSequence, evaluate
from clparse.errors import TreebankError
from clparse.read.ptb import (
    UNCLOSED,
    empty_parses_unwrapped,
    iter_trees_from_lines,
    read_trees,
    split_lone_cr,
    without_bom,
)
from clparse.read.tree import Tree

#: Why a tree may not close on its line: a file of trees laid out over several lines.
ONE_PER_LINE_HINT = ("--one-per-line reads one parse per line, and an indented file (as parse --format "
                     "pretty writes) is read without it")


def read_parses(path: str | Path, *, one_per_line: bool = False) -> Iterator[Tree]:
    """Trees of a parser's output file.

    By default trees are read like any treebank (blank lines separate nothing)
    and ``()`` marks a sentence the parser could not parse. With
    ``one_per_line`` every line is one parse and a blank line is a failed
    parse, as EVALB reads its test file; a line holding several trees is one
    parse too, as EVALB scores it: their words in order and each tree's
    brackets, with none over them all (a :class:`TreeSequence`). Either way
    ``(())`` is a failed parse too, as the Berkeley parser writes one.
    """
    if not one_per_line:
        yield from read_trees(path, allow_empty=True, wrapped_empty=True)
        return
    # Bytes, decoded line by line, so that text that is not UTF-8 is named by line and column as any
    # treebank's is; a lone CR ends a line, as CRLF and LF do.
    name = str(path)
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(split_lone_cr(handle), 1):
            try:
                line = without_bom(raw, lineno).decode("utf-8")
            except UnicodeDecodeError as exc:
                if b"\x00" not in raw:
                    raise TreebankError(name, lineno, exc.start + 1,
                                        "not UTF-8 text (binary file?)") from None
                # binary: the reader below names a gzip-compressed, UTF-16 or UTF-32 file, as without the flag
                line = raw.decode("utf-8", errors="surrogateescape")
            if not line.strip():
                yield Tree("", [])
                continue
            try:
                trees = list(iter_trees_from_lines([empty_parses_unwrapped(line)], name, allow_empty=True))
            except TreebankError as exc:  # read as a text of one line: its line 1 is this line
                problem = exc.problem
                if problem.startswith(UNCLOSED):  # it said "at end of file (line 1)" of any line
                    problem = f"{UNCLOSED} at the end of the line; {ONE_PER_LINE_HINT}"  # prose: never cut
                raise TreebankError(name, lineno, exc.column, problem) from None
            # evalb.c's read_line reads brackets to the end of the line, whatever closes before it
            yield trees[0] if len(trees) == 1 else TreeSequence(trees)


def evaluate_files(gold: str | Path, test: str | Path, params: EvalbParams = EvalbParams(), *,
                   one_per_line: bool = False) -> Evaluation:
    return evaluate(read_trees(gold), read_parses(test, one_per_line=one_per_line), params)
