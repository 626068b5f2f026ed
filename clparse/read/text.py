"""Running text in: sentences of PTB tokens, each token with its character offsets (issue 29 item 1).

:func:`split_text` takes running text (paragraphs of several sentences, lines broken anywhere) and
returns its sentences; :func:`split_stream` does the same paragraph by paragraph over a file or stdin.
A blank line (a line of white space only) ends a paragraph, and no sentence spans one; inside a paragraph
a line break is just white space.

Sentences are found by syntok's segmenter, tokens by spaCy's rule-based English tokenizer
(``spacy.blank("en")``: no model to download), both measured on GUM dev (docs/text-input.md,
benchmarks/text_input.py); both come with the optional extra ``clparse[text]``. The tokens then follow
the conventions of the treebanks clparse is trained on:

- clitics split: ``don't`` -> ``do n't``, ``it's`` -> ``it 's`` (curly apostrophes kept: ``n’t``);
- quotes: an opening ``"`` or ``“`` is ``````, a closing one ``''``; single quotes ````` and ``'``
  (an apostrophe inside or at the end of a word stays part of its clitic or word);
- brackets: ``(`` and ``)`` are ``-LRB-`` and ``-RRB-``, also inside a token, as
  :func:`clparse.read.tree.escape_brackets` spells them; ``[ ] { }`` stay as they are (as GUM keeps them);
- hyphens between letters split off (``self - directed``, GUM's and OntoNotes' rule), except after the
  prefixes of :data:`KEEP_PREFIXES` (``non-native``) and between digits (``22-506``); a dash run
  (``--``) is a token of its own;
- abbreviations keep their period (``Dr.``, ``U.S.``, ``et al.``, ``etc.``).

Every token carries ``(start, end)``: ``text[start:end]`` are the characters it came from (for ``````
that is the ``"``), offsets only grow, tokens never overlap, and every character that is not white space
lies inside a token (tests/test_text_input.py checks this on arbitrary text with hypothesis). A zero-width
space (U+200B) counts as white space: it marks a break between words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import IO, Any

from clparse.read.tree import escape_brackets

__all__ = ["TextSentence", "split_text", "split_stream", "split_paragraph", "ptb_token", "KEEP_PREFIXES"]

# Left parts of a hyphenated word kept whole (GUM train keeps these joined; it splits other hyphens).
KEEP_PREFIXES = frozenset({
    "anti", "co", "counter", "cross", "e", "inter", "mid", "mini", "multi", "non", "post", "pre", "pro",
    "re", "semi", "sub", "un", "nun", "uh", "mm", "hm",
})

# Abbreviations whose period stays with them, beside the ones spaCy knows (Dr., Mr., e.g., Inc., ...).
ABBREVIATIONS = (
    "al.", "etc.", "cf.", "ca.", "approx.", "esp.", "incl.", "viz.", "ibid.", "vol.", "vols.", "pp.", "fig.",
    "figs.", "eq.", "ed.", "eds.", "voc.", "assoc.", "dept.", "univ.", "prof.", "gen.", "col.", "capt.",
    "sgt.", "lt.", "rev.", "hon.", "gov.", "sen.", "rep.", "cal.", "calif.", "ave.", "blvd.", "rd.", "jr.",
    "sr.", "op.", "ch.", "sec.", "est.", "e.g.", "i.e.", "a.m.", "p.m.", "ph.d.", "vs.",
)

# Abbreviations of what is numbered (``see Eq. 3``, ``No. 5``, ``pp. 3-4``): before a number, their period
# neither ends the sentence nor stands apart. Those in NUMBERED_CAPITAL are English words a sentence may end
# with (``I love art. 3 ...``): only capitalised (``Art. 5``).
NUMBERED = frozenset({
    "no", "nos", "nr", "nrs", "eq", "eqs", "fig", "figs", "vol", "vols", "p", "pp", "sec", "secs", "sect",
    "ch", "chap", "chaps", "ref", "refs", "pt", "pts", "para", "paras", "thm", "ca", "c", "approx",
})
NUMBERED_CAPITAL = frozenset({"art", "arts", "ex", "tab", "col", "cols", "op"})
_BEFORE_NUMBER = re.compile(r"(?<![\w.\-'’])([A-Za-z]+)\.(?=\s+\(?\d)")
# Titles before a name (``Rep. Smith``, ``Gov. Brown``, ``Ft. Worth``): capitalised, before a capitalised
# word, their period does not end the sentence either (syntok knows some, such as Prof. and Gen.).
TITLES = frozenset({
    "prof", "gen", "col", "capt", "sgt", "lt", "rev", "hon", "gov", "sen", "rep", "reps", "cpl", "maj", "adm",
    "ft", "mt", "pres", "supt", "atty", "assoc", "insp", "cmdr", "brig",
})
_BEFORE_NAME = re.compile(r"(?<![\w.\-'’])([A-Z][a-z]+)\.(?=\s+([A-Z]\w*))")  # the name looked at, not
# taken: the second title of "Sgt. Maj. Smith" is a title before a name too
# Words that start sentences, never names: after one, a title's period ends the sentence (``& Assoc. The``).
_STARTERS = frozenset({
    "The", "A", "An", "It", "This", "That", "These", "Those", "He", "She", "We", "They", "I", "In", "On",
    "At", "But", "And", "So", "Then", "There", "Here", "If", "When", "What", "Our", "My", "His", "Her", "Its",
    "Their", "Your", "You", "As", "For",
})

_LINE_BREAK = r"(?:\r\n|\r(?!\n)|\n)"  # "\r\n" is one line break, not two
_WHITE = re.compile(r"[\s\u200b\ufeff]")  # a zero-width space or a stray byte-order mark separates words
# A line of such white space is blank too (a BOM alone on a line: files joined with `cat`)
_BLANK_LINE = re.compile(_LINE_BREAK + r"(?:[^\S\r\n]|[\u200b\ufeff])*" + _LINE_BREAK)
_DASH_RUN = re.compile(r"--+")
_OPENING_CONTEXT = set("([{<“‘«`\"'") | {"-", "—", "–"}
_EMOTICON_CHARS = set("():;=[]<>^_|\\/*")


@dataclass(frozen=True)
class TextSentence:
    """One sentence: PTB tokens and, per token, where in the input its characters are."""

    tokens: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @property
    def spans(self) -> list[tuple[int, int]]:
        return list(zip(self.starts, self.ends))

    @property
    def start(self) -> int:
        return self.starts[0]

    @property
    def end(self) -> int:
        return self.ends[-1]

    def source_tokens(self, text: str) -> list[str]:
        """Each token's characters as they stand in ``text`` (the input the offsets point into)."""
        return [text[s:e] for s, e in zip(self.starts, self.ends)]

    def __len__(self) -> int:
        return len(self.tokens)


