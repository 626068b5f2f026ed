"""Text input (issue 29 item 1): sentence splitters and PTB tokenizers measured on GUM dev as running text.

GUM dev's trees are turned back into running text, then each candidate splits that text into sentences
and tokens, and is scored against the trees.

How the running text is made (:func:`detokenize`): a sentence's words (the tree's leaves without
``-NONE-``) are joined with one space, except that no space goes before closing punctuation (``, . ; : ? !
... % ) ]``), closing quotes (tag ``''``), clitics (``'s``, ``n't``, ``'re``, ``’ll`` ...), nor after opening
brackets, opening quotes (tag ``````) or ``$``, nor on either side of a ``HYPH`` hyphen; PTB escapes are
undone (``-LRB-`` -> ``(``, ``-RRB-`` -> ``)``; quotes are GUM's own characters, ``"`` or curly). A
document is one paragraph: its sentences joined by one space, wrapped at 80 columns (lines broken at
spaces, anywhere in a sentence). Documents are separated by one blank line. Headings, captions and list
items (a sentence with no ``. ? !`` among its last three tokens) cannot be told apart from the next
sentence in running text, and in the source they stand on lines of their own: by default such a sentence
ends its paragraph (a blank line follows it); ``--one-paragraph`` keeps every document in one paragraph
regardless, and is reported as a second row of numbers.

Scores, for every candidate:

- sentence boundaries: a boundary is the character offset where a sentence starts (its first token's
  start); precision, recall and F1 of the system's boundaries against the gold ones, over all sentences
  (``all``) and over the sentences that do not start a paragraph (``inner``: the ones a splitter must
  find; paragraph starts come free).
- tokens exact: the share of gold sentences whose tokens the system reproduces exactly: the system's
  tokens lying inside the gold sentence's character span, wherever the system put its sentence
  boundaries, equal the gold tokens (strings after mapping both to PTB conventions, and offsets); a
  token straddling the gold sentence's edge is a mismatch.
- both: the gold sentence is one system sentence and its tokens are exact.
- tokens/s: gold tokens over the candidate's wall-clock time for the whole text (best of ``--repeat``).

Run: ``python benchmarks/text_input.py [--dev DIR] [--train DIR] [--repeat N] [--one-paragraph]``.
Candidates whose library is not installed are reported as skipped.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from clparse.read import read_trees  # noqa: E402

Span = tuple[str, int, int]  # token as the system spells it, start, end
Sentences = list[list[Span]]

NO_SPACE_BEFORE = {",", ".", ";", ":", "?", "!", "...", "…", "%", "-RRB-", ")", "]", "}"}
NO_SPACE_AFTER = {"-LRB-", "(", "[", "{", "$", "#"}
CLITICS = re.compile(r"^(?:[nN][’']t|[’'](?:s|S|re|RE|ve|VE|ll|LL|m|M|d|D))$")
UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
FINAL = {".", "?", "!"}


@dataclass
class Gold:
    text: str
    sentences: list[list[Span]]  # canonical token, start, end
    paragraph_starts: set[int]


def canonical(token: str, tag: str | None = None) -> str:
    """A token in the PTB conventions both sides are compared in.

    Quotes: opening ````, closing ``''`` (single: ````` and ``'``), by the gold tag or by the system's own
    spelling; brackets ``(`` ``)`` as ``-LRB-`` ``-RRB-`` (``[ ]`` kept, as GUM and clparse keep them);
    a curly apostrophe in a clitic as ``'``.
    """
    if tag == "``" and token in {'"', "“", "``", "„"}:
        return "``"
    if tag == "''" and token in {'"', "”", "''"}:
        return "''"
    if tag == "``" and token in {"'", "‘", "`"}:
        return "`"
    if tag == "''" and token in {"'", "’"}:
        return "'"
    if token == "’":  # closing single quote or apostrophe: the same character either way
        return "'"
    token = {"“": "``", "”": "''", "‘": "`"}.get(token, token).replace("(", "-LRB-").replace(")", "-RRB-")
    if CLITICS.match(token):
        token = token.replace("’", "'")
    return token


def detokenize(words: list[tuple[str, str]]) -> tuple[str, list[tuple[int, int]]]:
    """One sentence's text and each word's (start, end) in it."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    glue = True  # no space before the first word
    for i, (word, tag) in enumerate(words):
        surface = UNESCAPE.get(word, word).replace("-LRB-", "(").replace("-RRB-", ")")
        before = not glue
        if (word in NO_SPACE_BEFORE and tag not in {"``"}) or tag in {"''", "POS", "HYPH"} \
                or CLITICS.match(word):
            before = False
        if i and words[i - 1][1] == "HYPH":
            before = False
        if before:
            out.append(" ")
            pos += 1
        spans.append((pos, pos + len(surface)))
        out.append(surface)
        pos += len(surface)
        glue = word in NO_SPACE_AFTER or tag == "``"
    return "".join(out), spans


def build_gold(directory: str, one_paragraph: bool) -> Gold:
    text_parts: list[str] = []
    sentences: list[list[Span]] = []
    paragraph_starts: set[int] = set()
    offset = 0
    for path in sorted(glob.glob(os.path.join(directory, "*.ptb"))):
        paragraphs: list[list[tuple[str, list[Span]]]] = [[]]
        for tree in read_trees(path):
            words = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
            if not words:
                continue
            sentence_text, spans = detokenize(words)
            tokens = [(canonical(w, t), s, e) for (w, t), (s, e) in zip(words, spans)]
            paragraphs[-1].append((sentence_text, tokens))
            if not one_paragraph and not any(t in FINAL for _, t in words[-3:]):
                paragraphs.append([])
        for paragraph in paragraphs:
            if not paragraph:
                continue
            if text_parts:
                text_parts.append("\n\n")
                offset += 2
            # Join with spaces, then wrap: a space becomes a newline, so offsets do not move.
            joined_parts = []
            local = 0
            for k, (sentence_text, tokens) in enumerate(paragraph):
                if k:
                    joined_parts.append(" ")
                    local += 1
                sentences.append([(tok, offset + local + s, offset + local + e) for tok, s, e in tokens])
                if k == 0:
                    paragraph_starts.add(offset + local)
                joined_parts.append(sentence_text)
                local += len(sentence_text)
            joined = "".join(joined_parts)
            wrapped = textwrap.fill(joined, width=80, break_long_words=False, break_on_hyphens=False,
                                    replace_whitespace=False, drop_whitespace=True)
            assert len(wrapped) == len(joined) and wrapped.replace("\n", " ") == joined
            text_parts.append(wrapped)
            offset += len(wrapped)
    text = "".join(text_parts)
    for sentence in sentences:
        for tok, s, e in sentence:
            assert text[s:e] and not any(c.isspace() for c in text[s:e]), (tok, text[s:e])
    return Gold(text, sentences, paragraph_starts)


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(offset, paragraph) with single newlines turned into spaces (same length: offsets hold)."""
    out = []
    for m in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text):
        out.append((m.start(), m.group().replace("\n", " ")))
    return out


