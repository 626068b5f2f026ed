"""A treebank PCFG baseline: horizontal Markov order 1, gold tags, exact Viterbi CKY in numpy.

Usage: python benchmarks/pcfg.py [--max-words 15] [--keep-unaries] [--write-dev PARSES.ptb]
Trains on GUM train (<= 15 words, preprocessed exactly as clparse does), parses the gold tag
sequences of GUM dev (<= 15 words) and prints (never asserts) EVALB F1 against the *preprocessed*
dev gold trees and parse speed (sentences/s and words/s on one core, CKY and debinarization timed,
training and scoring not). ``--write-dev`` also writes the PCFG's parse of every GUM dev tree whose length
(``clparse.preprocess.sentence_length``) is at most ``--max-words``, in sorted file order, over *every*
token: the sentence goes through clparse's preprocessing exactly as ``clparse parse --input-format ptb``
takes it (the gold tags of a flat tree), and the tokens it sets aside are put back the parser's way. That
is the form ``benchmarks/combine.py --ptb-member`` and ``clparse combine --ptb-member`` read.

The grammar is NLTK's: trees are binarized with ``chomsky_normal_form(horzMarkov=1)`` (right
factored, no parent annotation) and the rules counted by ``nltk.induce_pcfg``. Tags are the
terminals (a preterminal is its tag), so the lexical level is ``TAG -> TAG`` with probability 1.
By default unary chains between phrases are first joined into labels such as ``S+VP`` (NLTK's
``collapse_unary(collapsePOS=False, collapseRoot=False)``) and split again after parsing; with
``--keep-unaries`` they stay unary rules. Either way the remaining unary rules (``ROOT -> S``,
``NP -> NN`` ...) are handled exactly by their max-product closure, applied once per chart cell.
"""

from __future__ import annotations

import argparse
import glob
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nltk
import numpy as np

from clparse.evaluate import EvalbParams, evaluate
from clparse.preprocess import PreprocessConfig, Preprocessed, preprocess_treebank
from clparse.read import Tree, read_trees

GUM = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum"
NEG = -np.inf


@dataclass
class Grammar:
    """A PCFG over symbol ids, laid out for the vectorized CKY."""

    symbols: list[str]
    index: dict[str, int]
    root: int
    tags: frozenset[str]  # symbols that are preterminals (terminals of the tag-level grammar)
    # binary rules, sorted by parent: parent -> left right with log probability
    parent: np.ndarray
    left: np.ndarray
    right: np.ndarray
    logp: np.ndarray
    # unary closure over the symbols that take part in unary rules: closure[a, b] is the best log
    # probability of a chain a =>+ b (0 on the diagonal: no chain); step[a, b] is its first hop
    unary: np.ndarray
    closure: np.ndarray
    step: np.ndarray

    @property
    def size(self) -> int:
        return len(self.symbols)


def to_nltk(tree: Tree) -> nltk.Tree:
    """The tree with each tag as its own word (the grammar's terminals are the tags)."""
    if tree.is_preterminal:
        return nltk.Tree(tree.label, [tree.label])
    return nltk.Tree(tree.label, [to_nltk(child) for child in tree.children])


def binarize(tree: Tree, collapse_unaries: bool = True, parent: bool = False) -> nltk.Tree:
    """Horizontal Markov order 1 binarization (NLTK's), optionally with phrase unary chains joined and with
    parent annotation on phrase labels (``NP^<S>``, vertical Markov order 2; tags stay as they are)."""
    result = to_nltk(tree)
    if collapse_unaries:
        result.collapse_unary(collapsePOS=False, collapseRoot=False)
    result.chomsky_normal_form(horzMarkov=1, vertMarkov=1 if parent else 0)
    return result


