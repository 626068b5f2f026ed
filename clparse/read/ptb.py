"""Penn Treebank bracketing: streaming reader and writer.

Accepts any file name, many trees per file (blank lines or none between them),
the bare ``( (S ...) )`` wrapper (read as a phrase labeled ``""``) and
``(ROOT ...)`` / ``(TOP ...)`` wrappers (kept as they are; see
:func:`unwrap`). Reading streams line by line: only the tree being read is
held in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from clparse.errors import TreebankError
from clparse.read.tree import Tree

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
WRAPPER_LABELS = frozenset({"", "ROOT", "TOP"})


@dataclass
class ReadReport:
    """What a lenient read skipped, for the caller to report."""

    trees: int = 0
    skipped: int = 0
    first_errors: list[str] | None = None

    def note(self, error: TreebankError) -> None:
        self.skipped += 1
        if self.first_errors is None:
            self.first_errors = []
        if len(self.first_errors) < 10:
            self.first_errors.append(str(error))


class _Builder:
    """Turns a token stream into trees, remembering where each node opened."""

    def __init__(self, path: str, allow_empty: bool = False) -> None:
        self.path = path
        self.allow_empty = allow_empty
        # Each open node: [label or None, children, word, line, column, (line, column) of word]
        self.stack: list[list] = []
        self.tree_line = 0

    def fail(self, line: int, col: int, problem: str) -> TreebankError:
        self.stack.clear()
        return TreebankError(self.path, line, col, problem)

    def feed(self, token: str, line: int, col: int) -> Tree | None:
        stack = self.stack
        if token == "(":
            if not stack:
                self.tree_line = line
            elif stack[-1][0] is None:
                # "((" : the outer node has no label; only legal for the top wrapper.
                if len(stack) > 1:
                    raise self.fail(line, col, "phrase without a label")
                stack[-1][0] = ""
            if stack and stack[-1][2] is not None:
                # "(NP a (NN b))": the word before this bracket has no tag of its own
                wline, wcol = stack[-1][5]
                raise self.fail(wline, wcol, f"leaf {stack[-1][2]!r} without a tag")
            stack.append([None, [], None, line, col, None])
            return None
        if token == ")":
            if not stack:
                raise self.fail(line, col, "unbalanced ')': no open bracket")
            label, children, word, oline, ocol, _ = stack.pop()
            if label is None:
                if self.allow_empty and not stack:
                    return Tree("", [])  # a failed parse, as parsers write it
                raise self.fail(oline, ocol, "empty tree '()'")
            if word is not None:
                node = Tree.preterminal(label, word)
            elif not children:
                if self.allow_empty and not stack:
                    return Tree(label, [])  # "(ROOT)": clparse's parse of an empty line, also a failed parse
                raise self.fail(oline, ocol, f"constituent {label!r} has no children")
            else:
                node = Tree(label, children)
            if stack:
                stack[-1][1].append(node)
                return None
            return node
        # an atom: a label, or a word
        if not stack:
            raise self.fail(line, col, f"text {token!r} outside any bracket")
        top = stack[-1]
        if top[0] is None:
            top[0] = token
        elif top[2] is None and not top[1]:
            top[2] = token
            top[5] = (line, col)
        elif top[2] is not None:
            raise self.fail(line, col, f"preterminal {top[0]!r} has more than one word ({token!r})")
        else:
            raise self.fail(line, col, f"leaf {token!r} without a tag")
        return None


#: The start of the message for a tree whose brackets are still open where its text ends.
UNCLOSED = "unbalanced '(': tree is not closed"


def iter_trees_from_lines(lines: Iterable[str], path: str = "<string>", *,
                          allow_empty: bool = False) -> Iterator[Tree]:
    """Yield trees from lines of text; raise :class:`TreebankError` on the first bad tree.

    With ``allow_empty`` a top-level ``()`` is read as an empty tree (no words):
    that is how parser output marks a sentence it could not parse; so is a top-level
    constituent without children such as ``(ROOT)`` (clparse's parse of an empty line).
    """
    builder = _Builder(path, allow_empty)
    lineno = 0
    for lineno, text in enumerate(lines, 1):
        if "\x00" in text:
            raise TreebankError(path, lineno, text.index("\x00") + 1,
                                "binary data (NUL byte): not a treebank file")
        for match in _TOKEN.finditer(text):
            tree = builder.feed(match.group(), lineno, match.start() + 1)
            if tree is not None:
                yield tree
    if builder.stack:
        oline, ocol = builder.stack[0][3], builder.stack[0][4]
        raise TreebankError(path, oline, ocol, f"{UNCLOSED} at end of file (line {lineno})")


#: The UTF-8 byte-order mark some editors put first in a file: not text, so it is dropped.
BOM = b"\xef\xbb\xbf"


def without_bom(raw: bytes, lineno: int) -> bytes:
    """Line ``lineno`` of a file as bytes, without the byte-order mark the first one may start with."""
    return raw[len(BOM):] if lineno == 1 and raw.startswith(BOM) else raw


# a CR byte followed by anything but LF: a line break of its own (classic Mac files)
_LONE_CR = re.compile(rb"(?<=\r)(?=[^\n])")


def split_lone_cr(handle: IO[bytes]) -> Iterator[bytes]:
    """A binary file's lines, with a lone carriage return ending a line as LF and CRLF do. Reading splits
    only at LF, so a file with CR line ends was one line: all its sentences were parsed as one, and no blank
    line ended a paragraph of text. CRLF stays whole (reading never cuts it), and a CR byte is never part of
    a UTF-8 character."""
    for raw in handle:
        if b"\r" in raw:
            yield from _LONE_CR.split(raw)
        else:
            yield raw


def _decoded_lines(handle: IO[bytes], path: str) -> Iterator[str]:
    for lineno, raw in enumerate(handle, 1):
        raw = without_bom(raw, lineno)
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TreebankError(path, lineno, exc.start + 1, "not UTF-8 text (binary file?)") from None


def read_trees(path: str | Path, *, skip_bad: bool = False, report: ReadReport | None = None,
               allow_empty: bool = False) -> Iterator[Tree]:
    """Stream the trees of one file.

    With ``skip_bad`` a malformed tree is skipped (counted in ``report``) and
    reading resumes at the next line that starts a tree at column 1; without
    it the first problem raises :class:`TreebankError`. An empty file is an
    error either way: it is almost always a wrong path.
    """
    path_text = str(path)
    report = report if report is not None else ReadReport()
    with open(path, "rb") as handle:
        lines = _decoded_lines(handle, path_text)
        if not skip_bad:
            for tree in iter_trees_from_lines(lines, path_text, allow_empty=allow_empty):
                report.trees += 1
                yield tree
        else:
            yield from _read_lenient(lines, path_text, report, allow_empty)
    if report.trees == 0 and report.skipped == 0:
        raise TreebankError(path_text, 1, 1, "file contains no trees")


def _read_lenient(lines: Iterator[str], path: str, report: ReadReport, allow_empty: bool) -> Iterator[Tree]:
    """Read tree by tree; a tree's text is the lines from one column-1 '(' to the next."""
    chunk: list[str] = []
    start = 1

    def flush(last: bool = False) -> Iterator[Tree]:
        if not any(s.strip() for s in chunk):
            return
        try:
            trees = list(iter_trees_from_lines(chunk, path, allow_empty=allow_empty))
        except TreebankError as exc:
            problem = exc.problem
            if problem.startswith(UNCLOSED):  # the chunk's end is the next tree's start, in file lines
                end = "at end of file" if last else f"before the next tree (line {start + len(chunk)})"
                problem = f"{UNCLOSED} {end}"
            report.note(TreebankError(path, exc.line + start - 1, exc.column, problem))
            return
        report.trees += len(trees)
        yield from trees

    try:
        for lineno, text in enumerate(lines, 1):
            if text.startswith("(") and chunk:
                yield from flush()
                chunk, start = [], lineno
            chunk.append(text)
    except TreebankError as exc:  # undecodable bytes: the rest of the file is lost
        report.note(exc)
        return
    yield from flush(last=True)


@dataclass(frozen=True)
class DeepTree:
    """Where the most deeply nested tree of some files starts, and how deep it is nested."""

    path: str
    line: int
    column: int
    depth: int


def deepest_tree(paths: Iterable[str | Path]) -> DeepTree | None:
    """The most deeply nested tree of ``paths`` (the first one if several tie), counted bracket by bracket,
    without building any tree; None if there is no bracket at all. For naming the tree a command could
    not handle (a step that recurses per level), so the message can say where it is."""
    best: DeepTree | None = None
    for path in paths:
        depth, start = 0, (1, 1)
        with open(path, "rb") as handle:
            for lineno, raw in enumerate(handle, 1):
                text = raw.decode("utf-8", errors="replace")
                for match in _TOKEN.finditer(text):
                    token = match.group()
                    if token == "(":
                        if depth == 0:
                            start = (lineno, match.start() + 1)
                        depth += 1
                        if best is None or depth > best.depth:
                            best = DeepTree(str(path), start[0], start[1], depth)
                    elif token == ")":
                        depth = max(depth - 1, 0)
    return best


def read_treebank(paths: Iterable[str | Path], *, skip_bad: bool = False,
                  report: ReadReport | None = None) -> Iterator[Tree]:
    """Stream the trees of several files in order."""
    report = report if report is not None else ReadReport()
    for path in paths:
        yield from read_trees(path, skip_bad=skip_bad, report=report)


def parse_tree(text: str) -> Tree:
    """Parse exactly one tree from a string (handy in tests and the REPL)."""
    trees = list(iter_trees_from_lines(text.splitlines()))
    if len(trees) != 1:
        raise ValueError(f"expected one tree, found {len(trees)}")
    return trees[0]


def unwrap(tree: Tree) -> Tree:
    """Drop a ``ROOT``/``TOP``/empty wrapper with a single child; return other trees unchanged."""
    while tree.label in WRAPPER_LABELS and not tree.is_preterminal and len(tree.children) == 1:
        tree = tree.children[0]
    return tree


def format_tree(tree: Tree) -> str:
    """One-line bracketing; reading it back gives an equal tree (iterative: any depth)."""
    parts: list[str] = []
    stack: list[Tree | str] = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
        elif item.is_preterminal:
            parts.append(f"({item.label} {item.word})")
        else:
            parts.append(f"({item.label}" if item.label else "(")
            stack.append(")")
            for child in reversed(item.children):
                stack.append(child)
                stack.append(" ")
    return "".join(parts)


def format_tree_indented(tree: Tree, indent: str = "  ") -> str:
    """Indented bracketing, one phrase per line, preterminal runs kept on their parent's line."""
    lines: list[str] = []
    stack: list[tuple[Tree, int] | None] = [(tree, 0)]  # None: close the phrase on the last line
    while stack:
        item = stack.pop()
        if item is None:
            lines[-1] += ")"
            continue
        node, depth = item
        if node.is_preterminal or all(c.is_preterminal for c in node.children):
            lines.append(indent * depth + format_tree(node))
            continue
        lines.append(indent * depth + (f"({node.label}" if node.label else "("))
        stack.append(None)
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return "\n".join(lines)


def write_trees(trees: Iterable[Tree], handle: IO[str], *, indented: bool = False) -> int:
    """Write trees, one per line (or indented with a blank line between); return how many."""
    count = 0
    for tree in trees:
        if indented:
            handle.write(format_tree_indented(tree) + "\n\n")
        else:
            handle.write(format_tree(tree) + "\n")
        count += 1
    return count