def train_text(directory: str) -> str:
    gold = build_gold(directory, one_paragraph=False)
    return gold.text


# ---------------------------------------------------------------------------------------- candidates

def spans_from_tokenizer(tokenize_spans: Callable[[str], list[tuple[int, int]]], text: str, base: int,
                         sentence_spans: list[tuple[int, int]]) -> Sentences:
    result = []
    for s, e in sentence_spans:
        chunk = text[s:e]
        result.append([(chunk[a:b], base + s + a, base + s + b) for a, b in tokenize_spans(chunk)])
    return result


def nltk_word_spans() -> Callable[[str], list[tuple[int, int]]]:
    from nltk.tokenize import NLTKWordTokenizer

    tok = NLTKWordTokenizer()

    def run(chunk: str) -> list[tuple[int, int]]:
        try:
            return list(tok.span_tokenize(chunk))
        except ValueError:  # alignment failures: fall back to white space
            return [(m.start(), m.end()) for m in re.finditer(r"\S+", chunk)]
    return run


def make_nltk(train_dir: str) -> Callable[[str], Sentences]:
    from nltk.tokenize.punkt import PunktSentenceTokenizer, PunktTrainer

    trainer = PunktTrainer()
    trainer.INCLUDE_ALL_COLLOCS = True
    trainer.train(train_text(train_dir), finalize=True)
    punkt = PunktSentenceTokenizer(trainer.get_params())
    words = nltk_word_spans()

    def run(text: str) -> Sentences:
        out: Sentences = []
        for base, para in paragraphs(text):
            out += spans_from_tokenizer(words, para, base, list(punkt.span_tokenize(para)))
        return out
    return run


