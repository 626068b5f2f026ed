"""The POS tagger of a run: trained from the training sentences, kept as data in the database.

``kind`` ``crf`` (the default since it measured best: 96.18 % on GUM dev against 95.02 %, and
96.96 % with feature set 4, docs/tagger.md) keeps CRFsuite's model bytes, with a feature set 2 to 4
model's lexicon and a set 4 model's word clusters, in a blob; ``perceptron`` keeps NLTK's weights as JSON
text. Neither is a pickle: loading a stored tagger runs no code from the database.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from clparse.errors import ConfigurationError
from clparse.read import read_trees
from clparse.read.ptb import parse_tree
from clparse.store.database import Database
from clparse.store.runs import Runs
from clparse.store.taggers import StoredNet, Taggers
from clparse.tag.jackknife import NONE_TAG, TaggerSpec
from clparse.tag.net_train import EpochResult, NetSettings, NetTraining

__all__ = ["NONE_TAG", "PosTagger", "ensure_tagger", "load_tagger", "tagged_words"]


class PosTagger(Protocol):
    """What the parser and calibration use of a tagger (both kinds have it)."""

    def tag(self, words: Sequence[str]) -> list[str]: ...

    def accuracy(self, sentences: Sequence[Sequence[tuple[str, str]]]) -> float: ...


def tagged_words(gold_tree: str) -> list[tuple[str, str]]:
    """A stored gold tree's tokens as the parser receives them (empty elements are not tokens)."""
    return [(w, t) for w, t in parse_tree(gold_tree).tagged_words() if t != NONE_TAG]


