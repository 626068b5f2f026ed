"""``clparse combine`` and parsing with a combination, as library calls.

:func:`fit_members` parses the dev trees (their gold tags) with every clparse member into its K best
trees, reads the other parsers' trees of a ``ptb`` member, fits λ, ρ and τ (:mod:`clparse.combine.fit`)
and stores the combination in a database of its own (:mod:`clparse.store.combinations`).
:class:`CombinedParser` parses new sentences with a stored combination: each clparse member's K-best
list, the votes, the combined tree; it offers what :class:`~clparse.parser.Parser` offers to ``parse``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

import clparse
from clparse.combine.fit import Combination, dev_sentence, fit
from clparse.combine.select import choose, combined_tree
from clparse.combine.votes import Scored, collect
from clparse.errors import ConfigurationError, NotCalibratedError, ParameterError
from clparse.evaluate.evalb import evaluate
from clparse.evaluate.files import read_parses
from clparse.output import ParseResult
from clparse.parser import DEFAULT_AGGREGATOR, Parser, Sentence, SourceSentence, pick_parse
from clparse.preprocess import sentence_length
from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG
from clparse.progress import Progress
from clparse.read import Tree, read_trees
from clparse.search.aggregate import AGGREGATORS
from clparse.search.brackets import Brackets
from clparse.store import combinations
from clparse.store.database import Database, init_database
from clparse.store.runs import Runs

NO_SCORE = -1e9  # a flat fallback tree's score: its share of a list with any real tree is nil


@dataclass(frozen=True)
class MemberSpec:
    kind: str  # clparse or ptb
    source: Path
    theta: str | None = None  # clparse: "best" or a number

    @property
    def name(self) -> str:
        return f"{self.source}@{self.theta}" if self.kind == "clparse" else str(self.source)


@dataclass
class FitReport:
    combination: combinations.StoredCombination
    member_f1: list[float]
    sentences: int
    seconds: float


def member_lists(parser: Parser, gold: Sequence[Tree], label: str, progress: bool) -> list[list[Scored]]:
    """One k-best list per gold tree: the member's parses of its words with their gold tags."""
    lists: list[list[Scored]] = []
    with Progress(label, len(gold), "sentences", enabled=None if progress else False) as bar:
        for tree in gold:
            result = parser.parse_tagged(tree.tagged_words())
            lists.append(scored(result))
            bar.update()
    return lists


def parsed_theta(theta: str | None) -> float | str:
    """A member's Θ̂ as stored (text: a number, or best; None means best) as Parser.from_db takes it."""
    return "best" if theta in (None, "best") else float(theta)  # type: ignore[arg-type]


def open_member(source: Path, theta: str | None, hint: str, aggregator: str, **options: Any) -> Parser:
    """A clparse member's parser at its Θ̂, ranking and scoring its k-best lists by ``aggregator`` (``best``:
    the Θ̂ calibrated with it). An uncalibrated member at ``best`` says how to name a Θ̂ for a combination
    (``hint``) instead of the parser's own advice, ``--theta X``, which combinations refuse."""
    from clparse.store import reading

    with Database(source, readonly=True).raw() as connection:  # a combination: not "not calibrated yet"
        combined = reading.combination_error(connection, source)
    if combined is not None:
        raise combined
    try:
        return Parser.from_db(source, theta=parsed_theta(theta), **{**options, "aggregator": aggregator})
    except NotCalibratedError:
        raise NotCalibratedError(source, f"{source}: not calibrated yet; run `clparse calibrate --db "
                                          f"{source}`, {hint}") from None


def scored(result: ParseResult) -> list[Scored]:
    return [(t.tree, t.score if t.score is not None else NO_SCORE) for t in result.trees]


def _words(tree: Tree) -> list[str]:
    return [w for w, t in tree.tagged_words() if t != EMPTY_ELEMENT_TAG]


