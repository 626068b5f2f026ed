"""Evaluate treebank files: the library side of ``clparse eval`` and ``clparse compare``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clparse.evaluate.evalb import EvalbParams, Evaluation, evaluate
from clparse.read.ptb import iter_trees_from_lines, read_trees
from clparse.read.tree import Tree


def read_parses(path: str | Path, *, one_per_line: bool = False) -> Iterator[Tree]:
    """Trees of a parser's output file.

    By default trees are read like any treebank (blank lines separate nothing)
    and ``()`` marks a sentence the parser could not parse. With
    ``one_per_line`` every line is one parse and a blank line is a failed
    parse, as EVALB reads its test file.
    """
    if not one_per_line:
        yield from read_trees(path, allow_empty=True)
        return
    with open(path, encoding="utf-8-sig") as handle:  # -sig: a byte-order mark first is not text
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                yield Tree("", [])
                continue
            trees = list(iter_trees_from_lines([line], f"{path}:{lineno}", allow_empty=True))
            if len(trees) != 1:
                from clparse.errors import TreebankError
                raise TreebankError(str(path), lineno, 1,
                                    f"expected one tree on the line, found {len(trees)}")
            yield trees[0]


def evaluate_files(gold: str | Path, test: str | Path, params: EvalbParams = EvalbParams(), *,
                   one_per_line: bool = False) -> Evaluation:
    return evaluate(read_trees(gold), read_parses(test, one_per_line=one_per_line), params)