def file_sentences(paths: Sequence[str | Path]) -> list[list[tuple[str, str]]]:
    """Every tree of the treebank files ``paths`` as the parser receives it (empty elements are not
    tokens), in order: what a tagger learns from (the length filter is for the parser)."""
    return [[(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
            for path in paths for tree in read_trees(path)]


def ensure_tagger(db: Database | str | Path, train_files: Sequence[str | Path] = (),
                  train_sentences: Sequence[Sequence[tuple[str, str]]] | None = None,
                  spec: TaggerSpec = TaggerSpec(),
                  on_iteration: Callable[[int], object] | None = None) -> tuple[bool, float | None]:
    """Train and store the run's tagger unless it is there: (trained now, dev accuracy).

    A tagger sees whole sentences of any length, so it learns from every tree of ``train_files``
    (the length filter is for the parser), or from ``train_sentences`` when the caller has read them
    already; without either, from the stored training sentences. Accuracy is measured on the stored
    dev sentences.
    """
    database = Database.of(db)
    taggers, runs = Taggers(database), Runs(database)
    runs.run()  # refuses a database without a prepared run
    stored, accuracy = taggers.accuracy()
    if stored:
        return False, accuracy
    if train_sentences is not None:
        train = [list(sentence) for sentence in train_sentences]
    elif train_files:
        train = file_sentences(train_files)
    else:
        train = [tagged_words(tree) for tree in runs.gold_trees("train")]
    train = [sentence for sentence in train if sentence]
    dev = [s for s in (tagged_words(tree) for tree in runs.gold_trees("dev")) if s]
    start = time.perf_counter()
    tagger = spec.train(train, on_iteration)
    seconds = time.perf_counter() - start
    accuracy = tagger.accuracy(dev) if dev else None  # type: ignore[attr-defined]
    model = tagger.to_bytes() if spec.kind == "crf" else tagger.to_json()  # type: ignore[attr-defined]
    taggers.store(spec.kind, model, len(train), accuracy, seconds)
    return True, accuracy


def load_tagger(db: Database | str | Path) -> PosTagger | None:
    """The run's stored tagger, or None if it has none: with a tagger net stored beside the CRF
    (``clparse train-tagger``), the two as one (:class:`~clparse.tag.ensemble.EnsembleTagger`)."""
    taggers = Taggers(Database.of(db, readonly=True))
    found = taggers.model()
    if found is None:
        return None
    kind, model = found
    if kind == "crf" and isinstance(model, bytes):
        from clparse.tag.crf import CrfTagger

        crf = CrfTagger.from_bytes(model)
        net = taggers.net()
        if net is None:
            return crf
        from clparse.tag.ensemble import EnsembleTagger
        from clparse.tag.net import TaggerNet

        try:
            return EnsembleTagger(crf, TaggerNet.from_bytes(net[0]), net[1])
        except ConfigurationError as exc:
            path = taggers.db.path
            raise ConfigurationError(f"{path}: the stored tagger net: {exc}; train it again with "
                                     f"`clparse train-tagger --db {path}`, or restore the file from a backup"
                                     ) from None
    if kind == "perceptron" and isinstance(model, str):
        from clparse.tag.perceptron import Tagger

        return Tagger.from_json(model)
    raise ConfigurationError(f"{Database.of(db, readonly=True).path}: stored tagger of unknown kind "
                             f"{kind!r}; a newer clparse made it")


def train_tagger_net(db: Database | str | Path, train_files: Sequence[str | Path] = (),
                     settings: NetSettings | None = None,
                     on_epoch: Callable[[EpochResult], object] | None = None,
                     should_stop: Callable[[], bool] = lambda: False,
                     keep_worse: bool = False) -> NetFit | None:
    """Train the tagger net on ``train_files`` (every tree) or else on what the CRF learned from (every tree
    of the training files prepare read, if unchanged; else the stored training sentences), keep the epoch best
    on the dev files (or the stored dev sentences), and store it beside the run's CRF (replacing a net stored
    before), unless the pair tags dev worse than parse does now (``keep_worse``: store it anyway).
    None, and nothing stored, if ``should_stop`` said so. Needs PyTorch (``clparse[neural]``)."""
    from clparse import __version__
    from clparse.tag.crf import CrfTagger
    from clparse.tag.ensemble import CRF_WEIGHT, EnsembleTagger
    from clparse.tag.net import TaggerNet
    from clparse.tag.net_train import train_net

    database = Database.of(db)
    runs, taggers = Runs(database), Taggers(database, readonly=False)
    runs.run()  # refuses a database without a prepared run
    found = taggers.model()
    if found is None or found[0] != "crf":
        raise ConfigurationError(f"{database.path}: the tagger net goes beside the CRF, and this run's "
                                 "stored tagger is " + ("missing" if found is None else f"a {found[0]}") +
                                 " (prepare again with --tagger crf, the default)")
    # the sentences the CRF learned from and was scored on: every tree of the files prepare read, if they are
    # there as they were (the stored sentences are only those within the run's length limit)
    train_source = list(train_files) or _unchanged_files(runs, "train")
    dev_source = _unchanged_files(runs, "dev")
    train = [s for s in (file_sentences(train_source) if train_source else
                         [tagged_words(tree) for tree in runs.gold_trees("train")]) if s]
    dev = [s for s in (file_sentences(dev_source) if dev_source else
                       [tagged_words(tree) for tree in runs.gold_trees("dev")]) if s]
    settings = settings or NetSettings()
    start = time.perf_counter()
    trained = train_net(train, dev, settings, on_epoch=on_epoch, should_stop=should_stop)
    if trained is None:
        return None
    crf = CrfTagger.from_bytes(found[1])  # type: ignore[arg-type]
    ensemble = EnsembleTagger(crf, trained.net, CRF_WEIGHT)
    stored = StoredNet(trained.net.to_bytes(), CRF_WEIGHT, len(train), settings.epochs, trained.epoch,
                       settings.seed, trained.dev_accuracy, ensemble.accuracy(dev) if dev else None,
                       time.perf_counter() - start, __version__)
    crf_accuracy = crf.accuracy(dev) if dev else None
    if should_stop():
        return None
    # a net trained too little (or on too little) makes the pair worse than what parse tags with now, the
    # CRF alone or with the net stored before: it is not stored unless asked for
    before = taggers.net()
    in_use = crf_accuracy
    if before is not None and dev:
        try:
            in_use = EnsembleTagger(crf, TaggerNet.from_bytes(before[0]), before[1]).accuracy(dev)
        except ConfigurationError:  # a damaged net stored before: what replaces it is measured on the CRF's
            pass
    behind = stored.dev_accuracy is not None and in_use is not None and stored.dev_accuracy < in_use
    if not behind or keep_worse:
        taggers.store_net(stored)
    return NetFit(trained, stored, crf_accuracy, not behind or keep_worse, before is not None, in_use,
                  len(train), bool(train_source))


@dataclass(frozen=True)
class NetFit:
    """What :func:`train_tagger_net` did: the training, the row (stored if ``kept``), and the CRF's own dev
    accuracy, which the pair must not fall below to be stored."""

    training: NetTraining
    stored: StoredNet
    crf_dev_accuracy: float | None
    kept: bool
    replaced: bool  # a net was stored before (kept: this one replaced it; else it stays)
    in_use_dev_accuracy: float | None  # what parse tagged the dev split with before: the CRF, or the pair
    train_sentences: int
    from_files: bool  # every tree of treebank files, or else the run's stored (length-limited) sentences


def _unchanged_files(runs: Runs, split: str) -> list[Path]:
    """The treebank files prepare read for ``split``, if every one is still at its path with the same
    SHA-256; else none (the caller falls back on the stored sentences)."""
    import hashlib

    files = [(Path(path), sha) for kind, path, sha in runs.treebank_files() if kind == split]
    for path, sha in files:
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != sha:
            return []
    return [path for path, _ in files]