def ptb_token(source: str, opening: bool) -> str:
    """A token's PTB spelling from its source characters; ``opening``: a quote that opens.

    >>> [ptb_token(s, True) for s in ['"', '“', "'", "(", "f(x)", "„", "«", "»"]]
    ['``', '``', '`', '-LRB-', 'f-LRB-x-RRB-', '``', '``', "''"]
    >>> [ptb_token(s, False) for s in ['"', '”', "'", "’", "n't", "“"]]
    ["''", "''", "'", '’', "n't", "''"]
    """
    if source in _DOUBLE_QUOTES:
        if source in ("„", "``", "«"):
            return "``"
        if source in ("”", "''", "»"):
            return "''"
        # " and “ by context: “ closes a quote opened by „ (German style), or one written with “ twice
        return "``" if opening else "''"
    if source in ("'", "‘", "’", "`"):
        if source in ("‘", "`"):
            return "`"
        if source == "’":
            return source  # a closing quote or an apostrophe (``citizens’``): GUM keeps it as it is
        return "`" if opening else "'"
    return escape_brackets(source)


# Double quotes, with guillemets read in the French order (« opens, » closes) as English text uses them.
_DOUBLE_QUOTES = frozenset({'"', "“", "”", "„", "''", "``", "«", "»"})


def _opens(text: str, start: int, end: int) -> bool:
    """Whether a quote at text[start:end] opens: nothing or white space or an opening mark before it,
    and something other than white space after it."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return (before.isspace() or before in _OPENING_CONTEXT) and not after.isspace()


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    try:
        import spacy
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("text input needs spaCy and syntok: pip install 'clparse[text]'") from error
    nlp = spacy.blank("en")
    tokenizer: Any = nlp.tokenizer
    # Emoticons (":)", "):", "(-:") are special cases in spaCy: in running text "2010):" is ") :".
    tokenizer.rules = {key: value for key, value in tokenizer.rules.items()
                       if not (set(key) & _EMOTICON_CHARS)}
    for abbreviation in ABBREVIATIONS:
        for form in {abbreviation, abbreviation.capitalize(), abbreviation.upper()}:
            tokenizer.add_special_case(form, [{"ORTH": form}])
    return tokenizer


_ZWJ = "\u200d"
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _continues_cluster(char: str) -> bool:
    """Whether ``char`` only modifies the character before it (one symbol on screen): a combining mark or
    keycap, a variation selector, a skin-tone modifier, a tag character (subdivision flags) or a
    zero-width joiner."""
    code = ord(char)
    return (char == _ZWJ or unicodedata.category(char) in ("Mn", "Me") or 0x1F3FB <= code <= 0x1F3FF
            or 0xE0020 <= code <= 0xE007F)


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF  # two of them are one flag


def one_symbol(before: str, after: str) -> bool:
    """Whether ``after``, written right after ``before`` (nothing between), goes on the symbol ``before`` ends
    with: a modifier or joiner (:func:`_continues_cluster`), anything after a zero-width joiner, or a flag's
    second letter (an odd run of regional indicators before it)."""
    if not before or not after:
        return False
    run = 0  # regional indicators ending ``before``: an odd count leaves a flag open
    while run < len(before) and _regional(before[-1 - run]):
        run += 1
    return _continues_cluster(after[0]) or before[-1] == _ZWJ or (run % 2 == 1 and _regional(after[0]))


def _is_symbol(char: str) -> bool:
    """An emoji or a symbol like it (or a part of one's sequence)."""
    category, code = unicodedata.category(char), ord(char)
    return (category in ("So", "Me") or (category == "Sk" and code > 0x2000) or char == _ZWJ
            or 0xFE00 <= code <= 0xFE0F or 0xE0020 <= code <= 0xE007F)  # not ^ or `: Sk too, in ASCII


def _abbreviation_periods(paragraph: str) -> list[int]:
    """Where the period of an abbreviation is that ends no sentence: before a number (``Eq. 3``, ``No. (5)``:
    :data:`NUMBERED`), or a title before a name (``Rep. Smith``: :data:`TITLES`)."""
    found = []
    for m in _BEFORE_NUMBER.finditer(paragraph):
        word = m.group(1)
        if word.lower() in NUMBERED or (word.lower() in NUMBERED_CAPITAL and word[0].isupper()):
            found.append(m.end(1))
    found += [m.end(1) for m in _BEFORE_NAME.finditer(paragraph)
              if m.group(1).lower() in TITLES and m.group(2) not in _STARTERS]
    return sorted(found)


def _sentence_starts(paragraph: str) -> list[int]:
    """Where syntok starts each sentence of a paragraph (offsets into it)."""
    try:
        import syntok.segmenter as segmenter  # type: ignore[import-untyped]
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("text input needs spaCy and syntok: pip install 'clparse[text]'") from error
    # syntok's tokenizer glues an emoji to the punctuation after it ("😀."), so it found no sentence end
    # there, nor one before it ("Done. 😀 Next"): it sees a digit instead (one character for one, so
    # offsets hold; a letter would read as an initial or as a lower-case start).
    if not paragraph.isascii():
        paragraph = _NON_ASCII.sub(lambda m: "0" if _is_symbol(m.group()) else m.group(), paragraph)
    # syntok ends a sentence at "Eq." before "3" (``see Eq. 3 for``), or "Rep." before "Smith": it sees no
    # period there.
    periods = _abbreviation_periods(paragraph)
    if periods:
        characters = list(paragraph)
        for at in periods:
            characters[at] = "x"
        paragraph = "".join(characters)
    starts = []
    for part in segmenter.analyze(paragraph):
        for sentence in part:
            if sentence:
                starts.append(sentence[0].offset)
    return starts


def _raw_tokens(paragraph: str) -> list[tuple[int, int]]:
    """spaCy's tokens as (start, end), white space dropped and any token holding white space cut."""
    tokenizer = _tokenizer()  # the tokenizer alone has no length limit (a pipeline's __call__ has)
    spans: list[tuple[int, int]] = []
    for token in tokenizer(paragraph):
        start = token.idx
        for m in re.finditer(r"\S+", token.text):
            spans.append((start + m.start(), start + m.end()))
    return spans


def _join_clusters(paragraph: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Tokens as the symbols a reader sees: spaCy cuts emoji sequences apart (``👍`` ``🏽``, a family's
    zero-width joiners as tokens of their own, a flag's two letters, a variation selector alone), which
    gave invisible words and one picture as several."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and out[-1][1] == s and one_symbol(paragraph[out[-1][0]:s], paragraph[s:e]):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _join_abbreviations(paragraph: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """An abbreviation before a number or a title before a name keeps its period (``No. 5``, as GUM has it;
    spaCy gave ``No .``)."""
    periods = set(_abbreviation_periods(paragraph))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s in periods and e == s + 1 and out[-1][1] == s:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _fix_hyphens(paragraph: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Hyphens as GUM splits them (see the module doc); dash runs as tokens of their own."""
    # 1. Glue back what spaCy split at a hyphen: word "-" word with nothing between, and "-" "-x".
    joined: list[tuple[int, int]] = []
    for s, e in spans:
        if joined and joined[-1][1] == s and paragraph[s - 1] == "-" and paragraph[s] == "-":
            joined[-1] = (joined[-1][0], e)
        else:
            joined.append((s, e))
    spans = joined
    glued: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        s, e = spans[i]
        while (i + 2 < len(spans) and paragraph[spans[i + 1][0]:spans[i + 1][1]] == "-"
               and spans[i + 1][0] == e and spans[i + 2][0] == spans[i + 1][1]
               and paragraph[e - 1].isalnum() and paragraph[spans[i + 2][0]].isalnum()):
            e = spans[i + 2][1]
            i += 2
        glued.append((s, e))
        i += 1
    # 2. Cut dash runs out, then single hyphens between letters or digits by the rule.
    out: list[tuple[int, int]] = []
    for s, e in glued:
        word = paragraph[s:e]
        cuts: list[tuple[int, int]] = []
        for m in _DASH_RUN.finditer(word):
            if m.end() - m.start() < len(word):
                cuts.append((m.start(), m.end()))
        for k, char in enumerate(word):
            if char != "-" or k == 0 or k == len(word) - 1:
                continue
            left, right = word[k - 1], word[k + 1]
            if not (left.isalnum() and right.isalnum()):
                continue
            if left.isdigit() and right.isdigit():
                continue
            piece_start = max((j + 1 for j in range(k) if not word[j].isalnum()), default=0)
            if word[piece_start:k].lower() in KEEP_PREFIXES:
                continue
            cuts.append((k, k + 1))
        if not cuts:
            out.append((s, e))
            continue
        position = 0
        for a, b in sorted(cuts):
            if a < position:
                continue
            if a > position:
                out.append((s + position, s + a))
            out.append((s + a, s + b))
            position = b
        if position < len(word):
            out.append((s + position, e))
    return out


_LINK = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|[^\s@]+@[^\s@]+\.[a-z]{2,}", re.IGNORECASE)


def _after_link_end(paragraph: str, spans: list[tuple[int, int]], i: int) -> bool:
    """Whether token ``i`` starts a sentence after a web address or e-mail address that ended one
    (``… at https://gum.org. Then …``): syntok reads the period as part of the address and goes on."""
    if i < 2:
        return False
    (link_start, link_end), (dot_start, dot_end) = spans[i - 2], spans[i - 1]
    word = paragraph[spans[i][0]:spans[i][1]]
    return (paragraph[dot_start:dot_end] == "." and link_end == dot_start and dot_end < spans[i][0]
            and word[:1].isupper() and _LINK.fullmatch(paragraph[link_start:link_end]) is not None)


#: The PTB spellings of quotes, which ``quotes="raw"`` gives back as the text's own characters.
QUOTE_TOKENS = frozenset({"``", "''", "`"})


def split_paragraph(paragraph: str, offset: int = 0, quotes: str = "ptb") -> list[TextSentence]:
    """The sentences of one paragraph; offsets are shifted by ``offset`` (the paragraph's place in the
    whole input). Line breaks inside it count as white space. ``quotes="raw"``: quote tokens keep the
    text's characters (“ ” " as GUM's trees have them) instead of `` and ''."""
    flat = _WHITE.sub(" ", paragraph)  # one character for one: offsets hold
    if not flat.strip():
        return []
    spans = _join_abbreviations(flat, _fix_hyphens(flat, _join_clusters(flat, _raw_tokens(flat))))
    # A sentence starts at the first token at or after each of syntok's sentence starts.
    starts = sorted(_sentence_starts(flat))
    sentences: list[TextSentence] = []
    current: list[tuple[str, int, int]] = []
    k = 0
    for i, (s, e) in enumerate(spans):
        boundary = False
        while k < len(starts) and starts[k] <= s:
            boundary = True
            k += 1
        boundary = boundary or _after_link_end(flat, spans, i)
        if current and boundary:
            sentences.append(_sentence(current, offset))
            current = []
        current.append((ptb_token(flat[s:e], _opens(flat, s, e)), s, e))
    if current:
        sentences.append(_sentence(current, offset))
    sentences = _mend([_final_letter(sentence) for sentence in sentences])  # it joins fragments by their PTB
    # tokens: quotes are given back after
    if quotes == "raw":
        sentences = [replace(sentence, tokens=tuple(
            paragraph[start - offset:end - offset] if token in QUOTE_TOKENS else token
            for token, start, end in zip(sentence.tokens, sentence.starts, sentence.ends)))
            for sentence in sentences]
    return sentences


_LETTER_PERIOD = re.compile(r"[^\W\d_]\.")


_FINAL_CLOSING = frozenset({"''", "'", "’", "-RRB-", "]", "}"})


def _final_letter(sentence: TextSentence) -> TextSentence:
    """A letter and a period ending a sentence (closing quotes and brackets aside) are a word and the
    sentence's period (``got a C.``, ``solve for x."``): spaCy keeps them as one token, an initial's
    (``J. K. Rowling``), which no sentence ends in."""
    tokens, starts, ends = sentence.tokens, sentence.starts, sentence.ends
    i = len(tokens) - 1
    while i > 0 and tokens[i] in _FINAL_CLOSING:
        i -= 1
    if not _LETTER_PERIOD.fullmatch(tokens[i]):
        return sentence
    end = ends[i]
    return TextSentence(tokens[:i] + (tokens[i][0], ".") + tokens[i + 1:],
                        starts[:i + 1] + (end - 1,) + starts[i + 1:],
                        ends[:i] + (end - 1, end) + ends[i + 1:])


_CLOSING = frozenset({".", ",", ";", ":", "?", "!", "-RRB-", "]", "}", "''", "'", "’", "...", "…"})


def _mend(sentences: list[TextSentence]) -> list[TextSentence]:
    """Join back what syntok cuts off, as treebanks keep it: a sentence that starts with closing
    punctuation (``see [16]) || .``), a reference mark after a sentence end (``in Dulwich. [17]``,
    ``[...]``), and whatever follows a ``;`` or ``,``."""
    out: list[TextSentence] = []
    for sentence in sentences:
        tokens = sentence.tokens
        citation = tokens[0] == "[" and tokens[-1] == "]" and len(tokens) <= 5
        if out and (tokens[0] in _CLOSING or tokens[0].startswith("..") or citation
                    or out[-1].tokens[-1] in (";", ",")):
            last = out[-1]
            out[-1] = TextSentence(last.tokens + tokens, last.starts + sentence.starts,
                                   last.ends + sentence.ends)
        else:
            out.append(sentence)
    return out


def _sentence(tokens: list[tuple[str, int, int]], offset: int) -> TextSentence:
    return TextSentence(tuple(t for t, _, _ in tokens), tuple(offset + s for _, s, _ in tokens),
                        tuple(offset + e for _, _, e in tokens))


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(offset, paragraph) for each stretch of ``text`` between blank lines."""
    position = 0
    for m in _BLANK_LINE.finditer(text):
        if m.start() > position:
            yield position, text[position:m.start()]
        position = m.end()
        # A blank line's final line break may start the next one ("\n\n\n"): the next search begins at
        # m.end(), so runs of blank lines are all consumed by successive matches or left as white space.
    if position < len(text):
        yield position, text[position:]


def split_text(text: str, quotes: str = "ptb") -> list[TextSentence]:
    """Split running text into sentences of PTB tokens with offsets into ``text``.

    Needs the ``clparse[text]`` extra (spaCy and syntok).
    """
    sentences: list[TextSentence] = []
    for offset, paragraph in paragraphs(text):
        sentences += split_paragraph(paragraph, offset, quotes)
    return sentences


_BLANK = re.compile(r"(?:\s|[\u200b\ufeff])*")


def _blank(line: str) -> bool:
    """Whether a line is blank: white space only, a BOM or zero-width space counting as white space."""
    return _BLANK.fullmatch(line) is not None


def split_stream(lines: Iterable[str] | IO[str], quotes: str = "ptb") -> Iterator[TextSentence]:
    """:func:`split_text` over lines (an open text file, ``sys.stdin``), one paragraph at a time.

    Offsets count characters from the start of the stream, as if the lines were one string (open the
    file with ``newline=""`` for offsets into its exact characters). Only the paragraph being split is
    held in memory.
    """
    offset = 0
    held: list[str] = []
    held_start = 0
    for line in lines:
        if not _blank(line):
            if not held:
                held_start = offset
            held.append(line)
        elif held:
            yield from split_paragraph("".join(held), held_start, quotes)
            held = []
        offset += len(line)
    if held:
        yield from split_paragraph("".join(held), held_start, quotes)