def ptb_lists(source: Path, gold: Sequence[Tree], kept: Sequence[int] | None = None,
              total: int | None = None) -> list[list[Scored]]:
    """Another parser's trees of the dev sentences, one per gold tree and with its words, as one-tree
    lists; anything else is one error naming the file and tree (votes of other sentences would be
    counted silently, or fail deep in the vote count). ``kept``: the positions of ``gold`` among all
    ``total`` dev trees (``--max-words``), so that a file of parses of every dev sentence serves too. A
    failed parse (``()``, ``(ROOT)``, or ``(())`` as the Berkeley parser writes it: what eval reads as one)
    is an empty list: no votes."""
    # "()" was refused as "empty tree '()'": a parser's failures stopped its file from being a member
    trees = list(read_parses(source))
    if kept is not None and total is not None and len(trees) == total != len(gold):
        trees = [trees[i] for i in kept]  # the parses of every dev sentence: those of the kept ones
    if len(trees) != len(gold):
        among = f" (of {total} in the --dev files)" if total is not None and total != len(gold) else ""
        raise ConfigurationError(f"{source}: {len(trees)} trees for {len(gold)} dev sentences{among}; give "
                                 "one parse per dev sentence, in order")
    for number, (tree, reference) in enumerate(zip(trees, gold), 1):
        mine, theirs = _words(tree), _words(reference)
        if mine != theirs and not _failed(tree):
            at = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b),
                      min(len(mine), len(theirs)))
            raise ConfigurationError(
                f"{source}: tree {number} is not a parse of dev sentence {number}: {len(mine)} words against "
                f"{len(theirs)}, first difference at word {at + 1} ({_shown(mine, at)} against "
                f"{_shown(theirs, at)}); one parse per dev sentence, in order, over its words")
    return [[] if _failed(tree) else [(tree, 0.0)] for tree in trees]


def _flat(tree: Tree) -> Tree:
    """``tree``'s words under a ROOT alone: a parse with no bracket EVALB counts."""
    return Tree("ROOT", list(tree.preterminals()))


def _failed(tree: Tree) -> bool:
    """A failed parse: ``()`` or a bare ``(ROOT)``."""
    return not tree.is_preterminal and not tree.children


def _shown(words: list[str], at: int) -> str:
    return repr(words[at]) if at < len(words) else "the end"


def _theta(value: float | dict[str, float]) -> str:
    return "per label" if isinstance(value, dict) else f"{value:g}"


def fingerprint(parser: Parser) -> dict[str, Any]:
    """What a clparse member parsed the dev set with: its run, the Θ̂ it rebuilt at ("best" resolved) and the
    model's size. A combination's λ, ρ and τ fit this model; another one is refused at parse time."""
    assert parser.source is not None
    found = Runs(parser.source).existing()
    assert found is not None  # the parser was rebuilt from this run
    model = parser.model
    return {"run": found[1], "splits": int(model.splits),
            "theta": dict(sorted(model.label_thetas.items())) if model.label_thetas else float(model.theta)}