def pysbd_spans() -> Callable[[str], list[tuple[int, int]]]:
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def run(para: str) -> list[tuple[int, int]]:
        spans = []
        for span in seg.segment(para):
            s, e = span.start, span.end
            while s < e and para[s].isspace():
                s += 1
            while e > s and para[e - 1].isspace():
                e -= 1
            if s < e:
                spans.append((s, e))
        return spans
    return run


def pipeline(sents: Callable[[str], list[tuple[int, int]]],
             words: Callable[[str], list[tuple[int, int]]]) -> Callable[[str], Sentences]:
    """A sentence splitter, then a word tokenizer on each sentence, paragraph by paragraph."""
    def run(text: str) -> Sentences:
        out: Sentences = []
        for base, para in paragraphs(text):
            out += spans_from_tokenizer(words, para, base, sents(para))
        return out
    return run


def make_pysbd_nltk() -> Callable[[str], Sentences]:
    return pipeline(pysbd_spans(), nltk_word_spans())


def make_syntok() -> Callable[[str], Sentences]:
    import syntok.segmenter as segmenter

    def run(text: str) -> Sentences:
        out: Sentences = []
        for base, para in paragraphs(text):
            for paragraph in segmenter.analyze(para):
                for sentence in paragraph:
                    out.append([(t.value, base + t.offset, base + t.offset + len(t.value)) for t in sentence])
        return out
    return run


def spacy_nlp(sentencizer: bool):  # type: ignore[no-untyped-def]
    import spacy

    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    return nlp


def make_spacy() -> Callable[[str], Sentences]:
    nlp = spacy_nlp(sentencizer=True)

    def run(text: str) -> Sentences:
        out: Sentences = []
        for base, para in paragraphs(text):
            for sent in nlp(para).sents:
                out.append([(t.text, base + t.idx, base + t.idx + len(t.text))
                            for t in sent if not t.is_space])
        return out
    return run


def make_pysbd_spacy() -> Callable[[str], Sentences]:
    sents = pysbd_spans()
    nlp = spacy_nlp(sentencizer=False)

    def words(chunk: str) -> list[tuple[int, int]]:
        return [(t.idx, t.idx + len(t.text)) for t in nlp.make_doc(chunk) if not t.is_space]

    return pipeline(sents, words)


def make_syntok_spacy() -> Callable[[str], Sentences]:
    import syntok.segmenter as segmenter

    nlp = spacy_nlp(sentencizer=False)

    def run(text: str) -> Sentences:
        out: Sentences = []
        for base, para in paragraphs(text):
            for paragraph in segmenter.analyze(para):
                for sentence in paragraph:
                    s = sentence[0].offset
                    e = sentence[-1].offset + len(sentence[-1].value)
                    out.append([(t.text, base + s + t.idx, base + s + t.idx + len(t.text))
                                for t in nlp.make_doc(para[s:e]) if not t.is_space])
        return out
    return run


def make_clparse() -> Callable[[str], Sentences]:
    from clparse.read.text import split_text

    def run(text: str) -> Sentences:
        return [list(zip(s.tokens, s.starts, s.ends)) for s in split_text(text)]
    return run


# ------------------------------------------------------------------------------------------ scoring

def prf(system: set[int], gold: set[int]) -> tuple[float, float, float]:
    hit = len(system & gold)
    p = hit / len(system) if system else 0.0
    r = hit / len(gold) if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def system_tokens(text: str, system: Sentences) -> list[tuple[int, int, str]]:
    """Every system token as (start, end, canonical spelling), ordered by start; a straight quote
    opens or closes by its context (clparse.read.text's rule), for every candidate alike."""
    from clparse.read.text import _opens, ptb_token

    out = []
    for sent in system:
        for t, s, e in sent:
            if t in ('"', "'"):
                t = ptb_token(t, _opens(text, s, e))
            out.append((s, e, canonical(t)))
    return sorted(out)


