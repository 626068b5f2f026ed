"""Penn Treebank bracketing: streaming reader and writer.

Accepts any file name, many trees per file (blank lines or none between them),
the bare ``( (S ...) )`` wrapper (read as a phrase labeled ``""``) and
``(ROOT ...)`` / ``(TOP ...)`` wrappers (kept as they are; see
:func:`unwrap`). Reading streams line by line: only the tree being read is
held in memory.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from clparse.errors import TreebankError
from clparse.read.tree import Tree

# A byte-order mark is a separator, not text: files joined with `cat` carry one in mid-file.
_TOKEN = re.compile(r"\(|\)|[^\s()\ufeff]+")
# Bytes that are not UTF-8, as reading decodes them (surrogateescape): one error naming the tree they are in.
_NOT_TEXT = re.compile(r"[\udc80-\udcff]")
WRAPPER_LABELS = frozenset({"", "ROOT", "TOP"})
#: Labels only a tree's top carries: one read after a finished sibling starts the next tree.
NESTED_WRAPPERS = frozenset({"ROOT", "TOP"})


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
        self.tree_start = (0, 0)
        # The first '(' at column 1 inside the current tree: where the next tree likely starts if this one is
        # never closed, in a file whose trees so far began at column 1 alone (``indented``, and not ``flat``).
        self.inner_start: tuple[int, int] | None = None
        self.indented = self.flat = False

    def fail(self, line: int, col: int, problem: str) -> TreebankError:
        self.stack.clear()
        return TreebankError(self.path, line, col, problem)

    def unclosed(self) -> TreebankError | None:
        """The current (or just failed) tree as a tree never closed, if it took in a '(' at column 1 where
        the file's trees start: then that, not an error found further on, is the first problem."""
        if self.inner_start is None or self.flat or not self.indented:
            return None
        return TreebankError(self.path, *self.tree_start, f"{UNCLOSED} before the next tree "
                                                          f"(line {self.inner_start[0]})")

    def restart(self, at: int) -> TreebankError:
        """The node ``stack[at]`` starts the next tree: the error names the tree it was read into (never
        closed), and the builder goes on with the new tree alone (a lenient reader keeps it)."""
        new = self.stack[at]
        where = f"line {new[3]}" if new[3] != self.tree_start[0] else f"line {new[3]}, column {new[4]}"
        error = self.unclosed() or TreebankError(self.path, *self.tree_start,
                                                 f"{UNCLOSED} before the next tree ({where})")
        del self.stack[:at]
        self.tree_line, self.tree_start, self.inner_start = new[3], (new[3], new[4]), None
        return error

    def feed(self, token: str, line: int, col: int) -> Tree | None:
        stack = self.stack
        if token == "(":
            if not stack:
                self.tree_line, self.tree_start, self.inner_start = line, (line, col), None
            elif col == 1 and self.inner_start is None:
                self.inner_start = (line, col)
            if stack and stack[-1][0] is None:
                # "((" : the outer node has no label; only legal for the top wrapper.
                if len(stack) > 1:
                    if stack[-1][4] == 1 and stack[-2][1]:
                        # a "( (" at column 1 after a finished phrase: the next tree's bare wrapper
                        stack[-1][0] = ""
                        stack.append([None, [], None, line, col, None])
                        raise self.restart(len(stack) - 2)
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
                # nested: most often a bracket written as a word, "(-LRB- ()"
                hint = " (a bracket written as a word? treebanks spell it -LRB- / -RRB-)" if stack else ""
                raise self.fail(oline, ocol, f"empty tree '()'{hint}")
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
            if self.inner_start is None:
                self.indented = True
            else:
                self.flat = True
            return node
        # an atom: a label, or a word
        bad = None if token.isascii() else _NOT_TEXT.search(token)
        if bad:
            byte = ord(bad.group()) - 0xDC00  # undecodable bytes arrive as lone surrogates (surrogateescape)
            raise self.fail(line, col + bad.start(), f"byte 0x{byte:02X} is not UTF-8 text (another "
                                                     "encoding, such as Latin-1? or a binary file)")
        if not stack:
            raise self.fail(line, col, f"text {token!r} outside any bracket")
        top = stack[-1]
        if top[0] is None:
            top[0] = token
            if token in NESTED_WRAPPERS and len(stack) > 1 and stack[-2][1]:
                # "(ROOT" after a finished phrase: the next tree, so the one it is in was never closed
                raise self.restart(len(stack) - 1)
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


