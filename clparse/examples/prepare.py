"""``clparse prepare``: treebank in, every training example with its features into SQLite.

Everything is written in one transaction, so an interruption, a bad tree or a
full disk leaves the database as it was. Feature rows are streamed into it as
the compiled kernel finds them (in blobs of ``CHUNK_ROWS`` rows), so they are
never all held in memory; the candidates are reduced to each label's distinct
examples in batches (:class:`~clparse.examples.generate.ExampleSet`), and each
label is written and dropped in turn. The run is identified by a digest of its inputs
(file contents) and settings: the same inputs again do nothing; different ones
are refused rather than mixed into the same database.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from clparse import __version__
from clparse.errors import ConfigurationError, DatabaseError, ParameterError
from clparse.features.space import FeatureConfig, feature_text
from clparse.examples.generate import DEFAULT_BATCH, ExampleGenerator, GenerationReport
from clparse.features.symbols import ITEM_ORDERS
from clparse.preprocess import (
    PreprocessConfig,
    Preprocessed,
    PreprocessReport,
    Vocabulary,
    preprocess_treebank,
    sentence_length,
)
from clparse.read import read_trees
from clparse.read.ptb import format_tree
from clparse.read.tree import Tree
from clparse.store.database import Database
from clparse.store.export import refuse_exported
from clparse.store.runs import CHUNK_ROWS, Runs, RunWriter
from clparse.tag.jackknife import FOLD_ORDERS, TaggerSpec, jackknife, retag
from clparse.tag.stored import NONE_TAG, ensure_tagger

UNKNOWN_WORDS = ("unk", "signatures")
# gold: the treebank's tags; jackknife: each fold's tags from a tagger trained on the other folds;
# both: every sentence with its gold tags, and once more with jackknifed tags where they differ
TRAIN_TAGS = ("gold", "jackknife", "both")


@dataclass(frozen=True)
class PrepareSettings:
    max_words: int | None = 15  # None: every sentence, whatever its length
    seed: int = 0
    max_children: int = 5
    vocab_min: int = 5
    features: FeatureConfig = field(default_factory=FeatureConfig)
    skip_steps: tuple[str, ...] = ()
    # no punctuation at a span edge, ROOT only unary (on since it measured better: docs/accuracy.md)
    constraints: bool = True
    unknown_words: str = "unk"  # rare words: one "unk", or "signatures" (shape and suffix)
    tagger: str = "crf"  # the run's POS tagger: crf or perceptron (docs: README, tagging)
    train_tags: str = "gold"  # training trees' leaves: gold, jackknifed tagger tags (paper Table 3) or both
    folds: int = 10  # jackknife folds
    fold_order: str = "interleaved"  # how sentences are dealt into folds (clparse.tag.jackknife)
    tagger_iterations: int | None = None  # None: the tagger's default (CRF 150, perceptron 5)
    # the training path: seeded random (paper §2.1.1), or the l2r / r2l item order (§3.5)
    order: str = "random"
    paths: int = 1  # seeded random paths per training tree (the paper: one)

    def __post_init__(self) -> None:
        TaggerSpec(self.tagger, self.tagger_iterations)  # validates
        if self.train_tags not in TRAIN_TAGS:
            raise ConfigurationError(f"train_tags must be one of {', '.join(TRAIN_TAGS)}, got "
                                     f"{self.train_tags!r}")
        if self.fold_order not in FOLD_ORDERS:
            raise ConfigurationError(f"fold_order must be one of {', '.join(FOLD_ORDERS)}, got "
                                     f"{self.fold_order!r}")
        if self.order not in ITEM_ORDERS:
            raise ConfigurationError(f"order must be one of {', '.join(ITEM_ORDERS)}, got {self.order!r}")
        if self.paths < 1:
            raise ConfigurationError(f"paths must be at least 1, got {self.paths}")
        if self.paths > 1 and self.order != "random":
            raise ConfigurationError(f"the {self.order} order has one path per tree; more than one path "
                                     "needs the random order")
        if self.folds < 2:
            raise ConfigurationError(f"folds must be at least 2, got {self.folds}")
        if self.tagger_iterations is not None and self.tagger_iterations < 1:
            raise ConfigurationError(f"tagger_iterations must be at least 1, got {self.tagger_iterations}")
        if self.max_words is not None and self.max_words < 1:
            raise ConfigurationError("max_words must be at least 1 (or None for every length), got "
                                     f"{self.max_words}")
        if self.max_children < 1:
            raise ConfigurationError(f"max_children must be at least 1, got {self.max_children}")
        if self.vocab_min < 1:
            raise ConfigurationError(f"vocab_min must be at least 1, got {self.vocab_min}")
        if self.unknown_words not in UNKNOWN_WORDS:
            raise ConfigurationError(f"unknown_words must be one of {', '.join(UNKNOWN_WORDS)}, "
                                     f"got {self.unknown_words!r}")
        if self.constraints and "raise_punctuation" in self.skip_steps:
            raise ConfigurationError("candidate constraints need the raise_punctuation step: without it gold "
                                     "phrases may begin or end with punctuation; switch them off too "
                                     "(--no-constraints; constraints=False in Python)")

    def preprocess_config(self) -> PreprocessConfig:
        return PreprocessConfig.without(self.skip_steps, max_words=self.max_words)

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["skip_steps"] = sorted(self.skip_steps)
        values["features"] = self.features.to_dict()  # its own form: newer templates, off, stay out of it
        return values


@dataclass
class PrepareSummary:
    created: bool
    run_id: int
    message: str
    train_sentences: int = 0
    dev_sentences: int = 0
    seconds: float = 0.0  # writing the run (examples, sentences, features)
    tagger_seconds: float = 0.0  # training the run's POS tagger, after the run is written
    rows: int = 0
    nonzeros: int = 0
    features: int = 0
    labels: dict[str, dict[str, int]] = field(default_factory=dict)
    preprocess: dict[str, Any] = field(default_factory=dict)
    generation: GenerationReport | None = None
    warnings: list[str] = field(default_factory=list)  # for stderr: what the run holds that may surprise


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# Settings added after the first release enter the digest only when they differ from the behaviour
# before they existed, so a database prepared then is still recognised as "the same inputs".
LATER_SETTINGS: dict[str, object] = {"constraints": False, "unknown_words": "unk", "train_tags": "gold",
                                     "fold_order": "contiguous", "order": "random", "paths": 1}
# With gold training tags the examples do not depend on the tagger: its settings stay out of the digest.
TAGGER_SETTINGS = ("tagger", "folds", "tagger_iterations", "fold_order")


# Templates added after runs were stored without a value for them: such a run had them off, and its digest
# was made without them (coarse-tags, newer, is left out of the stored settings whenever it is off).
LATER_TEMPLATES = ("span_edges", "punctuation")


def input_digest(files: Sequence[tuple[str, Path, str]], settings: PrepareSettings,
                 without_templates: Sequence[str] = ()) -> str:
    values = {k: v for k, v in settings.to_dict().items()
              if k not in LATER_SETTINGS or v != LATER_SETTINGS[k]}
    values["features"] = {k: v for k, v in values["features"].items() if k not in without_templates}
    if settings.train_tags == "gold":
        values = {k: v for k, v in values.items() if k not in TAGGER_SETTINGS}
    payload = json.dumps({"settings": values, "files": [(split, sha) for split, _, sha in files]},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def prepare(db: str | Path, train: Sequence[str | Path], dev: Sequence[str | Path] = (),
            settings: PrepareSettings = PrepareSettings(),
            progress: Callable[[int], object] | None = None,
            total: Callable[[int], object] | None = None, jobs: int = 1,
            on_fold: Callable[[int], object] | None = None, batch: int = DEFAULT_BATCH,
            on_tagger: Callable[[], object] | None = None,
            on_tagger_iteration: Callable[[int], object] | None = None,
            on_jackknife: Callable[[], object] | None = None) -> PrepareSummary:
    """Generate and store the training examples of ``train`` (and the ``dev`` sentences), and train the
    tagger.

    ``batch``: raw candidates held before they are reduced to each label's distinct examples (memory
    only: the stored run is the same for any value). With ``settings.train_tags == "jackknife"`` the training
    trees get their tags from taggers trained on the other folds first (``jobs`` of them at a time;
    ``on_jackknife()`` once the settings and inputs are checked, before the first of them trains;
    ``on_fold(k)`` as each finishes); with ``"both"`` the run holds such a copy of each tree whose tags it
    changes (stored first) and every tree with its gold tags. ``on_tagger()`` when the run's own tagger
    starts training (the last phase, a minute or two on GUM), then ``on_tagger_iteration(n)`` after each of
    its iterations (CRF).
    """
    db = Path(db)
    if not train:
        raise ParameterError("train", "give at least one training file")
    files = [(split, Path(p), _sha256(Path(p)))
             for split, paths in (("train", train), ("dev", dev)) for p in paths]
    _refuse_repeated(files)
    digest = input_digest(files, settings)
    # the same inputs as a run stored before the later templates, if they are off
    before_templates = input_digest(files, settings, [t for t in LATER_TEMPLATES
                                                      if not getattr(settings.features, t)])
    with Database(db) as database:
        runs = Runs(database)
        existing = runs.existing()
        if existing:
            refuse_exported(database, "prepare")  # a parser export: its run's examples are gone
            run_id, stored = existing
            if stored in (digest, before_templates):
                _refuse_other_tagger(db, run_id, runs.config(), settings)
                trained, accuracy = ensure_tagger(  # databases prepared before taggers get one now
                    database, train, spec=TaggerSpec(settings.tagger, settings.tagger_iterations))
                note = f"; trained its POS tagger ({_accuracy(accuracy)})" if trained else ""
                return PrepareSummary(False, run_id,
                                      f"{db} already holds run {run_id} prepared from these inputs "
                                      f"and settings: nothing to do{note}")
            differ = _differences(database, runs.config(), files, settings)
            raise DatabaseError(f"{db} already holds run {run_id}, prepared from other inputs or settings"
                                f"{differ}; use a new database for a new run (runs are never mixed)")
        start = time.perf_counter()
        summary = PrepareSummary(True, 1, "")
        tagged: list[list[tuple[str, str]]] = []
        try:
            with runs.writing() as writer:
                _prepare_in(writer, digest, files, settings, summary, progress, total, tagged, jobs, on_fold,
                            batch, on_jackknife)
                summary.seconds = time.perf_counter() - start
                writer.finish(summary.seconds)
        except DatabaseError as exc:
            raise DatabaseError("writing the run failed and was rolled back, the database is unchanged: "
                                f"{exc}") from None
        if on_tagger is not None:
            on_tagger()
        tagger_start = time.perf_counter()
        # train_sentences: the trees read once, every length
        _, accuracy = ensure_tagger(database, train, train_sentences=tagged,
                                    spec=TaggerSpec(settings.tagger, settings.tagger_iterations),
                                    on_iteration=on_tagger_iteration)
        summary.tagger_seconds = time.perf_counter() - tagger_start
    report = summary.generation
    unused = 0 if report is None else report.too_wide + report.breaks_constraints
    skipped = (f" ({unused} not trained on: a phrase wider than K = {settings.max_children} or against the "
               "candidate constraints; sentences.skip_reason says which)" if unused else "")
    summary.message = (f"prepared run {summary.run_id}: {summary.train_sentences} training sentences"
                       f"{skipped}, {summary.dev_sentences} dev sentences, {summary.rows} feature rows, "
                       f"{summary.features} features, POS tagger {_accuracy(accuracy)}; "
                       f"{summary.seconds:.1f} s for the run, {summary.tagger_seconds:.1f} s for the tagger")
    summary.warnings += _copied_dev(files)
    return summary


def _copied_dev(files: Sequence[tuple[str, Path, str]]) -> list[str]:
    """A dev file with a training file's contents under another name (a copy): every dev score would be
    measured on training sentences, said nowhere (api.prepare warns only when the path is the same)."""
    train = {sha: path for split, path, sha in files if split == "train"}
    return [f"warning: dev file {path} has the same contents as training file {train[sha]}: dev scores "
            "(calibration, the best Θ̂) are then measured on training sentences"
            for split, path, sha in files
            if split == "dev" and sha in train and path.resolve() != train[sha].resolve()]


#: Dev trees also in training past this share are a split gone wrong, not chance (GUM: 4.4 %, "Oh.", "Ah!").
SHARED_DEV = 0.25


def _shared_trees(kept: dict[str, list[Preprocessed]], files: Sequence[tuple[str, Path, str]]) -> list[str]:
    """Dev files that hold training trees (a training file pasted into one, a split made twice): dev scores
    would be measured on sentences the run trained on. A dev file that is a training file's copy is said
    by :func:`_copied_dev` (or api.prepare, for the same path) already."""
    shas = {sha for split, _, sha in files if split == "train"}
    if not kept["dev"] or any(split == "dev" and sha in shas for split, _, sha in files):
        return []
    train = {format_tree(p.original) for p in kept["train"] if p.original is not None}
    shared = sum(p.original is not None and format_tree(p.original) in train for p in kept["dev"])
    if shared <= SHARED_DEV * len(kept["dev"]):
        return []
    return [f"warning: {shared} of {len(kept['dev'])} dev sentences are also training sentences (the same "
            "tree): dev scores (calibration, the best Θ̂) are then measured mostly on training sentences"]


def _differences(database: Database, config: dict[str, Any], files: Sequence[tuple[str, Path, str]],
                 settings: PrepareSettings) -> str:
    """What differs from the stored run, for the refusal to say (it said only "other inputs or settings",
    leaving the user to guess between a seed, a length limit and a file edited since)."""
    stored = config.get("settings", {})
    given = json.loads(json.dumps(settings.to_dict()))  # as stored: tuples are lists
    ignored = TAGGER_SETTINGS if settings.train_tags == "gold" else ()  # not part of such a run
    # a setting newer than the stored run reads as the behaviour before it existed
    stored = {**{k: v for k, v in LATER_SETTINGS.items() if k in given}, **stored}
    out = [f"{name} {_shown(stored[name])} (now {_shown(given[name])})" for name in given
           if name in stored and name not in ignored and stored[name] != given[name]
           and name != "features"]
    if "features" in stored and {**dict.fromkeys(LATER_TEMPLATES, False),
                                 **stored["features"]} != given["features"]:
        out.append("feature settings (--context or --template)")
    rows = Runs(database).treebank_files()
    before = [(split, sha) for split, _, sha in rows]
    if before != [(split, sha) for split, _, sha in files]:
        for split in ("train", "dev"):
            old = [(path, sha) for s, path, sha in rows if s == split]
            new = [(str(path), sha) for s, path, sha in files if s == split]
            if old == new or [sha for _, sha in old] == [sha for _, sha in new]:
                continue
            changed = [path for (path, sha), (new_path, new_sha) in zip(old, new) if path == new_path
                       and sha != new_sha]
            if changed and len(old) == len(new):
                out.append(f"{split} file {changed[0]} changed since (other contents)")
            else:
                out.append(f"{split} files {_names(old)} (now {_names(new)})")
    return f" ({'; '.join(out)})" if out else ""


def _shown(value: object) -> str:
    return "none" if value is None else ("on" if value else "off") if isinstance(value, bool) else str(value)


def _names(files: Sequence[tuple[str, str]]) -> str:
    if not files:
        return "none"
    return files[0][0] + (f" and {len(files) - 1} more" if len(files) > 1 else "")


def _refuse_repeated(files: Sequence[tuple[str, Path, str]]) -> None:
    """A file given twice in a split (``--train gum/train gum/train/a.ptb``, or a copy) would have its
    trees stored, and trained on, twice without a word: refuse it, naming both."""
    seen: dict[tuple[str, str], Path] = {}
    for split, path, sha in files:
        first = seen.setdefault((split, sha), path)
        if first is not path:
            same = "given twice" if first.resolve() == path.resolve() else f"the same contents as {first}"
            raise ParameterError(split, f"{path}: {same}; each tree would be stored twice (give each file "
                                        "once)")


def _refuse_other_tagger(db: Path, run_id: int, config: dict[str, Any], settings: PrepareSettings) -> None:
    """With gold training tags the tagger's settings are not in the digest, so the same inputs with another
    ``tagger`` or ``tagger_iterations`` match the stored run: refuse them rather than say "nothing to do"
    and keep the stored tagger. Runs prepared before a setting existed do not record it and are not
    checked on it."""
    stored = config.get("settings", {})
    names = [name for name in ("tagger", "tagger_iterations")
             if name in stored and stored[name] != getattr(settings, name)]
    if "tagger_iterations" in names and stored.get("tagger", object()) == settings.tagger:
        # the tagger's default given by number (or left out where a number was stored) is the same tagger
        before = TaggerSpec(stored["tagger"], stored["tagger_iterations"]).effective_iterations
        if before == TaggerSpec(settings.tagger, settings.tagger_iterations).effective_iterations:
            names.remove("tagger_iterations")
    changed = [f"{name} {stored[name] or 'default'} (not {getattr(settings, name) or 'default'})"
               for name in names]
    if changed:
        raise ConfigurationError(f"{db} already holds run {run_id} prepared from these inputs with "
                                 f"{', '.join(changed)}; use a new database for another tagger (runs are "
                                 "never mixed)")


def _accuracy(accuracy: float | None) -> str:
    return "without a dev split to measure it" if accuracy is None else f"{100 * accuracy:.2f} % on dev"


class _RowWriter:
    """Feature rows into ``feature_rows`` blobs of exactly ``CHUNK_ROWS`` rows as they arrive (the last one
    shorter)."""

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer
        self.chunk = 0
        self.rows = 0
        self.nonzeros = 0
        self.lengths: list[np.ndarray] = []
        self.parts: list[np.ndarray] = []
        self.pending = 0
        self.row_counts = np.zeros(0, dtype=np.int64)  # distinct rows containing each feature

    def __call__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.lengths.append(np.diff(indptr))
        self.parts.append(indices.copy())
        self.pending += len(indptr) - 1
        while self.pending >= CHUNK_ROWS:
            self._flush(CHUNK_ROWS)

    def close(self) -> None:
        if self.pending:
            self._flush(self.pending)

    def _flush(self, count: int) -> None:
        lengths = np.concatenate(self.lengths)
        indices = np.concatenate(self.parts)
        indptr = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(lengths[:count], out=indptr[1:])
        used = int(indptr[-1])
        self.writer.add_feature_rows(self.chunk, self.rows, indptr, indices[:used])
        counts = np.bincount(indices[:used], minlength=len(self.row_counts))
        counts[:len(self.row_counts)] += self.row_counts
        self.row_counts = counts
        self.chunk += 1
        self.rows += count
        self.nonzeros += used
        self.lengths, self.parts = [lengths[count:]], [indices[used:]]
        self.pending -= count


def _noting(trees: Iterable[Tree], tagged: list[list[tuple[str, str]]]) -> Iterator[Tree]:
    """The trees, each one's tokens also noted in ``tagged`` (for the tagger, which sees every length)."""
    for tree in trees:
        tagged.append([(w, t) for w, t in tree.tagged_words() if t != NONE_TAG])
        yield tree