def score(gold: Gold, system: Sentences) -> dict[str, float]:
    gold_starts = {s[0][1] for s in gold.sentences}
    sys_sents = [s for s in system if s]
    sys_starts = {s[0][1] for s in sys_sents}
    result: dict[str, float] = {}
    result["p"], result["r"], result["f"] = prf(sys_starts, gold_starts)
    inner_gold = gold_starts - gold.paragraph_starts
    inner_sys = sys_starts - gold.paragraph_starts
    result["inner_p"], result["inner_r"], result["inner_f"] = prf(inner_sys, inner_gold)
    # Every system token with its canonical spelling, ordered by start.
    tokens = system_tokens(gold.text, sys_sents)
    sys_spans = {(s[0][1], s[-1][2]) for s in sys_sents}
    starts = [s for s, _, _ in tokens]
    import bisect

    exact = both = 0
    for sentence in gold.sentences:
        lo, hi = sentence[0][1], sentence[-1][2]
        i = bisect.bisect_left(starts, lo)
        if i > 0 and tokens[i - 1][1] > lo:  # a token straddles the start
            continue
        j = bisect.bisect_left(starts, hi)
        mine = tokens[i:j]
        if [(t, s, e) for s, e, t in mine] == sentence:
            exact += 1
            if (lo, hi) in sys_spans:
                both += 1
    result["exact"] = exact / len(gold.sentences)
    result["both"] = both / len(gold.sentences)
    return result


def report_mismatches(gold: Gold, system: Sentences, limit: int) -> None:
    tokens = system_tokens(gold.text, system)
    starts = [s for s, _, _ in tokens]
    import bisect

    shown = 0
    for sentence in gold.sentences:
        lo, hi = sentence[0][1], sentence[-1][2]
        i = bisect.bisect_left(starts, lo)
        j = bisect.bisect_left(starts, hi)
        mine = [(t, s, e) for s, e, t in tokens[i:j]]
        if mine != sentence:
            print("  gold:", " ".join(t for t, _, _ in sentence))
            print("  sys: ", " ".join(t for t, _, _ in mine))
            shown += 1
            if shown >= limit:
                return


def report_boundaries(gold: Gold, system: Sentences, limit: int) -> None:
    gold_starts = {s[0][1] for s in gold.sentences}
    sys_starts = {s[0][1] for s in system if s}
    for kind, wrong in (("false split", sys_starts - gold_starts), ("missed", gold_starts - sys_starts)):
        for position in sorted(wrong)[:limit]:
            context = gold.text[max(0, position - 50):position] + " || " + gold.text[position:position + 30]
            print(f"  {kind}: {context!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", default="/work/shared/data/gum/dev")
    ap.add_argument("--train", default="/work/shared/data/gum/train", help="Punkt's training text")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--one-paragraph", action="store_true")
    ap.add_argument("--only", nargs="*", help="candidate names to run")
    ap.add_argument("--show", type=int, default=0, help="print this many token mismatches per candidate")
    args = ap.parse_args()

    golds = [("paragraphs", build_gold(args.dev, one_paragraph=False))]
    if args.one_paragraph:
        golds.append(("one paragraph", build_gold(args.dev, one_paragraph=True)))
    n_tokens = sum(len(s) for s in golds[0][1].sentences)
    print(f"GUM dev: {len(golds[0][1].sentences)} sentences, {n_tokens} tokens, "
          f"{len(golds[0][1].text)} characters")
    candidates: list[tuple[str, Callable[[], Callable[[str], Sentences]]]] = [
        ("nltk punkt(GUM train)+NLTKWordTokenizer", lambda: make_nltk(args.train)),
        ("pysbd+NLTKWordTokenizer", make_pysbd_nltk),
        ("syntok", make_syntok),
        ("spacy blank en+sentencizer", make_spacy),
        ("pysbd+spacy tokenizer", make_pysbd_spacy),
        ("syntok segmenter+spacy tokenizer", make_syntok_spacy),
        ("clparse split_text", make_clparse),
    ]
    header = (f"{'candidate':42} {'text':13} {'P':>6} {'R':>6} {'F1':>6} {'innerF1':>7} {'tok exact':>9} "
              f"{'both':>6} {'tokens/s':>9}")
    print(header)
    for name, make in candidates:
        if args.only and not any(o in name for o in args.only):
            continue
        try:
            run = make()
        except ImportError as error:
            print(f"{name:42} skipped: {error}")
            continue
        for label, gold in golds:
            best = float("inf")
            system: Sentences = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                system = run(gold.text)
                best = min(best, time.perf_counter() - t0)
            r = score(gold, system)
            print(f"{name:42} {label:13} {100 * r['p']:6.2f} {100 * r['r']:6.2f} {100 * r['f']:6.2f} "
                  f"{100 * r['inner_f']:7.2f} {100 * r['exact']:9.2f} {100 * r['both']:6.2f} "
                  f"{n_tokens / best:9.0f}", flush=True)
            if args.show:
                report_mismatches(gold, system, args.show)
                report_boundaries(gold, system, args.show)


if __name__ == "__main__":
    main()
