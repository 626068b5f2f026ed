"""clparse from Python: one function per command, with the command's defaults and guards.

    from clparse import api
    api.prepare("run.sqlite", ["gum/train"], ["gum/dev"], max_words=15)
    api.train("run.sqlite", until_theta=6)            # resumes where a run stopped
    api.calibrate("run.sqlite", beam=1000)
    for result in api.parse("run.sqlite", ["text.txt"]):
        print(result.tree)

Each function behaves as its command does: a function that writes first checks the file for damage
(and refuses to write into a damaged one), a resumed ``train`` keeps the settings its labels were
started with, and a bad parameter raises :class:`~clparse.errors.ParameterError` naming the
parameter (the command line names the option). Progress is reported through the optional callbacks;
nothing here prints.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clparse.errors import BracketError, ClparseError, ConfigurationError, ParameterError

if TYPE_CHECKING:  # the heavy modules load when a function needs them
    from clparse.calibrate.per_label import PerLabelResult
    from clparse.calibrate.run import CalibrationResult, CalibrationSettings
    from clparse.calibrate.tag_chooser import ChooserFit
    from clparse.examples.prepare import PrepareSummary
    from clparse.features.space import FeatureConfig
    from clparse.output import ParseResult
    from clparse.parser import Parser
    from clparse.search.brackets import Brackets
    from clparse.tag.evaluate import TaggingReport
    from clparse.train import LabelStatus, StopRule
    from clparse.train.summary import TrainSummary

PathLike = str | Path
Echo = Callable[[str], object]
SQL_FORMATS = ("table", "csv", "json")
TEMPLATE_NAMES = ("child-extra", "head-of-child", "context-exists", "length", "span-edges", "punctuation",
                  "coarse-tags", "none")


def _quiet(_: str) -> None:
    return None


def guard_writable(db: PathLike) -> None:
    """Refuse to write into a damaged file: SQLite's quick check of an existing, non-empty ``db``."""
    from clparse.store.database import quick_check

    path = Path(db)
    if path.exists() and path.stat().st_size > 0:
        quick_check(path)


# --------------------------------------------------------------------- database


def init(db: PathLike, echo: Echo = _quiet) -> Path:
    """Create a training database, or upgrade an older one after a backup copy (``echo`` says which)."""
    from clparse.store.database import init_database

    guard_writable(db)  # an upgrade writes
    return init_database(db, echo=echo)


def check(db: PathLike) -> None:
    """SQLite's integrity check of the whole file, then every stored tree's and blob's checksum; raises
    :class:`~clparse.errors.DatabaseError` if damaged (naming the first row that fails and how many more)."""
    from clparse.store.database import integrity_check
    from clparse.store.verify import damaged, verify_checksums

    integrity_check(db)
    problems = verify_checksums(db)
    if problems:
        raise damaged(db, problems)


def backup(db: PathLike, target: PathLike) -> int:
    """A consistent copy of ``db`` in the new file ``target`` (safe while training writes); its size in
    bytes."""
    from clparse.store.database import backup_database

    return backup_database(db, target)


def export(db: PathLike, out: PathLike, *, force: bool = False,
           progress: Callable[[str, int], object] | None = None) -> Any:
    """Write the parser database of the run ``db`` to the new file ``out`` (:mod:`clparse.store.export`):
    the trees and Θ of every iteration, calibrations, tagger, vocabulary, features, settings and dev
    sentences, without examples, margins and training sentences. ``db`` is only read; ``out`` is replaced
    only with ``force``. Returns the :class:`~clparse.store.export.ExportSummary` (sizes, rows)."""
    from clparse import __version__
    from clparse.store.export import export_parser

    return export_parser(db, out, force=force, progress=progress, version=__version__)


def sql(db: PathLike, query: str, fmt: str = "table", *, write: bool = False) -> str:
    """The rows of ``query`` as text (``table``, ``csv`` or ``json``); read-only unless ``write``."""
    from clparse.query import run_query

    if fmt not in SQL_FORMATS:  # anything else gave the table without a word
        raise ParameterError("fmt", f"unknown format {fmt!r}; choose from {', '.join(SQL_FORMATS)}")
    if write:
        guard_writable(db)
    return run_query(db, query, fmt=fmt, write=write)


def sql_shell(db: PathLike, *, write: bool = False) -> None:
    """An interactive SQL shell on ``db`` (read-only unless ``write``)."""
    from clparse.query import interactive_shell

    if write:
        guard_writable(db)
    interactive_shell(db, write=write)


# --------------------------------------------------------------------- preparing and training


def feature_config(context: int = 2, templates: Sequence[str] = ()) -> FeatureConfig:
    """The feature templates: every richer one unless some are named (``none``: the paper's alone);
    ``span-edges``, ``punctuation`` and ``coarse-tags`` only when named."""
    from clparse.features.space import TEMPLATES, FeatureConfig

    if isinstance(templates, str):  # read one character at a time: "unknown template 'n'"
        raise ParameterError("templates", f"give a list of names, such as [{templates!r}], not one name")
    unknown = sorted(set(templates) - set(TEMPLATE_NAMES))
    if unknown:
        raise ParameterError("templates",
                             f"unknown template {unknown[0]!r}; choose from {', '.join(TEMPLATE_NAMES)}")
    if not templates:
        return FeatureConfig(context=context)
    if "none" in templates and len(set(templates)) > 1:
        raise ParameterError("templates", "'none' cannot be combined with other templates")
    chosen = {t.replace("-", "_") for t in templates}
    return FeatureConfig(context=context, **{name: name in chosen for name in TEMPLATES})


@dataclass
class PrepareProgress:
    """Callbacks of :func:`prepare`: ``start(total)`` and ``sentences(n)`` while generating examples,
    ``fold(k)`` as each jackknife fold's tagger is trained, ``tagger()`` when the run's tagger starts
    training (the last phase), ``tagger_iteration(n)`` after its iteration n (the CRF's; it may converge
    before its last), ``jackknife()`` once the jackknife's folds, settings and inputs are checked, before
    its first fold's tagger trains."""

    start: Callable[[int], object] | None = None
    sentences: Callable[[int], object] | None = None
    fold: Callable[[int], object] | None = None
    tagger: Callable[[], object] | None = None
    tagger_iteration: Callable[[int], object] | None = None
    jackknife: Callable[[], object] | None = None