@dataclass
class Jackknifed:
    """A training sentence prepared from jackknifed tags: its fold, the tags, and its gold tree."""

    fold: int
    tags: list[str]
    gold: Tree


def _read(files: Sequence[tuple[str, Path, str]], settings: PrepareSettings, summary: PrepareSummary,
          tagged: list[list[tuple[str, str]]], jobs: int = 1, on_fold: Callable[[int], object] | None = None,
          on_jackknife: Callable[[], object] | None = None
          ) -> tuple[dict[str, list[Preprocessed]], dict[Path, int], list[Jackknifed | None]]:
    """Preprocessed sentences per split, trees per file, and per kept training sentence its jackknife
    record."""
    config = settings.preprocess_config()
    report = PreprocessReport()
    file_trees: dict[Path, int] = {}
    kept: dict[str, list[Preprocessed]] = {"train": [], "dev": []}
    records: list[Jackknifed | None] = []
    both = settings.train_tags == "both"
    if settings.train_tags in ("jackknife", "both"):
        # The folds need every training tree first: read them all (every length: the taggers see all).
        train_trees = [(path, tree) for split, path, _ in files if split == "train"
                       for tree in _noting(read_trees(path), tagged)]
        read_once: dict[Path, list[Tree]] = {}  # with both, each file's gold trees are prepared again below
        for path, tree in train_trees:
            read_once.setdefault(path, []).append(tree)
        tags, folds = jackknife(tagged, settings.folds,
                                TaggerSpec(settings.tagger, settings.tagger_iterations),
                                jobs, on_fold, settings.fold_order, on_jackknife)
        # The length filter counts the gold tree's words: on the tagger's tags a 16-word sentence with a word
        # tagged ':' passed --max-words 15 (and one with a ',' tagged as a word did not), so the sentences of
        # a jackknifed run were not those of a gold-tag run of the same settings.
        unfiltered = replace(config, max_words=None)
        # With both, the gold-tag sentences are read below and counted there; a jackknifed copy is added
        # only where the tags differ (an identical copy would only weigh that sentence twice).
        counts = PreprocessReport() if both else report
        for i, (path, tree) in enumerate(train_trees):
            if both and tags[i] == [t for _, t in tagged[i]]:
                continue
            before = counts.kept
            if config.max_words is not None and sentence_length(tree) > config.max_words:
                counts.sentences += 1
                counts.too_long += 1
            else:
                kept["train"] += preprocess_treebank([retag(tree, tags[i])], unfiltered, counts)
            if counts.kept > before:
                records.append(Jackknifed(folds[i], tags[i], tree))
            if not both:
                file_trees[path] = file_trees.get(path, 0) + 1
    dev = PreprocessReport()  # the dev files' own counts, to say why none is left
    for split, path, _ in files:
        if split == "train" and settings.train_tags == "jackknife":
            continue
        before, too_long = report.sentences, report.too_long
        if split == "train" and both:  # read and noted for the tagger once, above
            trees: Iterable[Tree] = read_once[path]
        else:
            trees = _noting(read_trees(path), tagged) if split == "train" else read_trees(path)
        results = list(preprocess_treebank(trees, config, report))
        if split == "dev":
            dev.sentences += report.sentences - before
            dev.too_long += report.too_long - too_long
        kept[split] += results
        if split == "train":
            records += [None] * len(results)
        file_trees[path] = report.sentences - before
    summary.preprocess = report.to_dict()
    if not kept["train"]:
        raise ConfigurationError(_none_left("training", report.sentences - dev.sentences,
                                            report.too_long - dev.too_long, settings.max_words))
    if not kept["dev"] and any(split == "dev" for split, _, _ in files):
        # else the dev files vanish without a word, and calibrate later says prepare was given none
        raise ConfigurationError(_none_left("dev", dev.sentences, dev.too_long, settings.max_words))
    return kept, file_trees, records