Token = tuple[str, int, int]  # text, line, column


#: Byte-order marks of UTF-32 and UTF-16 (longest first: FF FE 00 00 starts with FF FE).
WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
             (b"\xfe\xff", "UTF-16"))


def wide_encoding(head: bytes | str) -> tuple[bytes, str] | None:
    """The byte-order mark and the encoding, UTF-32 or UTF-16, that a file's first bytes ``head`` (or its
    first line as reading decodes it, with surrogateescape) start with; None for any other."""
    for bom, encoding in WIDE_BOMS:
        if isinstance(head, bytes) and head.startswith(bom) or \
                isinstance(head, str) and head.startswith(bom.decode("utf-8", "surrogateescape")):
            return bom, encoding
    return None


def _binary(path: str, lineno: int, text: str) -> TreebankError:
    """A NUL byte: a binary file, or a compressed (``wsj_0001.mrg.gz``), UTF-16 or UTF-32 one, said so."""
    packed = ""
    if lineno == 1 and text.startswith("\x1f\udc8b"):  # gzip: 1f 8b, as surrogateescape reads them
        packed = " (gzip-compressed: gunzip it first)"
    elif lineno == 1 and (wide := wide_encoding(text)) is not None:
        packed = f" ({wide[1]} text: save it as UTF-8)"
    return TreebankError(path, lineno, text.index("\x00") + 1,
                         f"binary data (NUL byte): not a treebank file{packed}")


def _tokens(lines: Iterable[str], path: str) -> Iterator[Token]:
    for lineno, text in enumerate(lines, 1):
        if "\x00" in text:
            raise _binary(path, lineno, text)
        for match in _TOKEN.finditer(text):
            yield match.group(), lineno, match.start() + 1


def iter_trees_from_lines(lines: Iterable[str], path: str = "<string>", *,
                          allow_empty: bool = False) -> Iterator[Tree]:
    """Yield trees from lines of text; raise :class:`TreebankError` on the first bad tree.

    With ``allow_empty`` a top-level ``()`` is read as an empty tree (no words):
    that is how parser output marks a sentence it could not parse; so is a top-level
    constituent without children such as ``(ROOT)`` (clparse's parse of an empty line).
    """
    builder = _Builder(path, allow_empty)
    lineno = 0
    for lineno, text in enumerate(lines, 1):  # _tokens inlined: a generator per token cost 10 % of reading
        if "\x00" in text:
            raise _binary(path, lineno, text)
        for match in _TOKEN.finditer(text):
            try:
                tree = builder.feed(match.group(), lineno, match.start() + 1)
            except TreebankError as exc:
                raise builder.unclosed() or exc from None
            if tree is not None:
                yield tree
    if builder.stack:
        raise builder.unclosed() or TreebankError(path, *builder.tree_start,
                                                  f"{UNCLOSED} at end of file (line {lineno})")


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


def _decoded_lines(handle: IO[bytes]) -> Iterator[str]:
    """Lines as text; a byte that is not UTF-8 becomes a lone surrogate, which the reader refuses in the
    token it is part of (so a lenient read loses that tree only, and the error names its line and column).
    A lone CR ends a line: else a classic Mac file was one line, and every error was placed on line 1."""
    for lineno, raw in enumerate(split_lone_cr(handle), 1):
        yield without_bom(raw, lineno).decode("utf-8", errors="surrogateescape")


#: A failed parse as the Berkeley parser writes it, "(())": an empty parse to EVALB, which skips it. Found in
#: the text, as tokens cannot: "( )" is a word to evalb.c, so "(( ))" is a length mismatch, not a failure.
_WRAPPED_EMPTY = re.compile(r"\(\s*\(\)\s*\)")


def empty_parses_unwrapped(line: str) -> str:
    """``line`` with each ``(())`` written ``()`` and spaces, so that columns stay where they were: read
    with ``allow_empty``, it is then an empty tree (else "empty tree '()' (a bracket written as a word?)")."""
    return _WRAPPED_EMPTY.sub(lambda m: "()" + " " * (len(m.group()) - 2), line) if "(" in line else line