def prepare(db: PathLike, train: Sequence[PathLike], dev: Sequence[PathLike] = (), *,
            max_words: int | None = 15,
            seed: int = 0, order: str = "random", paths: int = 1, context: int = 2, max_children: int = 5,
            vocab_min: int = 5,
            skip_steps: Sequence[str] = (), constraints: bool = True, unknown_words: str = "unk",
            templates: Sequence[str] = (), tagger: str = "crf", train_tags: str = "gold", folds: int = 10,
            fold_order: str = "interleaved", jobs: int = 1, tagger_iterations: int | None = None,
            progress: PrepareProgress | None = None, echo: Echo = _quiet,
            warn: Echo = _quiet) -> PrepareSummary:
    """Preprocess the treebank files, store every training example, train the run's POS tagger.

    ``max_words`` None or 0 keeps every sentence. Running it again with the same inputs does nothing;
    with other inputs or settings it refuses. A database this call created is removed again if it fails.
    """
    from clparse.examples.prepare import PrepareSettings
    from clparse.examples.prepare import prepare as prepare_run
    from clparse.store.database import new_or_existing

    train, dev = treebank_paths(train, "train"), treebank_paths(dev, "dev")
    if isinstance(skip_steps, str):  # read one character at a time: "unknown preprocessing setting 'r'"
        raise ParameterError("skip_steps", f"give a list of names, such as [{skip_steps!r}], not one name")
    whole = {"max_words": max_words, "paths": paths, "context": context, "max_children": max_children,
             "vocab_min": vocab_min, "folds": folds, "jobs": jobs, "tagger_iterations": tagger_iterations}
    for name, value in whole.items():  # 1.5 was taken and stored as a setting (max_words 1.5 kept ≤ 1 word)
        if value is None and name in ("max_words", "tagger_iterations"):  # None: every length, the default
            continue
        if isinstance(value, bool) or not isinstance(value, int):  # None too: a TypeError from inside before
            raise ParameterError(name, f"must be a whole number, got {value!r}")
    for name, value in (("jobs", jobs), ("paths", paths)):
        if value < 1:
            raise ParameterError(name, f"must be a whole number ≥ 1, got {value!r}")
    settings = PrepareSettings(max_words=max_words or None, seed=seed, max_children=max_children,
                               vocab_min=vocab_min, features=feature_config(context, templates),
                               skip_steps=tuple(skip_steps), constraints=constraints,
                               unknown_words=unknown_words,
                               tagger=tagger, train_tags=train_tags, folds=folds, fold_order=fold_order,
                               tagger_iterations=tagger_iterations, order=order, paths=paths)
    if not isinstance(seed, int) or seed < 0:  # numpy's generators take whole numbers ≥ 0 only
        raise ParameterError("seed", f"must be a whole number ≥ 0, got {seed!r}")
    progress = progress or PrepareProgress()
    guard_writable(db)
    # Allowed (a quick check of a pipeline may want it), but every dev score would be on training trees.
    for both in sorted({p.resolve() for p in train} & {p.resolve() for p in dev}):
        warn(f"warning: {both} is in both --train and --dev: dev scores (calibration, the best Θ̂) are then "
             "measured on training sentences")
    try:
        with new_or_existing(db, echo=echo, warn=warn):
            return prepare_run(db, train, dev, settings, progress=progress.sentences, total=progress.start,
                               jobs=jobs, on_fold=progress.fold, on_tagger=progress.tagger,
                               on_tagger_iteration=progress.tagger_iteration, on_jackknife=progress.jackknife)
    except RecursionError:  # a step past reading and preprocessing (which never recurse) met a deep tree
        raise _too_deep([*train, *dev]) from None


def treebank_paths(paths: Sequence[PathLike], parameter: str) -> list[Path]:
    """Treebank files as the command line takes them: a directory stands for its ``*.ptb`` and ``*.mrg``
    files, a missing path is one error naming it (it was a traceback, and a directory an
    ``IsADirectoryError``), and one name alone is refused (a string was read one character at a time)."""
    from clparse.read.paths import treebank_files

    return treebank_files(_file_names(paths, parameter))


def _too_deep(files: Sequence[PathLike]) -> ClparseError:
    """One line naming the tree that made a step recurse too deeply (the database was not kept)."""
    from clparse.errors import TreebankError
    from clparse.read.ptb import deepest_tree

    deep = deepest_tree(files)
    if deep is None:
        return ClparseError("a tree is nested too deeply for prepare")
    return TreebankError(deep.path, deep.line, deep.column,
                         f"tree nested {deep.depth} levels deep (the deepest of the input), too deep for "
                         "prepare's example generator; remove or flatten it (`clparse treebank preprocess` "
                         "reads it)")


@dataclass
class TrainOptions:
    """The settings of :func:`train` a run keeps per label (fixed at a label's first iteration).

    None means: for a started label, what it was started with; for a label not started yet, what the
    started labels share, else the default (``loss`` logistic, no
    ``max_depth`` cap, ``checkpoint_every`` 50, ``rule`` mrl, ``smoothing`` 0.5 for mrl, ``sample``
    exact, ``sample_seed`` 0); ``stumps`` False likewise leaves the depth to the started labels.
    """

    loss: str | None = None
    stumps: bool = False
    max_depth: int | None = None
    checkpoint_every: int | None = None
    smoothing: float | None = None
    rule: str | None = None
    sample: int | None = None
    sample_seed: int | None = None