def fit_members(members: Sequence[MemberSpec], dev_files: Sequence[str | Path], out: str | Path, *,
                k: int = 10, beam: int = 1000, aggregator: str = DEFAULT_AGGREGATOR, max_words: int = 0,
                max_evaluations: int = 400, progress: bool = True,
                echo: Callable[[str], object] = lambda _: None) -> FitReport:
    """Fit a combination of ``members`` on the dev trees and store it in ``out`` (a new database, or one
    that holds only combinations). ``aggregator``: what every clparse member ranks and scores its k-best
    lists by (one τ is fitted to all their scores)."""
    if not members:
        raise ConfigurationError("give at least one member")
    if k < 1 or beam < 1 or max_words < 0:
        raise ConfigurationError("k and beam must be at least 1, max_words at least 0")
    if aggregator not in AGGREGATORS:
        raise ConfigurationError(f"unknown aggregator {aggregator!r}; choose {' or '.join(AGGREGATORS)}")
    out = Path(out)
    if out.exists() and out.stat().st_size > 0 and combinations.has_run(out):
        raise ConfigurationError(f"{out} holds a training run: store the combination in a database of its "
                                 "own")
    _check_writable(out)
    started = time.monotonic()
    every = [t for f in dev_files for t in read_trees(f)]
    kept = [i for i, t in enumerate(every) if not max_words or sentence_length(t) <= max_words]
    gold = [every[i] for i in kept]
    if not gold:
        raise ConfigurationError("no dev sentences (check --dev and --max-words)")
    # the other parsers' files first: a wrong one is told before the members parse for minutes
    theirs = {number: ptb_lists(member.source, gold, kept, len(every))
              for number, member in enumerate(members, 1) if member.kind == "ptb"}
    lists: list[list[list[Scored]]] = []
    fitted_with: list[dict[str, Any] | None] = []
    # every member opened before any parses: a last member not calibrated, or at a Θ̂ it is not trained to,
    # was told only after the others had parsed the dev set
    parsers = {number: open_member(member.source, member.theta,
                                   f"or name a Θ̂: --member {member.source}@THETA", aggregator,
                                   beam=beam, kbest=k)
               for number, member in enumerate(members, 1) if member.kind != "ptb"}
    for number, member in enumerate(members, 1):
        if member.kind == "ptb":
            lists.append(theirs[number])
            fitted_with.append(None)
            continue
        parser = parsers[number]
        fitted_with.append(fingerprint(parser))
        lists.append(member_lists(parser, gold, f"member {number}/{len(members)}", progress))
    # a member's failed parse scores as a flat tree, no bracket, as the fit counts it (EVALB would skip it: a
    # member failing on every hard sentence would show the F1 of the easy ones)
    singles = [evaluate(gold, [sentence[0][0] if sentence else _flat(reference)
                               for sentence, reference in zip(member, gold)]).all.f1 for member in lists]
    echo("members' dev F1: " + ", ".join(f"{f:.2f}" for f in singles) + f"; fitting on {len(gold)} sentences")
    sentences = [dev_sentence(collect([member[s] for member in lists]), g) for s, g in enumerate(gold)]
    fitted = fit(sentences, len(members), max_evaluations=max_evaluations)
    c = fitted.combination
    stored = combinations.StoredCombination(
        k, beam, c.threshold, c.temperature, fitted.f1, len(gold),
        {"files": [str(Path(f).resolve()) for f in dev_files], "max_words": max_words, "tags": "gold",
         "aggregator": aggregator, "members": fitted_with},
        fitted.evaluations, time.monotonic() - started, clparse.__version__,
        tuple(combinations.StoredMember(m.kind, str(m.source.resolve()),
                                        m.theta if m.kind == "clparse" else None, w, f)
              for m, w, f in zip(members, c.member_weights, singles)))
    init_database(out)
    combinations.write(out, stored)
    return FitReport(stored, singles, len(gold), time.monotonic() - started)


def _check_writable(out: Path) -> None:
    """Refuse, before the members parse, an ``out`` that cannot be written where it is: the fit was lost
    after minutes with "the database: database error: ... .creating" (a scratch file's name)."""
    import tempfile

    if out.is_dir():
        raise ConfigurationError(f"{out}: is a directory; give the combination database's file name")
    where = out.absolute().parent
    while not where.exists() and where != where.parent:  # the directories it would create
        where = where.parent
    try:
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as exc:
        raise ConfigurationError(f"{out}: cannot write a database in {where} ({exc.strerror}); nothing was "
                                 "fitted") from None