def _none_left(split: str, read: int, too_long: int, max_words: int | None) -> str:
    """Why no sentence of a split is left, from its counts: it said "at most None words ... or --max-words
    0" with --max-words 0 given, when the trees had no words left after preprocessing (-NONE- alone)."""
    causes = [f"{too_long} over the length filter (at most {max_words} words)"] if too_long else []
    if read > too_long:
        causes.append(f"{read - too_long} with no words left after preprocessing (empty elements alone, say)")
    fix = "; give --max-words 0 for every length" if too_long else ""
    return f"no {split} sentence survived preprocessing and the length filter: of {read} trees, " \
           f"{' and '.join(causes)}{fix}"


def _prepare_in(writer: RunWriter, digest: str, files: Sequence[tuple[str, Path, str]],
                settings: PrepareSettings, summary: PrepareSummary,
                progress: Callable[[int], object] | None, total: Callable[[int], object] | None,
                tagged: list[list[tuple[str, str]]], jobs: int = 1,
                on_fold: Callable[[int], object] | None = None, batch: int = DEFAULT_BATCH,
                on_jackknife: Callable[[], object] | None = None) -> None:
    """Read, generate and write the whole run inside the caller's transaction."""
    kept, file_trees, records = _read(files, settings, summary, tagged, jobs, on_fold, on_jackknife)
    summary.warnings += _shared_trees(kept, files)
    train = kept["train"]
    # a jackknifed copy (with --train-tags both) must not count its words twice towards --vocab-min
    once = train if settings.train_tags != "both" else [p for p, rec in zip(train, records) if rec is None]
    vocabulary = Vocabulary.build((w for p in once for w in p.tree.words()), settings.vocab_min,
                                  settings.unknown_words == "signatures")
    labels = sorted({node.label for p in train for node in p.tree.phrases()})
    config = {"settings": settings.to_dict(), "preprocess": settings.preprocess_config().to_dict(),
              "labels": labels}
    summary.run_id = writer.start(digest, __version__, config)
    writer.add_files((split, str(path), sha, file_trees[path]) for split, path, sha in files)
    rows = _RowWriter(writer)
    generator = ExampleGenerator(labels, settings.features, settings.max_children, settings.seed,
                                 vocabulary.normalize, sink=rows, constraints=settings.constraints,
                                 order=settings.order, batch=batch, paths=settings.paths)
    if total is not None:
        total(len(train))
    paths: list[tuple[int, list[tuple[int, int, str]]]] = []  # (sentence id, path)
    for split in ("train", "dev"):
        for position, result in enumerate(kept[split]):
            assert result.original is not None
            row = {"split": split, "position": position, "length": len(result.original_words),
                   "words": " ".join(result.original_words), "gold_tree": format_tree(result.original),
                   "tree": format_tree(result.tree),
                   "removed_json": json.dumps([asdict(r) for r in result.removed]),
                   "trained": False, "skip_reason": None}
            path = None
            record = records[position] if split == "train" else None
            if record is not None:  # the gold tree as read; the training tree carries the fold's tags
                row.update(gold_tree=format_tree(record.gold), fold=record.fold, tags=" ".join(record.tags))
            if split == "train":
                before = generator.report.too_wide
                tree = generator.prepare_tree(result.tree)
                if tree is None:
                    row["skip_reason"] = (f"a phrase has more than {settings.max_children} children"
                                          if generator.report.too_wide > before
                                          else "a phrase has punctuation at an edge or ROOT is not unary")
                else:
                    row["trained"] = True
                    row["tree"] = format_tree(tree)
                    path = generator.add_sentence(tree, position)
                if progress is not None:
                    progress(1)
            sentence_id = writer.add_sentence(row)
            if path is not None:
                paths.append((sentence_id, path))
    rows.close()
    generator.finish()
    writer.add_paths(paths)
    writer.add_vocabulary(vocabulary.to_rows())
    keys = generator.space.id_keys()
    row_counts = np.zeros(len(keys), dtype=np.int64)
    row_counts[:len(rows.row_counts)] = rows.row_counts
    writer.add_features(keys, [feature_text(k) for k in keys], row_counts)
    _write_labels(writer, generator, summary)
    summary.train_sentences = len(train)
    summary.dev_sentences = len(kept["dev"])
    summary.generation = generator.report
    summary.rows, summary.nonzeros, summary.features = rows.rows, rows.nonzeros, len(keys)


def _write_labels(writer: RunWriter, generator: ExampleGenerator, summary: PrepareSummary) -> None:
    report = generator.report
    for label in generator.labels:
        rows, ys, counts = generator.examples.take(label)
        writer.add_label(label, report.candidates[label], report.positives[label], rows, ys, counts)
        summary.labels[label] = {"candidates": report.candidates[label], "positives": report.positives[label],
                                 "examples": len(rows)}