def boost_settings(db: PathLike, options: TrainOptions) -> Any:
    """The settings of a (re)started run, per label (:class:`~clparse.train.settings.RunSettings`): an
    option left None is what each started label was started with (labels may have been started with
    different ones; defaults changed since some runs began: resuming must not need old values), and for a
    label not started yet what every started label shares, else the default. Its attributes read as the
    :class:`~clparse.boost.BoostSettings` of a label not started yet."""
    from clparse.train.parallel import started_settings
    from clparse.train.settings import run_settings

    if options.stumps and options.max_depth not in (None, 1):
        raise ParameterError("max_depth", "stumps means a depth of 1")
    sample_seed = options.sample_seed
    if sample_seed is not None and (not isinstance(sample_seed, int) or sample_seed < 0):
        # numpy's generators take whole numbers ≥ 0 only
        raise ParameterError("sample_seed", f"must be a whole number ≥ 0, got {sample_seed!r}")
    given = {name: getattr(options, name) for name in ("loss", "max_depth", "checkpoint_every", "smoothing",
                                                       "rule", "sample", "sample_seed")}
    if options.stumps:
        given["max_depth"] = 1
    return run_settings({name: value for name, value in given.items() if value is not None},
                        started_settings(db))


@dataclass
class TrainPlan:
    """What :func:`train` is about to do, given to ``on_start`` before the first label loads."""

    labels: list[str]
    stop: str  # the stop rule in words
    where: str  # "2 at a time", or the Dask cluster
    rule: StopRule | None = None  # the stop rule itself, to tell which labels are done (finished_labels)


def train(db: PathLike, labels: Sequence[str] | None = None, *, until_theta: float | None = None,
          max_iterations: int | None = None, max_splits: int | None = None, jobs: int = 1,
          dask: str | None = None, dask_batch: int = 50, options: TrainOptions | None = None,
          should_stop: Callable[[], bool] = lambda: False,
          on_start: Callable[[TrainPlan], object] | None = None,
          on_iteration: Callable[[str, Any], object] | None = None,
          on_poll: Callable[[], object] | None = None) -> TrainSummary:
    """Boost each label's trees until the stop rule (default: the Θ floor), resumably.

    Every iteration is committed in one transaction; calling it again resumes every label where it
    stopped, with trees identical to an uninterrupted run. ``should_stop`` is polled between iterations.
    """
    from clparse.train import StopRule
    from clparse.train import train as train_labels
    from clparse.train.parallel import resolve

    if isinstance(labels, str):
        raise ParameterError("labels", f"give a list of label names, not the string {labels!r}")
    if labels is not None and (not list(labels) or not all(labels)):
        raise ParameterError("labels", "name at least one label and no empty name (to train every label, "
                                       "leave it out)")
    if dask is not None and jobs != 1:
        raise ParameterError("jobs", "is for training on this machine; with dask the cluster's workers train")
    if dask is not None:
        from clparse.dask_address import check_address, require_dask

        check_address(dask)
        require_dask()  # one line saying how to install it, before anything slow
    guard_writable(db)
    settings = boost_settings(db, options or TrainOptions())
    chosen, rule = resolve(db, None if labels is None else list(labels),
                           StopRule(until_theta, max_iterations, max_splits), settings)
    if on_start is not None:
        where = f"on the Dask cluster {dask}" if dask else f"{jobs} at a time"
        on_start(TrainPlan(chosen, rule.describe(), where, rule))
    return train_labels(db, chosen, settings, rule, jobs, should_stop=should_stop, on_iteration=on_iteration,
                        on_poll=on_poll, dask=dask, batch_iterations=dask_batch)


def status(db: PathLike, labels: Sequence[str] | None = None, *, check: bool = False) -> list[LabelStatus]:
    """Per label: iteration, Θ, splits, loss, examples/s, state, last update (also while training runs).

    With ``check``, SQLite's quick check follows the read (read-only), so a file damaged past the pages
    the status needs is an error, not a table read from its few healthy pages."""
    from clparse.store.database import quick_check
    from clparse.train import label_status

    if isinstance(labels, str):  # `r.label in "SBARQ"` matched S and SBAR too
        raise ParameterError("labels", f"give a list of label names, not the string {labels!r}")
    rows = label_status(db)
    if check:
        # after reading: damage met while reading is told as such, the rest of the file is checked
        quick_check(db)
    if labels is None:
        return rows
    unknown = sorted(set(labels) - {r.label for r in rows})
    if unknown:  # as train says it; leaving them out gave fewer rows in silence
        from clparse.train.parallel import unknown_labels

        raise ParameterError("labels", unknown_labels(unknown, [r.label for r in rows]))
    return [r for r in rows if r.label in labels]


def finished_labels(db: PathLike, labels: Sequence[str] | None = None,
                    rule: StopRule | None = None) -> list[str]:
    """The labels (of ``labels``; default all) with nothing left to do under ``rule``: converged, or past the
    rule and not training. Paused labels, and labels stopped under a looser rule, are not finished (see
    :func:`clparse.train.status.finished`); without a rule, stopped and converged labels are."""
    from clparse.train.status import finished

    return [r.label for r in status(db, labels) if finished(r, rule)]


# --------------------------------------------------------------------- calibrating


def calibration_settings(db: PathLike, beam: int = 1000, max_pops: int = 10_000,
                         aggregator: str | None = None, tags: str | None = None) -> CalibrationSettings:
    """The search and tag settings of a calibration (``aggregator`` None: parse's default; ``tags`` None:
    the tagger's for a jackknifed run, else gold)."""
    from clparse.calibrate.run import CalibrationSettings, default_tags
    from clparse.parser import DEFAULT_AGGREGATOR

    return CalibrationSettings(beam, max_pops, aggregator or DEFAULT_AGGREGATOR, tags or default_tags(db))


def check_calibration(db: PathLike, dev: Sequence[PathLike] = ()) -> None:
    """What a calibration needs that a quick read can tell, checked before anything slow (the parser's
    modules load in a second or two, a model in more): dev sentences, given as ``dev`` files or stored
    by ``prepare``. Raises :class:`~clparse.errors.ParameterError` naming ``dev`` otherwise."""
    from clparse.store.database import Database

    if dev:
        return
    with Database(db, readonly=True) as database, database.raw() as connection:
        stored = connection.execute("SELECT EXISTS (SELECT 1 FROM sentences WHERE split = 'dev')").fetchone()
    if not stored or not stored[0]:
        raise ParameterError("dev", f"{db} has no dev sentences (prepare was given no --dev): give dev "
                                    "treebank files")