def train_pcfg(trees: Iterable[Tree], collapse_unaries: bool = True, parent: bool = False) -> Grammar:
    """Relative-frequency PCFG from preprocessed trees (ROOT on top) via ``nltk.induce_pcfg``; ``parent``:
    parent annotation on phrase labels."""
    productions: list[nltk.Production] = []
    for tree in trees:
        productions += binarize(tree, collapse_unaries, parent).productions()
    pcfg = nltk.induce_pcfg(nltk.Nonterminal("ROOT"), productions)
    binary: list[tuple[str, str, str, float]] = []
    unary: list[tuple[str, str, float]] = []
    tags: set[str] = set()
    for rule in pcfg.productions():
        rhs = rule.rhs()
        lhs = str(rule.lhs())
        if len(rhs) == 1 and isinstance(rhs[0], str):
            tags.add(lhs)  # TAG -> 'TAG': probability 1, nothing to score
        elif len(rhs) == 1:
            unary.append((lhs, str(rhs[0]), float(rule.logprob())))
        else:
            binary.append((lhs, str(rhs[0]), str(rhs[1]), float(rule.logprob())))
    names = sorted({s for r in binary for s in r[:3]} | {s for r in unary for s in r[:2]} | tags | {"ROOT"})
    index = {name: i for i, name in enumerate(names)}
    binary.sort(key=lambda r: index[r[0]])
    columns = [np.array([index[r[k]] for r in binary], dtype=np.int64) for k in range(3)]
    # log2 from NLTK; natural log keeps figures familiar (the argmax is the same)
    logp = np.array([r[3] for r in binary]) * np.log(2.0)
    members, closure, step = unary_closure(unary, index)
    return Grammar(names, index, index["ROOT"], frozenset(tags), columns[0], columns[1], columns[2], logp,
                   members, closure, step)


