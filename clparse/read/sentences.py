"""Sentences to parse: one tokenized sentence per line, ``word/TAG`` tokens, PTB trees, or running text."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import IO

from clparse.errors import ClparseError
from clparse.read.ptb import read_tree_stream, read_trees, split_lone_cr, wide_encoding, without_bom
from clparse.read.tree import escape_brackets

FORMATS = ("tokens", "tagged", "ptb", "text")
Sentence = list[str] | list[tuple[str, str]]

# Running text given as tokens: punctuation glued to a word ("dog," "(D.C.)" "\"It"), an unsplit "n't",
# or a lower-case word with the sentence's period on it, before a capital or at the end ("barked. It",
# "barked."). Treebank tokens almost never look so (4 of GUM's 11,799 sentences: "Yahoo!", "refrig." and
# the like); 80 % of GUM dev's lines as running text do (benchmarks/running_text_warning.py). Tested by
# string methods, not a regular expression: one over the glued punctuation backtracked on a long run of
# ")" and took seconds on one token.
_OPENERS = '("\u201c['  # before a word: ( " “ [
_GLUED_AFTER = ',;!?)"\u201d]'  # right after a word: , ; ! ? ) " ” ]
_CLOSING = '\'"\u201d\u2019)'  # and after those, closing quotes and brackets: ' " ” ’ )
_ENDING_ABBREVIATIONS = {"etc."}  # treebanks keep the sentence's period in it: "... and so on etc."
_SHOWN = 40  # characters of a token a warning quotes


def read_sentences(names: Iterable[str], fmt: str, warn: Callable[[str], object] | None = None,
                   known_tags: Collection[str] | None = None) -> Iterator[Sentence]:
    """Sentences from files (``-`` is stdin): token lists (``tokens``) or (word, tag) lists.

    One sentence per input line, always: an empty line gives an empty sentence (the parser's
    output for it is ``(ROOT)``), with a warning naming file and line, so output line n belongs to
    input line n (EVALB pairs sentences by position). A ``tagged`` token without a ``/TAG`` stops
    with an error naming file, line and token; with ``known_tags``, a tag outside it is warned
    about once. A ``tokens`` file with a line that looks like running text (:func:`running_text_token`)
    is warned about once. Bytes that are not UTF-8 stop with an error naming file and line. ``ptb`` yields
    each tree's tagged words. ``text`` is running text (:mod:`clparse.read.text`, the ``clparse[text]``
    extra): paragraphs end at blank lines, and each is split into sentences of treebank tokens (``n't``
    split, brackets as -LRB-/-RRB-, quotes as the text has them), so a line may hold several sentences
    or part of one.
    """
    if fmt not in FORMATS:
        raise ClparseError(f"unknown input format {fmt!r}; choose one of {', '.join(FORMATS)}")
    silent = warn is None  # nobody to tell: no line is looked at for running text
    warn = warn or (lambda _: None)
    unknown: set[str] = set()
    for name in names:
        untold = not silent  # one warning a file that looks like running text
        if fmt == "ptb":
            # A childless tree, ``()`` or ``(ROOT)``, is an empty sentence: that is what parse writes for an
            # empty line, so its own output reads back, one sentence per tree as before.
            trees = (read_tree_stream(sys.stdin.buffer, name, allow_empty=True) if name == "-"
                     else read_trees(name, allow_empty=True))
            for index, tree in enumerate(trees, 1):
                if not tree.children:
                    warn(f"{name}: tree {index} has no words; its output is (ROOT), so output trees stay "
                         "aligned with input")
                yield list(tree.tagged_words())
            continue
        if fmt == "text":
            yield from _text_sentences(name)
            continue
        for number, line in _lines(name):
            tokens = line.split()
            if not tokens:
                warn(f"{name}:{number}: empty line; its output is (ROOT), so output lines stay aligned with "
                     "input")
                yield []
            elif fmt == "tokens":
                if untold and (glued := running_text_token(tokens)) is not None:
                    untold = False
                    shown = tokens[glued] if len(tokens[glued]) <= _SHOWN else tokens[glued][:_SHOWN] + "…"
                    warn(f"{name}:{number}: token {glued + 1} {shown!r} looks like running text "
                         "(punctuation on a word); tokens input reads each line as one sentence split at "
                         "spaces: for running text, clparse parse --input-format text (warned once a file)")
                yield tokens
            else:
                tagged = [_tagged(token, name, number, column) for column, token in enumerate(tokens, 1)]
                for column, (_, tag) in enumerate(tagged, 1):
                    if known_tags is not None and tag not in known_tags and tag not in unknown:
                        unknown.add(tag)
                        warn(f"{name}:{number}: token {column} has tag {tag!r}, never seen in training "
                             "(warned once per tag)")
                yield tagged


def _text_sentences(name: str) -> Iterator[list[str]]:
    """The sentences of running text, one paragraph (lines up to a blank one) at a time. Quotes keep the
    text's characters: GUM's trees have “ ” " as the words of quotes (tagged `` and ''), and the features
    and the tagger know those."""
    from clparse.read.text import split_stream

    for sentence in split_stream((line for _, line in _lines(name)), quotes="raw"):
        yield list(sentence.tokens)


def running_text_token(tokens: list[str]) -> int | None:
    """The index of the first token that says the line is running text rather than treebank tokens, if
    any: a reader of tokens warns with it, as the line's words are then parsed with the punctuation on."""
    for index, token in enumerate(tokens):
        if glued_punctuation(token):
            return index
        if sentence_period(token) and (index + 1 == len(tokens) or tokens[index + 1][:1].isupper()):
            return index
    return None