def calibration_grid(db: PathLike, thetas: Sequence[float] | None = None, points: int = 12) -> list[float]:
    """The Θ̂ values to calibrate at: ``thetas``, or up to ``points`` stored Θ values every label is trained
    past."""
    from clparse.calibrate.run import default_grid

    if isinstance(thetas, (str, bytes)):  # read one character at a time: float('.') failed deep inside
        raise ParameterError("thetas", f"give a list of numbers, not the string {thetas!r}")
    if thetas is not None and not all(isinstance(t, numbers.Real) and not isinstance(t, bool)
                                      and 0 <= t < float("inf") for t in thetas):
        raise ParameterError("thetas", f"give finite numbers ≥ 0, got {list(thetas)!r}")
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:  # 0 gave [] in silence
        raise ParameterError("points", f"must be a whole number ≥ 1, got {points!r}")
    return list(thetas) if thetas else default_grid(db, points)


def calibrate(db: PathLike, dev: Sequence[PathLike] = (), thetas: Sequence[float] | None = None, *,
              settings: CalibrationSettings | None = None,
              on_sentence: Callable[[float, int, int], object] | None = None,
              should_stop: Callable[[], bool] = lambda: False) -> CalibrationResult:
    """Parse the dev set (``dev`` files, else the stored dev split) at each Θ̂ of ``thetas`` (default: the
    grid of :func:`calibration_grid`), store the scores, mark the best; resumes at the first unfinished Θ̂."""
    from clparse.calibrate.run import calibrate as calibrate_run

    dev = treebank_paths(dev, "dev")
    # checked as calibration_grid checks them (they were not: a string failed inside, as float('.'))
    grid = calibration_grid(db, thetas) if thetas else None
    guard_writable(db)  # calibration writes its scores
    settings = settings or calibration_settings(db)
    grid = grid or calibration_grid(db)
    return calibrate_run(db, dev, grid, settings, on_sentence=on_sentence, should_stop=should_stop)


def calibrate_tags(db: PathLike, theta: float | str = "best", *, beam: int | None = None,
                   max_pops: int | None = None, alternatives: int | None = None,
                   aggregator: str | None = None,
                   on_sentence: Callable[[int, int], object] | None = None,
                   should_stop: Callable[[], bool] = lambda: False, echo: Echo = _quiet) -> ChooserFit | None:
    """Fit how ``parse`` chooses among the stored tagger's taggings of untagged input (docs/tagger.md) on
    the stored dev set, with the model at Θ̂ ``theta`` and parse's search settings (default: parse's
    defaults), and store it (:class:`~clparse.calibrate.tag_chooser.ChooserFit`: its dev F1s; ``chooser_id``
    None when too few taggings differed to fit it). None if ``should_stop`` said so: nothing stored.
    ``echo`` says if an older schema was upgraded (and where its backup is)."""
    from clparse.calibrate.tag_chooser import fit_tag_chooser
    from clparse.parser import TAG_ALTERNATIVES, SearchOptions
    from clparse.store.database import check_database

    defaults = SearchOptions()
    beam = defaults.beam if beam is None else beam
    max_pops = defaults.max_pops if max_pops is None else max_pops
    aggregator = defaults.aggregator if aggregator is None else aggregator
    alternatives = TAG_ALTERNATIVES if alternatives is None else alternatives
    if isinstance(alternatives, bool) or not isinstance(alternatives, int) or alternatives < 1:
        raise ParameterError("alternatives", f"must be a whole number ≥ 1 (taggings to choose among besides "
                                             f"the best), got {alternatives!r}")
    # refuses a bad beam, pop cap or aggregator
    SearchOptions(beam=beam, max_pops=max_pops, aggregator=aggregator, tag_alternatives=alternatives)
    _check_tag_chooser_fit(db)  # before the upgrade below, which copies the whole file first
    guard_writable(db)  # the chooser is stored
    check_database(db, upgrade=True, echo=echo)  # a writer: an older schema is upgraded first
    return fit_tag_chooser(db, theta, beam, max_pops, alternatives, on_sentence, should_stop, aggregator)


def train_tagger(db: PathLike, train: Sequence[PathLike] = (), *, epochs: int | None = None,
                 seed: int | None = None, on_epoch: Callable[[Any], object] | None = None,
                 should_stop: Callable[[], bool] = lambda: False, keep_worse: bool = False,
                 echo: Echo = _quiet) -> Any:
    """Train the tagger net beside the run's CRF (docs/tagger.md, "A second opinion") on the treebank files
    ``train`` (every tree) or the stored training sentences, keep the epoch best on the stored dev split,
    and store it, replacing a net stored before: from then on ``parse``, ``tag`` and ``calibrate-tags`` tag
    with both; not if the two together tag the dev split worse than the CRF alone (``keep_worse``: anyway).
    Returns a :class:`~clparse.tag.stored.NetFit` (``kept``: stored), or None if ``should_stop`` said so:
    nothing stored. Needs PyTorch (``pip install 'clparse[neural]'``)."""
    from clparse.store.database import check_database
    from clparse.tag.net_train import NetSettings
    from clparse.tag.stored import train_tagger_net

    settings = NetSettings()
    if epochs is not None or seed is not None:
        settings = NetSettings(epochs=settings.epochs if epochs is None else epochs,
                               seed=settings.seed if seed is None else seed)
    import importlib.util

    from clparse.tag.net_train import NEEDS_TORCH

    # what would refuse the work, asked before an older schema is upgraded (a backup copy of the whole file)
    try:
        missing = importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):  # a broken or blocked install
        missing = True
    if missing:
        raise ConfigurationError(NEEDS_TORCH)
    try:  # the net reads word clusters (a dependency, but an install can lack it)
        no_clusters = importlib.util.find_spec("spacy_lookups_data") is None
    except (ImportError, ValueError):
        no_clusters = True
    if no_clusters:
        raise ConfigurationError("the tagger net reads word clusters from spacy-lookups-data, which is not "
                                 "installed: pip install spacy-lookups-data")
    _check_crf_run(db)
    guard_writable(db)
    check_database(db, upgrade=True, echo=echo)  # a writer: an older schema is upgraded first
    return train_tagger_net(db, list(train), settings, on_epoch, should_stop, keep_worse)