def unary_closure(rules: Sequence[tuple[str, str, float]],
                  index: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best unary chains by Floyd-Warshall in max-plus (log probabilities <= 0: no gaining cycles)."""
    members = np.array(sorted({index[a] for a, _, _ in rules} | {index[b] for _, b, _ in rules}),
                       dtype=np.int64)
    where = {int(s): i for i, s in enumerate(members)}
    m = len(members)
    closure = np.full((m, m), NEG)
    step = np.tile(np.arange(m), (m, 1))
    for a, b, logprob in rules:
        i, j = where[index[a]], where[index[b]]
        if i != j:
            closure[i, j] = max(closure[i, j], logprob * np.log(2.0))
    np.fill_diagonal(closure, 0.0)
    for k in range(m):
        through = closure[:, k, None] + closure[None, k, :]
        better = through > closure
        closure = np.where(better, through, closure)
        step = np.where(better, step[:, k, None], step)
    return members, closure, step


def cky_parse(grammar: Grammar, tags: Sequence[str], words: Sequence[str] | None = None) -> Tree | None:
    """Viterbi parse of a tag sequence, debinarized, with ``words`` (default: the tags) at the leaves.

    ``None`` if the grammar derives no tree (an unseen tag, or no ROOT over the whole sentence).
    """
    n = len(tags)
    if n == 0 or any(t not in grammar.tags for t in tags):
        return None
    bottom, top = chart(grammar, [{grammar.index[tag]: 0.0} for tag in tags])
    if top[0, n, grammar.root] == NEG:
        return None
    leaves = list(words) if words is not None else list(tags)
    return debinarize(backtrace(grammar, bottom, top, 0, n, grammar.root, leaves))


def chart(grammar: Grammar, candidates: Sequence[dict[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Viterbi CKY over a lattice: ``candidates[i]`` maps each tag symbol word i may take to its score (one
    tag scoring 0 for a tagged sentence). Returns (bottom, top): the best score of every symbol over every
    span before and after its unary chains; ``top[0, n, root]`` is the best parse's, tag scores included."""
    n = len(candidates)
    size, unary, closure = grammar.size, grammar.unary, grammar.closure
    bottom = np.full((n + 1, n + 1, size), NEG)
    top = np.full((n + 1, n + 1, size), NEG)
    for i, scores in enumerate(candidates):
        for symbol, score in scores.items():
            bottom[i, i + 1, symbol] = score
    for length in range(1, n + 1):
        starts = np.arange(n - length + 1)
        ends = starts + length
        if length > 1:
            splits = starts[:, None] + np.arange(1, length)[None, :]
            left = top[starts[:, None], splits]  # (cells, splits, symbols)
            right = top[splits, ends[:, None]]
            usable = ((left.max(axis=(0, 1)) > NEG)[grammar.left]
                      & (right.max(axis=(0, 1)) > NEG)[grammar.right])
            if usable.any():
                chosen = np.flatnonzero(usable)
                scores_ = (left[:, :, grammar.left[chosen]] + right[:, :, grammar.right[chosen]]).max(axis=1)
                scores_ += grammar.logp[chosen]
                parents = grammar.parent[chosen]
                first = np.flatnonzero(np.diff(parents, prepend=-1))
                bottom[starts[:, None], ends[:, None], parents[first][None, :]] = np.maximum.reduceat(
                    scores_, first, axis=1)
        cells = bottom[starts, ends]  # (cells, symbols)
        closed = cells.copy()
        active = np.flatnonzero(cells[:, unary].max(axis=0) > NEG)  # unary children present in some cell
        if len(active):
            closed[:, unary] = (closure[None, :, active] + cells[:, None, unary[active]]).max(axis=2)
        top[starts, ends] = closed
    return bottom, top


def backtrace(grammar: Grammar, bottom: np.ndarray, top: np.ndarray, i: int, j: int, symbol: int,
               words: list[str]) -> Tree:
    """Rebuild the best tree for ``symbol`` over (i, j) from the chart (argmaxes recomputed, not stored)."""
    chain = [symbol]
    position = np.flatnonzero(grammar.unary == symbol)
    if len(position):  # the unary chain from symbol down to the best bottom-layer symbol
        a = int(position[0])
        b = int(np.argmax(grammar.closure[a] + bottom[i, j, grammar.unary]))
        while a != b:
            a = int(grammar.step[a, b])
            chain.append(int(grammar.unary[a]))
    below = chain[-1]
    if j - i == 1:
        node = Tree.preterminal(grammar.symbols[below], words[i])
    else:
        rules = np.flatnonzero(grammar.parent == below)
        ks = np.arange(i + 1, j)
        scores = (grammar.logp[rules][None, :] + top[i, ks][:, grammar.left[rules]]
                  + top[ks, j][:, grammar.right[rules]])
        k, r = np.unravel_index(int(np.argmax(scores)), scores.shape)
        rule, split = int(rules[r]), int(ks[k])
        node = Tree(grammar.symbols[below], [
            backtrace(grammar, bottom, top, i, split, int(grammar.left[rule]), words),
            backtrace(grammar, bottom, top, split, j, int(grammar.right[rule]), words)])
    for label in reversed(chain[:-1]):
        node = Tree(grammar.symbols[label], [node])
    return node


def debinarize(tree: Tree) -> Tree:
    """Splice out ``X|<...>`` nodes and split joined unary labels ``A+B`` back into chains."""
    if tree.is_preterminal:
        return Tree.preterminal(tree.label, tree.word or "")
    children: list[Tree] = []
    for child in tree.children:
        child = debinarize(child)
        children += child.children if "|<" in child.label else [child]
    labels = tree.label.split("+") if "|<" not in tree.label else [tree.label]
    node = Tree(labels[-1], children)
    for label in reversed(labels[:-1]):
        node = Tree(label, [node])
    return node


def flat(tags: Sequence[str], words: Sequence[str]) -> Tree:
    """The fallback when the grammar has no parse: every token directly under ROOT."""
    return Tree("ROOT", [Tree.preterminal(t, w) for t, w in zip(tags, words)])


def parse_timed(grammar: Grammar, trees: Sequence[Tree]) -> tuple[list[Tree], int, float]:
    """(parses, sentences without a parse (given flat trees), seconds) for the preprocessed ``trees``.

    One warm-up parse first, then every sentence timed together (CKY + debinarization).
    """
    cky_parse(grammar, trees[0].tags())
    out: list[Tree] = []
    failures = 0
    start = time.perf_counter()
    for gold in trees:
        tagged = gold.tagged_words()
        tags, words = [t for _, t in tagged], [w for w, _ in tagged]
        tree = cky_parse(grammar, tags, words)
        failures += tree is None
        out.append(tree if tree is not None else flat(tags, words))
    return out, failures, time.perf_counter() - start


def load_gum(split: str, max_words: int | None = 15) -> list[Preprocessed]:
    """GUM ``split`` (train or dev), preprocessed and length-filtered as clparse does."""
    config = PreprocessConfig(max_words=max_words)
    return [p for path in sorted(glob.glob(str(GUM / split / "*.ptb")))
            for p in preprocess_treebank(read_trees(path), config)]


def write_dev(grammar: Grammar, path: Path, max_words: int) -> int:
    """Full-token parses of the raw GUM dev trees of at most ``max_words`` words (see the docstring)."""
    from clparse.preprocess import sentence_length
    from clparse.preprocess.pipeline import preprocess_tree
    from clparse.read.ptb import format_tree
    from clparse.search.restore import flat_tree, restore_tokens

    config = PreprocessConfig(max_words=None)
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for file in sorted(glob.glob(str(GUM / "dev" / "*.ptb"))):
            for raw in read_trees(file):
                if max_words and sentence_length(raw) > max_words:  # 0: every length
                    continue
                tagged = [(w, t) for w, t in raw.tagged_words() if t != "-NONE-"]
                prepared = preprocess_tree(Tree("S", [Tree.preterminal(t, w) for w, t in tagged]), config)
                tree = None
                if prepared is not None:
                    removed = {token.index for token in prepared.removed}
                    kept = [i for i in range(len(tagged)) if i not in removed]
                    parsed = cky_parse(grammar, [tagged[i][1] for i in kept], [tagged[i][0] for i in kept])
                    if parsed is not None:
                        tree = restore_tokens(parsed, kept, prepared.removed)
                out.write(format_tree(tree if tree is not None else flat_tree(tagged)) + "\n")
                written += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-words", type=int, default=15)
    parser.add_argument("--keep-unaries", action="store_true", help="do not join unary chains (S+VP)")
    parser.add_argument("--write-dev", type=Path, help="write full-token parses of GUM dev here")
    args = parser.parse_args()
    limit = args.max_words or None  # 0: every length
    train, dev = load_gum("train", limit), load_gum("dev", limit)
    start = time.perf_counter()
    grammar = train_pcfg((p.tree for p in train), not args.keep_unaries)
    train_seconds = time.perf_counter() - start
    binary, unary = len(grammar.parent), int((grammar.closure[grammar.closure < 0] > NEG).sum())
    print(f"grammar: {len(train):,} training trees, {grammar.size:,} symbols, {binary:,} binary rules, "
          f"{unary:,} unary chains (trained in {train_seconds:.1f} s)")
    test, failures, seconds = parse_timed(grammar, [p.tree for p in dev])
    words_total = sum(len(p.tree) for p in dev)
    scores = evaluate([p.tree for p in dev], test, EvalbParams()).all
    print(f"GUM dev (<= {args.max_words} words): {len(dev):,} sentences, {words_total:,} words "
          "(preprocessed)")
    print(f"F1 {scores.f1:.2f}  recall {scores.recall:.2f}  precision {scores.precision:.2f}  "
          f"(EVALB against the preprocessed gold trees; {failures} without a parse, scored flat)")
    print(f"{seconds:.2f} s   {len(dev) / seconds:,.1f} sentences/s   {words_total / seconds:,.0f} words/s  "
          f"(one core, CKY + debinarization)")
    if args.write_dev is not None:
        written = write_dev(grammar, args.write_dev, args.max_words)
        print(f"{written:,} full-token dev parses in {args.write_dev}")


if __name__ == "__main__":
    main()