def read_trees(path: str | Path, *, skip_bad: bool = False, report: ReadReport | None = None,
               allow_empty: bool = False, wrapped_empty: bool = False) -> Iterator[Tree]:
    """Stream the trees of one file.

    With ``skip_bad`` a malformed tree is skipped (counted in ``report``) and
    reading resumes after it: where its brackets close, or, if they never do, at
    the next line that starts a tree at column 1; without it the first problem
    raises :class:`TreebankError`. An empty file is an error either way: it is
    almost always a wrong path. ``wrapped_empty`` reads each line through
    :func:`empty_parses_unwrapped`: with ``allow_empty``, a parser's output.
    """
    with open(path, "rb") as handle:
        yield from read_tree_stream(handle, str(path), skip_bad=skip_bad, report=report,
                                    allow_empty=allow_empty, wrapped_empty=wrapped_empty)


def read_tree_stream(handle: IO[bytes], name: str, *, skip_bad: bool = False,
                     report: ReadReport | None = None, allow_empty: bool = False,
                     wrapped_empty: bool = False) -> Iterator[Tree]:
    """:func:`read_trees` over an open binary stream (stdin), ``name`` in its errors; the stream stays
    open."""
    report = report if report is not None else ReadReport()
    lines = _decoded_lines(handle)
    if wrapped_empty:
        lines = map(empty_parses_unwrapped, lines)
    if not skip_bad:
        for tree in iter_trees_from_lines(lines, name, allow_empty=allow_empty):
            report.trees += 1
            yield tree
    else:
        yield from _read_lenient(lines, name, report, allow_empty)
    if report.trees == 0 and report.skipped == 0:
        raise TreebankError(name, 1, 1, f"{'stdin' if name == '-' else 'file'} contains no trees")


def _next_tree(held: list[Token]) -> int | None:
    """Where the next tree likely starts in a tree's tokens: the first '(' at column 1 after its own."""
    return next((i for i, (text, _, col) in enumerate(held) if i and text == "(" and col == 1), None)


def _read_lenient(lines: Iterable[str], path: str, report: ReadReport, allow_empty: bool) -> Iterator[Tree]:
    """Read token by token as the strict reader does, so good trees beside a bad one (on its line, or in a
    file of unindented trees) are kept; after a bad tree the rest of its brackets are skipped. A tree never
    closed is found where the next one starts with ``(ROOT``, ``(TOP`` or ``( (`` (the builder restarts
    there), or, in a file whose trees start at column 1 alone, at an error or the end of the file: its
    tokens are then read again from the first ``(`` at column 1 after its start."""
    builder = _Builder(path, allow_empty)
    source = _tokens(lines, path)
    pending: deque[Token] = deque()  # tokens to read again
    held: list[Token] = []  # the current tree's tokens (read or skipped), from its '('
    skipping = 0  # brackets of a skipped bad tree still open
    stray = False  # text outside any tree already noted: a run of it is one problem

    def read_again() -> bool:
        """If the open tree took in the next at column 1: note it as never closed, read on from there."""
        nonlocal held, skipping
        again = _next_tree(held) if builder.indented and not builder.flat else None
        if again is None:
            return False
        if not skipping:  # a skipped tree was noted when it failed
            report.note(TreebankError(path, held[0][1], held[0][2],
                                      f"{UNCLOSED} before the next tree (line {held[again][1]})"))
        builder.stack.clear()
        pending.extendleft(reversed(held[again:]))
        held, skipping = [], 0
        return True

    while True:
        token = pending.popleft() if pending else None
        if token is None:
            try:
                token = next(source, None)
            except TreebankError as exc:  # binary data: nothing further is a treebank
                report.note(exc)
                return
        if token is None:  # the end of the file
            if not (builder.stack or skipping):
                return
            if read_again():
                continue
            if builder.stack:  # a skipped bad tree was noted when it failed
                report.note(TreebankError(path, held[0][1], held[0][2], f"{UNCLOSED} at end of file"))
            return
        text, line, col = token
        if skipping:
            held.append(token)
            skipping += (text == "(") - (text == ")")
            continue
        depth = len(builder.stack)
        if depth:
            held.append(token)
        else:
            held = [token]
        try:
            tree = builder.feed(text, line, col)
        except TreebankError as exc:
            if depth and read_again():
                continue
            if depth or not stray:
                report.note(exc)
            stray = not depth  # text outside any tree (a '(' there never fails)
            if builder.stack:  # the builder restarted at the next tree: its '(' and label (or second '(')
                held = held[-2:]
            else:
                skipping = max(depth + (text == "(") - (text == ")"), 0)
            continue
        stray = False
        if tree is not None:
            report.trees += 1
            yield tree


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
            for lineno, raw in enumerate(split_lone_cr(handle), 1):
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