def _check_crf_run(db: PathLike) -> None:
    """A prepared run (not a combination) whose stored tagger is the CRF, read from a database of any
    schema."""
    kinds = _stored_tagger_kinds(db)
    if kinds != ["crf"]:
        raise ConfigurationError(f"{db}: the tagger net goes beside the CRF, and this run's stored tagger is "
                                 + ("missing" if not kinds else f"a {kinds[0]}")
                                 + " (prepare again with --tagger crf, the default)")


def _check_tag_chooser_fit(db: PathLike) -> None:
    """What ``calibrate_tags`` needs that a quick read can tell, from a database of any schema: a run with
    a dev split and a CRF tagger (a combination or a perceptron has no taggings to choose among)."""
    no_dev = (f"{db} has no dev sentences (prepare was given no --dev): the tag chooser is fitted on the "
              "stored dev split; prepare again with --dev")
    if _stored_tagger_kinds(db, no_dev) != ["crf"]:
        from clparse.tag.choice import NOT_CRF

        raise ConfigurationError(f"{db}: {NOT_CRF}")


def _stored_tagger_kinds(db: PathLike, no_dev: str | None = None) -> list[str]:
    """The kinds of the run's stored taggers, read from a database of any schema, after refusing one that
    is not a prepared run (no run, a combination) and, with ``no_dev`` (the error to raise), one without a
    dev split."""
    from clparse.store import reading
    from clparse.store.database import Database

    with Database(db, readonly=True, allow_older=True) as database, database.raw() as connection:
        reading.run(connection, database.path)  # no run: "run clparse prepare", or "a combination: ..."
        if no_dev is not None and not reading.has_dev(connection):
            raise ConfigurationError(no_dev)
        return reading.tagger_kinds(connection)


def calibrate_per_label(db: PathLike, *, settings: CalibrationSettings | None = None, passes: int = 2,
                        on_trial: Callable[[str, float, float, bool], object] | None = None,
                        should_stop: Callable[[], bool] = lambda: False,
                        on_sentence: Callable[[str, float, int, int], object] | None = None
                        ) -> PerLabelResult:
    """Coordinate ascent over each label's Θ̂ on the stored dev set, from the best global Θ̂ (resumable).
    ``on_sentence(label, theta, done, total)`` follows each trial's parse of the dev set."""
    from clparse.calibrate.per_label import calibrate_per_label as per_label_run

    guard_writable(db)
    settings = settings or calibration_settings(db)
    return per_label_run(db, settings, passes, on_trial=on_trial, should_stop=should_stop,
                         on_sentence=on_sentence)


def report(db: PathLike, labels: bool = False, plot: PathLike | None = None) -> str:
    """Every calibration as text (with per-label F1 at the best Θ̂ if ``labels``); draws Figure 2 to
    ``plot``."""
    from clparse.calibrate.report import draw_figure, format_report

    text = format_report(db, labels)
    if plot is not None:
        draw_figure(db, plot)
    return text


# --------------------------------------------------------------------- parsing and tagging


def check_readable(db: PathLike, *, damage: bool = True) -> None:
    """``db`` is a clparse database of this version and (with ``damage``) undamaged: a wrong path is named
    before a slow load; damage anywhere is reported, not only in the pages a parse happens to read."""
    from clparse.store.database import check_database, quick_check

    check_database(db, upgrade=False)
    if damage:
        quick_check(db)