class CombinedParser:
    """Parses with a stored combination: what :class:`~clparse.parser.Parser` offers ``parse``."""

    def __init__(self, stored: combinations.StoredCombination, members: list[Parser]) -> None:
        self.stored = stored
        self.members = members
        self.combination = Combination(tuple(m.weight for m in stored.members), stored.threshold,
                                       stored.temperature)
        self.lead = int(np.argmax(self.combination.member_weights))  # tags and tokens follow this member
        self.source: Path | None = None

    @classmethod
    def from_db(cls, db: str | Path, **options: Any) -> CombinedParser:
        stored = combinations.latest(db)
        if stored is None:
            raise ConfigurationError(f"{db}: no combination stored")
        foreign = [m.source for m in stored.members if m.kind != "clparse"]
        if foreign:
            raise ConfigurationError(f"{db}: member {foreign[0]} is another parser's trees (a file): such a "
                                     "combination can be fitted and evaluated, not parse new text")
        asked = options.pop("beam", None)
        if asked is not None and asked != stored.beam:  # λ, ρ and τ were fitted to lists at the stored beam
            raise ParameterError("beam", f"the combination was fitted with its members at beam "
                                         f"{stored.beam}: leave it out (or fit again with `clparse combine "
                                         "--beam`)")
        asked = options.pop("aggregator", None)
        if asked is not None and asked != stored.aggregator:  # τ was fitted to the stored aggregator's scores
            raise ParameterError("aggregator", f"the combination was fitted with its members' "
                                               f"{stored.aggregator} scores: leave it out or give "
                                               f"{stored.aggregator} (or fit again with `clparse combine "
                                               "--aggregator`)")
        options = {**options, "beam": stored.beam, "kbest": stored.k}
        missing = next((m.source for m in stored.members if not Path(m.source).exists()), None)
        if missing is not None:  # said as a run to make with `clparse prepare --db MEMBER`
            raise ConfigurationError(f"{db}: its member {missing} is not there (moved or deleted?): a "
                                     "combination names its members' databases by path; put it back, or fit "
                                     "the combination again with `clparse combine`")
        members = [open_member(Path(m.source), m.theta, "or fit the combination again with a Θ̂ named: "
                               f"--member {m.source}@THETA", stored.aggregator, **options)
                   for m in stored.members]
        fitted_with = stored.dev.get("members")  # absent in combinations stored before it was kept
        for member, parser_of, then in zip(stored.members, members, fitted_with or []):
            now = fingerprint(parser_of)
            if then is not None and now != then:
                changed = next(key for key in ("run", "theta", "splits") if now.get(key) != then.get(key))
                what = {"run": "it holds another training run",
                        "theta": f"Θ̂ {member.theta} is now {_theta(now['theta'])}, "
                                 f"was {_theta(then['theta'])}",
                        "splits": f"its model at Θ̂ has {now['splits']} splits, had {then['splits']}"}[changed]
                raise ConfigurationError(f"{db}: member {member.source} changed since the combination was "
                                         f"fitted ({what}): fit it again with `clparse combine`")
        parser = cls(stored, members)
        parser.source = Path(os.path.abspath(db))  # as Parser.from_db's: it stays right after os.chdir
        return parser

    @property
    def tagger(self) -> Any:
        return self.members[self.lead].tagger

    @property
    def options(self) -> Any:
        return self.members[self.lead].options

    def tag(self, sentence: Sentence) -> list[tuple[str, str]]:
        return self.members[self.lead].tag(sentence)

    def parse(self, sentence: Sentence, brackets: Brackets | None = None) -> ParseResult:
        """Untagged input is tagged as the lead member would parse it alone: with ``tag_alternatives`` N > 0
        the lead also parses up to N other taggings and keeps one, by its tag chooser or the search's own
        rule (:func:`~clparse.parser.pick_parse`); every other member then parses the tagging it kept, and
        the K-best lists are combined. Given tags are parsed as they are."""
        # the lead's own code path (Parser.tagging_parses), so that it keeps what it would keep alone
        lead = self.members[self.lead]
        options = lead.tagged_parses(sentence, brackets)
        parses = [(result, certainty) for _, result, certainty in options]
        picked = 0 if len(options) == 1 else pick_parse(parses, lead.active_chooser, lead.options.aggregator)
        tagged, lead_result, _ = options[picked]
        # running text keeps its tokens' offsets and characters, as a single parser's parse does
        source = sentence if isinstance(sentence, SourceSentence) else None
        return self._combined(tagged, source, brackets, lead_result)

    def parse_tagged(self, tagged: Sequence[tuple[str, str]], source: Any = None,
                     brackets: Brackets | None = None) -> ParseResult:
        """Every member's K-best list of the sentence (each keeping ``brackets``), combined."""
        return self._combined(tagged, source, brackets, None)

    def _combined(self, tagged: Sequence[tuple[str, str]], source: Any, brackets: Brackets | None,
                  lead_result: ParseResult | None) -> ParseResult:
        """:meth:`parse_tagged`, reusing the lead member's parse of ``tagged`` where :meth:`parse` made it."""
        results = [lead_result if index == self.lead and lead_result is not None
                   else member.parse_tagged(tagged, source, brackets)
                   for index, member in enumerate(self.members)]
        lead = results[self.lead]
        if not lead.tagged or all(r.fallback is not None for r in results):
            # its flat tree says why (warned and counted), as a single parser's does; one tree, as always
            return replace(lead, kbest=1)
        votes = collect([scored(result) for result in results])
        omega = self.combination.omega(votes)
        chosen = choose(votes, omega, self.combination.threshold)
        tree = combined_tree(votes, chosen, omega, np.array(self.combination.member_weights))
        completion = next((r.completion for r in results if r.completion is not None), None)
        return ParseResult(tree, lead.tagged, None, sum(r.pops for r in results), completion,
                           offsets=lead.offsets, text=lead.text)


def open_combined(db: str | Path, **options: Any) -> CombinedParser:
    """The combination stored in ``db`` (read-only), ready to parse."""
    Database(db, readonly=True)  # refuses a foreign, damaged or newer file in one line
    return CombinedParser.from_db(db, **options)