def glued_punctuation(token: str) -> bool:
    """Whether punctuation is glued to a word in ``token``: an opening bracket or quote before a letter or
    digit (``(D.C.)`` ``"It``), a comma, semicolon, ``!``, ``?``, closing bracket or quote right after one
    (``dog,`` ``easy,"`` ``Yahoo!``), or an ``n't`` not split off (``didn't``). Time linear in its length."""
    if len(token) < 2:
        return False
    head = token.lstrip(_OPENERS)
    if len(head) < len(token) and head[:1].isalnum():
        return True
    core = token.rstrip(_GLUED_AFTER + _CLOSING)
    if core and core[-1].isalnum() and len(core) < len(token):
        tail = token[len(core):]
        run = len(tail) - len(tail.lstrip(_GLUED_AFTER))  # the glued marks, then only closing ones
        if run and all(c in _CLOSING for c in tail[run:]):
            return True
    return len(token) > 3 and token[-3:].lower() == "n't" and token[-4].isalnum()


def sentence_period(token: str) -> bool:
    """Whether ``token`` is a lower-case word of three letters or more with a sentence's ``.``, ``?`` or ``!``
    on it (``barked.``), which treebank tokens split off (but ``etc.``)."""
    word = token[:-1]
    return (token[-1:] in (".", "?", "!") and len(word) >= 3 and word.isalpha() and word.islower()
            and token not in _ENDING_ABBREVIATIONS)


def count_sentences(names: Iterable[str], fmt: str) -> int:
    """How many sentences :func:`read_sentences` will yield from files: a progress total, and a check
    of the whole input (encoding, ``word/TAG`` tokens, trees) before anything slow starts."""
    return sum(1 for _ in read_sentences(names, fmt))


def wide_text(name: str, head: bytes) -> ClparseError | None:
    """The error for a file whose first bytes ``head`` say it is UTF-16 or UTF-32 (Windows PowerShell 5's
    `>`, Notepad's "Unicode"), which reads as binary data (NUL bytes) otherwise; None for any other."""
    wide = wide_encoding(head)
    if wide is None:
        return None
    bom, encoding = wide
    start = bom.hex(" ").upper()
    return ClparseError(f"{name}:1: {encoding} text (it starts with the bytes {start}); clparse reads UTF-8: "
                        "save the file as UTF-8")


def _lines(name: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of a file or stdin, decoded line by line so a binary file is named, not a
    traceback."""
    handle: IO[bytes] = sys.stdin.buffer if name == "-" else open(name, "rb")
    try:
        for number, raw in enumerate(split_lone_cr(handle), 1):
            if number == 1 and (wide := wide_text(name, raw)) is not None:
                raise wide
            if b"\x00" in raw:
                raise ClparseError(f"{name}:{number}: binary data (NUL byte), not text; give a UTF-8 text "
                                   "file")
            raw = without_bom(raw, number)  # Windows editors start UTF-8 files with one
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ClparseError(f"{name}:{number}: byte {exc.start + 1} is not UTF-8 text "
                                   "(binary file, or another encoding?)") from None
            # A byte-order mark further on (files concatenated with `cat`) is not text either: read as a
            # space, one character for one, so text input's offsets hold.
            yield number, text.replace("\ufeff", " ") if "\ufeff" in text else text
    finally:
        if name != "-":
            handle.close()


def _tagged(token: str, name: str, line: int, column: int) -> tuple[str, str]:
    word, slash, tag = token.rpartition("/")  # the last slash: words may contain slashes ("1/2/CD")
    if not slash or not word or not tag:
        raise ClparseError(f"{name}:{line}: token {column} {token!r} is not word/TAG")
    return word, escape_brackets(tag)  # the tag "(" of PTB .pos files is the treebank's -LRB-