class _DamageCheck:
    """``PRAGMA quick_check`` of the tables a parser reads (:data:`~clparse.store.reading.CHECKED_TABLES`:
    not the training examples, gigabytes no parse reads), on a thread of its own while the parser loads.

    SQLite runs the check without Python's lock, so on a second core it costs the first parsed sentence
    little (0.4 s from a cold disk for the 6 GB all-length GUM run, whose whole-file check took 18 s).
    :meth:`result` waits for it and raises what it found; nothing is parsed before that.
    """

    def __init__(self, db: PathLike) -> None:
        import threading

        self._db = db
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="clparse: quick_check", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from clparse.store.database import quick_check
        from clparse.store.reading import CHECKED_TABLES

        try:
            quick_check(self._db, tables=CHECKED_TABLES)
        except BaseException as exc:  # handed to the caller's thread by result()
            self._error = exc

    def result(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def open_parser(db: PathLike, theta: float | str = "best", *, beam: int | None = None, max_pops: int = 10_000,
                aggregator: str | None = None, max_words: int = 0, kbest: int = 1,
                tag_alternatives: int | None = None, tag_chooser: bool = True,
                checked: bool = False) -> Parser:
    """The parser rebuilt from ``db`` at Θ̂ ``theta`` (a number > 0 or "best"), once :func:`check_readable`
    passes (its damage check runs while the parser loads; ``checked``: the caller already ran the whole
    check). ``beam`` None: 100 (a combination: the beam it was fitted with); ``aggregator`` None: the summed
    loss (a combination: the aggregator its weights were fitted to). ``kbest``: each result holds
    the K best distinct trees (``result.trees``, best first); ``tag_alternatives``: taggings of untagged
    input parsed beside the best one (None: :data:`clparse.parser.TAG_ALTERNATIVES`); ``tag_chooser``:
    choose among them with the run's fitted tag chooser, if one was fitted at this Θ̂ and aggregator
    (:func:`calibrate_tags`). A combination refuses a search it was not fitted with (another beam, tag
    alternatives, another aggregator)."""
    if theta != "best":
        if not (isinstance(theta, numbers.Real) and not isinstance(theta, bool) and 0 < theta < float("inf")):
            raise ParameterError("theta", f"{theta!r}: give a finite number > 0 or 'best'")
        if not isinstance(theta, (int, float)):
            theta = float(theta)  # a numpy number (numpy.float32 is no float): the Θ̂ of its value
    if not isinstance(kbest, int) or kbest < 1:
        raise ParameterError("kbest", f"must be a whole number ≥ 1, got {kbest!r}")
    if not isinstance(tag_chooser, bool):  # "no" would have turned it on
        raise ParameterError("tag_chooser", f"must be True or False, got {tag_chooser!r}")
    if checked:
        return _open_parser(db, theta, beam=beam, max_pops=max_pops, aggregator=aggregator,
                            max_words=max_words, kbest=kbest, tag_alternatives=tag_alternatives,
                            tag_chooser=tag_chooser)
    check_readable(db, damage=False)
    damage = _DamageCheck(db)
    try:
        parser = _open_parser(db, theta, beam=beam, max_pops=max_pops, aggregator=aggregator,
                              max_words=max_words, kbest=kbest, tag_alternatives=tag_alternatives,
                              tag_chooser=tag_chooser)
    except BaseException:
        damage.result()  # damage explains a failed load better than what the load tripped over
        raise
    damage.result()
    return parser


def _open_parser(db: PathLike, theta: float | str, *, beam: int | None, max_pops: int, aggregator: str | None,
                 max_words: int, kbest: int, tag_alternatives: int | None,
                 tag_chooser: bool = True) -> Parser:
    from clparse.parser import TAG_ALTERNATIVES, Parser, SearchOptions
    from clparse.store import reading  # not store.combinations: it imports SQLAlchemy (0.2 s)
    from clparse.store.database import Database

    # one parser or a combination's lead member: the same tag alternatives
    if tag_alternatives is None:
        tag_alternatives = TAG_ALTERNATIVES
    if not isinstance(tag_alternatives, int) or tag_alternatives < 0:
        raise ParameterError("tag_alternatives", f"must be a whole number ≥ 0, got {tag_alternatives!r}")
    with Database.of(db, readonly=True).raw() as connection:
        combined = reading.is_combination(connection)
    if combined:  # a database of `clparse combine`: its members parse as it says
        from clparse.combine.run import CombinedParser

        if theta != "best":
            raise ParameterError("theta", "a combination's members parse at the Θ̂ stored for each of them")
        if kbest != 1:
            raise ParameterError("kbest", "a combination gives one tree per sentence")
        # λ, ρ and τ were fitted to the members' K-best lists scored by the stored aggregator: another
        # search would be combined by weights fitted to a different one (it was dropped in silence);
        # CombinedParser.from_db refuses another aggregator. Untagged input: the lead member chooses the
        # tagging as it would alone (its tag alternatives and tag chooser), the others parse that one.
        return CombinedParser.from_db(db, max_pops=max_pops, beam=beam,  # type: ignore[return-value]
                                      aggregator=aggregator, max_words=max_words,
                                      tag_alternatives=tag_alternatives, tag_chooser=tag_chooser)
    if beam is None:
        beam = SearchOptions.beam  # the parser's own default (the command line's too)
    if aggregator is None:
        aggregator = SearchOptions.aggregator
    return Parser.from_db(db, theta=theta, beam=beam, max_pops=max_pops, aggregator=aggregator,
                          max_words=max_words, kbest=kbest, tag_alternatives=tag_alternatives,
                          tag_chooser=tag_chooser)


def describe_parser(parser: Parser, untagged: bool = True) -> str:
    """One line on what parses: the Θ̂, labels and splits of a parser, or a combination's members; for
    ``untagged`` input, whether a fitted tag chooser picks among the taggings."""
    stored = getattr(parser, "stored", None)
    if stored is not None:  # a CombinedParser
        lead = parser.members[parser.lead]  # type: ignore[attr-defined]
        chooser = ("; taggings chosen by the lead member's fitted tag chooser"
                   if untagged and lead.active_chooser else "")
        return (f"combination of {len(stored.members)} parsers (K = {stored.k}, ρ = {stored.threshold:.3g}, "
                f"{stored.aggregator}, dev F1 {stored.dev_f1:.2f}){chooser}")
    shown = "per label" if parser.model.label_thetas else f"{parser.model.theta:g}"
    chooser = "; taggings chosen by the fitted tag chooser" if untagged and parser.active_chooser else ""
    return f"parser at Θ̂ = {shown}: {len(parser.model.labels)} labels, {parser.model.splits} splits{chooser}"


@dataclass
class ParseTally:
    """What :func:`parse` met: sentences, flat fallback trees and greedy completions at the pop cap."""

    sentences: int = 0
    fallbacks: int = 0
    completions: int = 0
    notes: list[str] = field(default_factory=list)


def known_tags(db: PathLike) -> set[str]:
    """Every POS tag the run's features know, plus the punctuation tags preprocessing sets aside."""
    from clparse.preprocess import PUNCTUATION_TAGS
    from clparse.preprocess.transforms import EMPTY_ELEMENT_TAG
    from clparse.store import reading
    from clparse.store.database import Database

    with Database(db, readonly=True) as database, database.raw() as connection:
        seen = reading.feature_values(connection, "headtag")
    return seen | PUNCTUATION_TAGS | {EMPTY_ELEMENT_TAG}


def _file_names(files: Sequence[PathLike], parameter: str = "files") -> list[str]:
    """``files`` as names; one name alone is refused (a string would be read one character at a time)."""
    if isinstance(files, (str, Path)):
        raise ParameterError(parameter, f"give a list of file names, such as [{str(files)!r}], not one name")
    return [str(name) for name in files]


def _input_files(files: Sequence[PathLike]) -> list[str]:
    """Input files to read sentences from (``-`` is stdin): a missing file or a directory is one
    ParameterError naming it, as the command line says it (a FileNotFoundError from the reader before)."""
    names = _file_names(files)
    if names.count("-") > 1:  # the second read an exhausted stdin: nothing (tokens), or "no trees" (ptb)
        raise ParameterError("files", "'-' is given more than once; stdin can be read only once")
    for name in names:  # a pipe (/dev/fd/63, /dev/stdin) is not a regular file, and is taken
        problem = "a directory" if Path(name).is_dir() else None if Path(name).exists() else "no such file"
        if name != "-" and problem is not None:
            raise ParameterError("files", f"{name}: {problem}; give files of sentences (or '-' for stdin)")
    return names


def read_input(files: Sequence[str], input_format: str = "tokens", warn: Echo = _quiet,
               tags: set[str] | None = None) -> Iterator[Any]:
    """Sentences from ``files`` (``-`` is stdin) in ``input_format`` (tokens, tagged, ptb, or text: running
    text gives :class:`~clparse.parser.SourceSentence` objects, offsets counted from each file's start)."""
    from clparse.read.sentences import read_sentences

    files = _input_files(files)

    if input_format == "text":
        return _text_input(files)
    return read_sentences(files, input_format, warn, known_tags=tags)


def _text_input(files: Sequence[str]) -> Iterator[Any]:
    from clparse.parser import text_sentences
    from clparse.read.sentences import _lines

    for name in files:
        yield from text_sentences(line for _, line in _lines(name))


def parse(db: PathLike | Parser, files: Sequence[str] = ("-",), input_format: str = "tokens", *,
          theta: float | str = "best", warn: Echo = _quiet, tally: ParseTally | None = None, jobs: int = 1,
          dask: str | None = None, constraints: PathLike | None = None,
          **search: Any) -> Iterator[ParseResult]:
    """Parse every sentence of ``files`` in order; a flat fallback tree is reported through ``warn``, and
    it and each greedy completion at the pop cap are counted in ``tally`` (completions are not warned
    about one by one: ``parse`` says how many at the end). ``search``: beam, max_pops, aggregator,
    max_words, kbest, tag_alternatives, tag_chooser, as :func:`open_parser` takes them; ``db`` may also be a
    parser already open, which parses with its own Θ̂ and search (``theta`` or ``search`` beside it are
    refused). Each result serialises with ``result.to_dict()`` (``parse --format json``;
    :mod:`clparse.output`).

    ``jobs`` > 1 parses in that many processes (:mod:`clparse.parse_jobs`): forks of this one holding its
    parser where the system allows (Linux, the BSDs), else interpreters each rebuilding the parser from
    its database at the same Θ̂ and search options (a parser given here must have been opened from a
    database; its stored tagger is used): the results, the warnings and their order are the same as
    with one process, and a worker that fails or dies raises :class:`~clparse.errors.ClparseError`.
    ``dask`` (a scheduler address such as ``tcp://HOST:8786``, or ``local:N``) parses on that Dask
    cluster instead (:mod:`clparse.parse_dask`), with the same results and warnings: every worker opens
    the database at the same path, so they must all see it there; ``jobs`` must then be 1.

    ``constraints``: a JSON-lines file of known brackets, line n for sentence n
    (:mod:`clparse.search.constraints_file`); brackets that cannot hold stop with one error naming the
    file and line. A database made by ``clparse combine`` parses with its combination (one process).
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ParameterError("jobs", f"must be a whole number ≥ 1, got {jobs!r}")
    from clparse.read.sentences import FORMATS as INPUT_FORMATS

    if input_format not in INPUT_FORMATS:  # was said only once the model had loaded
        raise ParameterError("input_format", f"unknown input format {input_format!r}; choose one of "
                                             f"{', '.join(INPUT_FORMATS)}")
    if dask is not None:
        from clparse.dask_address import check_address, require_dask

        if jobs != 1:
            raise ParameterError("jobs", "is for parsing on this machine; with dask the cluster's workers "
                                         "parse")
        check_address(dask)
        require_dask()  # one line saying how to install it, before the model is loaded
    if constraints is not None:  # before the model loads (an OSError from the reader, after it, before)
        _constraints_file(constraints)
    if not isinstance(db, (str, Path)) and (search or theta != "best"):
        # a parser already open parses with its own Θ̂ and search: these were dropped in silence
        given = sorted(search) + (["theta"] if theta != "best" else [])
        raise ParameterError(given[0], f"{', '.join(given)} cannot change a parser already open: give "
                                       "them to open_parser, or pass the database's path here")
    from clparse.parse_jobs import ONE_PROCESS, refuse_combination

    if isinstance(db, (str, Path)):
        refuse_combination(db, jobs, dask)  # before the members load
    parser = open_parser(db, theta, **search) if isinstance(db, (str, Path)) else db
    combined = getattr(parser, "members", None)  # a CombinedParser: its lead member knows the tags
    if (combined is not None or constraints is not None) and (jobs != 1 or dask is not None):
        raise ParameterError("jobs", ONE_PROCESS)
    tagger_db = combined[parser.lead].source if combined is not None else parser.source  # type: ignore[attr-defined]
    tags = known_tags(tagger_db) if input_format == "tagged" and tagger_db is not None else None
    tally = tally if tally is not None else ParseTally()
    if jobs == 1 and dask is None:
        lines = _bracket_lines(constraints)
        for number, sentence in enumerate(read_input(files, input_format, warn, tags), 1):
            brackets = next(lines, None) if lines is not None else None
            if lines is not None and brackets is None:
                raise BracketError(f"{constraints}: {number - 1} line(s) for more sentences: one line of "
                                   "constraints per sentence ({} or an empty line for none)")
            try:
                result = parser.parse(sentence, brackets)
            except BracketError as exc:
                raise BracketError(f"{constraints}:{number}: sentence {number}: {exc}") from None
            _account(result, bool(sentence), tally, warn)
            yield result
        if lines is not None and next(lines, None) is not None:
            raise BracketError(f"{constraints}: more lines of constraints than sentences")
        return
    yield from _parse_elsewhere(parser, files, input_format, tags, warn, tally, jobs, dask)


def _constraints_file(constraints: PathLike) -> None:
    """A missing ``constraints`` file, or a directory, is one ParameterError naming it, as ``--constraints``
    says it (a FileNotFoundError or IsADirectoryError from the reader before); a pipe is taken."""
    if not isinstance(constraints, (str, Path)):
        raise ParameterError("constraints", f"give the name of a JSON-lines file, not {constraints!r}")
    path = Path(constraints)
    if not str(constraints):  # Path("") is the current directory
        problem: str | None = "no file name"
    else:
        problem = "a directory" if path.is_dir() else None if path.exists() else "no such file"
    if problem is not None:
        raise ParameterError("constraints", f"{str(constraints)!r}: {problem}; give a JSON-lines file of "
                                            "brackets, one line per sentence")


def _bracket_lines(constraints: PathLike | None) -> Iterator[Brackets] | None:
    if constraints is None:
        return None
    from clparse.search.constraints_file import read_brackets

    return read_brackets(constraints)


def _account(result: ParseResult, nonempty: bool, tally: ParseTally, warn: Echo) -> None:
    """Count ``result`` in ``tally``; warn about a flat fallback (a failure), only count a completion at
    the pop cap (a full tree, said once in the summary)."""
    tally.sentences += 1
    if result.fallback is not None and nonempty:  # an empty line was warned about when read
        tally.fallbacks += 1
        warn(f"sentence {tally.sentences}: flat tree ({result.fallback})")
    if result.completion is not None:
        tally.completions += 1


def _parse_elsewhere(parser: Parser, files: Sequence[str], input_format: str, tags: set[str] | None,
                     warn: Echo, tally: ParseTally, jobs: int, dask: str | None) -> Iterator[ParseResult]:
    """:func:`parse` in ``jobs`` processes, or on the Dask cluster at ``dask``. The input is read ahead of
    the parsing, so each warning met while reading a sentence is held and given just before that
    sentence's own: the order of one process."""
    from clparse.parse_jobs import parse_parallel

    held: list[str] = []

    def sentences() -> Iterator[tuple[Any, tuple[bool, list[str]]]]:
        for sentence in read_input(files, input_format, held.append, tags):
            notes = held.copy()
            held.clear()
            yield sentence, (bool(sentence), notes)

    if dask is not None:
        from clparse.parse_dask import parse_on_cluster

        results = parse_on_cluster(parser, sentences(), dask, notice=warn)
    else:
        results = parse_parallel(parser, sentences(), jobs)
    try:
        for result, (nonempty, notes) in results:
            for note in notes:
                warn(note)
            _account(result, nonempty, tally, warn)
            yield result
    finally:
        for note in held:  # met while reading the line that stopped the input (then its error follows)
            warn(note)


def count_input(files: Sequence[str], input_format: str = "tokens") -> int | None:
    """How many sentences ``files`` hold (None for stdin, which can be read only once); reading them all
    checks the whole input before anything slow starts."""
    from clparse.read.sentences import count_sentences

    files = _input_files(files)
    if "-" in files:
        return None
    return count_sentences(files, input_format)


def tag(db: PathLike, files: Sequence[str] = ("-",), warn: Echo = _quiet) -> Iterator[list[tuple[str, str]]]:
    """Tag tokenized text with the run's stored tagger: one sentence per line in, (word, tag) pairs out
    (``warn`` is told of a file that looks like running text, once).
    Parentheses are spelled -LRB- / -RRB- first, as ``parse`` and the treebank spell them (the tagger
    learnt them so: a raw ``(`` was tagged as a word). A combination's database tags with its lead
    member's tagger, as ``parse`` tags untagged input for it."""
    from clparse.read.sentences import read_sentences
    from clparse.read.tree import escape_brackets  # not clparse.parser: it imports numba (0.3 s)

    files = _input_files(files)
    tagger = _tagger(db)
    for sentence in read_sentences(files, "tokens", warn):
        words = [escape_brackets(str(w)) for w in sentence]
        yield list(zip(words, tagger.tag(words))) if words else []


def evaluate_tags(db: PathLike, gold: Sequence[PathLike]) -> TaggingReport:
    """The stored tagger against the tags of gold treebank files: accuracy, speed, confusions."""
    from clparse.read import read_trees
    from clparse.tag.evaluate import evaluate_tagger
    from clparse.tag.stored import NONE_TAG

    gold = treebank_paths(gold, "gold")
    if not gold:  # nothing to measure gave "0 sentences, 0 tokens: 0.00 %", a score of no tagging
        raise ParameterError("gold", "give at least one gold treebank file")
    tagger = _tagger(db)
    sentences = ([(w, t) for w, t in tree.tagged_words() if t != NONE_TAG] for path in gold
                 for tree in read_trees(path))
    report = evaluate_tagger(tagger, sentences)
    if not report.tokens:  # trees of empty elements alone: "0.00 % tagged as in the gold trees", status 0
        raise ClparseError(f"{', '.join(map(str, gold))}: no word to tag (every tree holds empty elements "
                           "alone, tagged -NONE-): nothing to measure")
    return report


def _tagger(db: PathLike) -> Any:
    from clparse.store import reading
    from clparse.store.database import Database
    from clparse.tag.stored import load_tagger

    with Database.of(db, readonly=True).raw() as connection:
        combined = reading.is_combination(connection)
    if combined:  # parse tags untagged input with its lead member's tagger: tag does the same
        db = _lead_member(db)
    tagger = load_tagger(db)
    if tagger is None:
        raise ConfigurationError(f"{db} has no tagger; run prepare again with the same inputs to add one")
    return tagger


def _lead_member(db: PathLike) -> str:
    """The database of a combination's lead member (the largest λ, as :class:`CombinedParser` picks it),
    whose tagger tags what the combination parses."""
    from clparse.store import combinations

    stored = combinations.latest(db)
    if stored is None:
        raise ConfigurationError(f"{db}: no combination stored")
    weights = [m.weight for m in stored.members]
    lead = stored.members[weights.index(max(weights))]  # the first of equal weights, as numpy's argmax
    if lead.kind != "clparse":
        others = ", ".join(m.source for m in stored.members if m.kind == "clparse") or "none"
        raise ConfigurationError(f"{db}: a combination whose lead member {lead.source} is another parser's "
                                 f"trees (a file), with no tagger: tag with a clparse member's database "
                                 f"({others})")
    if not Path(lead.source).exists():  # "no such database ... prepare --db MEMBER" named a path never given
        raise ConfigurationError(f"{db}: its member {lead.source} is not there (moved or deleted?): a "
                                 "combination names its members' databases by path; put it back, or fit the "
                                 "combination again with `clparse combine`")
    return lead.source
