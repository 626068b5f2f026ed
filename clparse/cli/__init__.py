"""The ``clparse`` command line: a thin click layer over the :mod:`clparse` library.

Every command parses its options, calls one library function and prints the
result. Errors clparse raises on purpose (bad files, bad settings) become one
``Error: ...`` line on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from clparse.errors import ClparseError


def _fail(exc: BaseException, db: Path | None) -> click.ClickException:
    """One ``Error:`` line for an error met while running a command (details with ``--verbose``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and (ctx.find_root().params.get("verbose") or False):
        import traceback

        traceback.print_exception(exc)
    if isinstance(exc, ClparseError):
        return click.ClickException(str(exc))
    if isinstance(exc, OSError):  # missing file, full disk, permission: name the file
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return click.ClickException(f"{where}{exc.strerror or exc}")
    # SQLite errors reach here as APSW's or SQLAlchemy's exceptions, with SQL and parameters in their text.
    from clparse.store.database import sqlite_error

    return click.ClickException(str(sqlite_error(exc, db if db is not None else "the database")))


def _is_sqlite_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("apsw", "sqlalchemy")  # checked without importing either


class _Command(click.Command):
    """A click command that turns clparse's own errors, OS and database errors into one ``Error:`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # click exits quietly when stdout is closed early (`clparse eval ... | head`)
        except ClparseError as exc:
            raise _fail(exc, ctx.params.get("db")) from None
        except OSError as exc:
            raise _fail(exc, ctx.params.get("db")) from None
        except Exception as exc:
            if not _is_sqlite_error(exc):
                raise
            raise _fail(exc, ctx.params.get("db")) from None


class _Group(click.Group):
    command_class = _Command


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
TREEBANK = click.Path(exists=True, path_type=Path)  # a file, or a directory of *.ptb / *.mrg files


def _treebank_files(ctx: click.Context, param: click.Parameter, value: tuple[Path, ...]) -> tuple[Path, ...]:
    """Directories given for treebank files stand for their *.ptb and *.mrg files."""
    from clparse.read.paths import treebank_files

    try:
        return tuple(treebank_files(value))
    except ClparseError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


class _ManyValues(_Command):
    """``--train a.ptb b.ptb`` (what a shell glob gives) means ``--train a.ptb --train b.ptb``.

    Click options take one value each; this command rewrites the arguments so that the words
    following one of :attr:`options` up to the next option all belong to it.
    """

    options: tuple[str, ...] = ("--train", "--dev")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        current: str | None = None
        taken = 0
        for n, arg in enumerate(args):
            if arg == "--":
                out += args[n:]
                break
            if arg in self.options:
                current, taken = arg, 0
                out.append(arg)
            elif current is not None and not arg.startswith("-"):
                out += [arg] if taken == 0 else [current, arg]
                taken += 1
            else:
                current = None
                out.append(arg)
        return super().parse_args(ctx, out)


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(package_name="clparse")
@click.option("-v", "--verbose", is_flag=True, help="On an error, print the full details (traceback) too.")
def main(verbose: bool) -> None:
    """clparse: constituent parsing by classification (Turian & Melamed 2005).

    The training state lives in SQLite. Start with `clparse quickstart`, or
    look at a treebank with `clparse treebank stats FILES`. Every error is one
    `Error: ...` line and exit status 1; `clparse --verbose COMMAND` adds the details.
    """


# --------------------------------------------------------------------- treebank


def _step_names() -> tuple[str, ...]:
    from clparse.preprocess import STEP_NAMES

    return tuple(STEP_NAMES)


def _preprocess_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--skip-step", "skip_steps", multiple=True, type=click.Choice(_step_names()),
                        help="Switch off one preprocessing step (repeatable).")(func)
    func = click.option("--max-words", type=click.IntRange(min=1), default=None,
                        help="Keep sentences of at most N words, punctuation not counted.")(func)
    return func


def _read(files: Iterable[Path], skip_bad: bool) -> Iterator[Any]:
    from clparse.read import ReadReport, read_treebank

    report = ReadReport()
    yield from read_treebank(files, skip_bad=skip_bad, report=report)
    if report.skipped:
        first = report.first_errors[0] if report.first_errors else "?"
        click.echo(f"warning: skipped {report.skipped} malformed tree(s); first: {first}", err=True)


@main.group(cls=_Group)
def treebank() -> None:
    """Look at treebank files: statistics, preprocessing."""


@treebank.command("stats")
@click.argument("files", nargs=-1, required=True, type=TREEBANK, callback=_treebank_files)
@click.option("--preprocess/--raw", default=False, show_default=True,
              help="Count after the Table 3 preprocessing steps (and the length filter).")
@_preprocess_options
@click.option("--skip-bad", is_flag=True, help="Skip malformed trees (and say how many) instead of stopping.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--bucket", type=click.IntRange(min=1), default=5, show_default=True,
              help="Width of the length-histogram buckets.")
def treebank_stats_command(files: tuple[Path, ...], preprocess: bool, max_words: int | None,
                           skip_steps: tuple[str, ...], skip_bad: bool, as_json: bool, bucket: int) -> None:
    """Sentences, words, label counts and a length histogram of FILES."""
    from clparse.preprocess import PreprocessConfig, PreprocessReport, preprocess_treebank
    from clparse.read.stats import treebank_stats

    trees: Iterable[Any] = _read(files, skip_bad)
    report = None
    if preprocess:
        report = PreprocessReport()
        config = PreprocessConfig.without(skip_steps, max_words=max_words)
        trees = (p.tree for p in preprocess_treebank(trees, config, report))
    stats = treebank_stats(trees)
    if as_json:
        payload = stats.to_dict()
        if report is not None:
            payload["preprocessing"] = report.to_dict()
        click.echo(json.dumps(payload, indent=2))
        return
    if report is not None:
        click.echo(report.format() + "\n")
    click.echo(stats.format(bucket))


@treebank.command("preprocess")
@click.argument("files", nargs=-1, required=True, type=TREEBANK, callback=_treebank_files)
@_preprocess_options
@click.option("-o", "--output", type=click.File("w", encoding="utf-8"), default="-",
              help="Where to write the trees (default: stdout).")
@click.option("--indented", is_flag=True, help="Indented trees instead of one per line.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed trees (and say how many) instead of stopping.")
def treebank_preprocess_command(files: tuple[Path, ...], max_words: int | None, skip_steps: tuple[str, ...],
                                output: Any, indented: bool, skip_bad: bool) -> None:
    """Write FILES after preprocessing (Table 3), with a report of what changed on stderr."""
    from clparse.preprocess import PreprocessConfig, PreprocessReport, preprocess_treebank
    from clparse.read import write_trees

    report = PreprocessReport()
    config = PreprocessConfig.without(skip_steps, max_words=max_words)
    write_trees((p.tree for p in preprocess_treebank(_read(files, skip_bad), config, report)), output,
                indented=indented)
    click.echo(report.format(), err=True)


# --------------------------------------------------------------------- evaluation


def _params(prm: Path | None, collins: bool) -> Any:
    from clparse.evaluate import EvalbParams

    if prm is not None:
        return EvalbParams.from_prm_file(prm)
    return EvalbParams.collins() if collins else EvalbParams()


_eval_options = [
    click.option("--prm", type=EXISTING_FILE, default=None,
                 help="An EVALB parameter file to use instead of the built-in settings."),
    click.option("--collins-prm", is_flag=True,
                 help="Use COLLINS.prm exactly (a ROOT wrapper then counts as a bracket)."),
    click.option("--one-per-line", is_flag=True,
                 help="Read test files as EVALB does: one parse per line, a blank line is a failed parse."),
]


def _with_eval_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_eval_options):
        func = option(func)
    return func


@main.command("eval")
@click.argument("gold", type=EXISTING_FILE)
@click.argument("test", type=EXISTING_FILE)
@_with_eval_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON (totals, cut-off totals, per-length table).")
@click.option("--by-length", type=click.IntRange(min=1), default=None, metavar="N",
              help="Also print scores per sentence length, in buckets of N words.")
@click.option("--sentences", is_flag=True, help="Also print EVALB's per-sentence table.")
def eval_command(gold: Path, test: Path, prm: Path | None, collins_prm: bool, one_per_line: bool,
                 as_json: bool, by_length: int | None, sentences: bool) -> None:
    """PARSEVAL scores of TEST against GOLD, computed exactly as EVALB does.

    Defaults are EVALB's COLLINS.prm plus `DELETE_LABEL ROOT` (so a ROOT
    wrapper is not counted, like TOP). Sentences with mismatched words are
    reported and left out, as EVALB does; more than MAX_ERROR of them stop
    the evaluation with exit status 1.
    """
    from clparse.evaluate import evaluate_files
    from clparse.evaluate.report import format_by_length, format_sentences, format_summary

    result = evaluate_files(gold, test, _params(prm, collins_prm), one_per_line=one_per_line)
    for s in result.sentences:
        if s.status == "error":
            click.echo(f"warning: sentence {s.index}: {s.message}", err=True)
    if result.all.skipped:
        click.echo(f"warning: {result.all.skipped} empty parse(s) skipped, as EVALB does", err=True)
    if as_json:
        payload: dict[str, Any] = {"all": result.all.to_dict(), "cutoff_length": result.params.cutoff_length,
                                   "short": result.short.to_dict()}
        if by_length:
            payload["by_length"] = {name: t.to_dict() for name, t in result.by_length(by_length)}
        if sentences:
            payload["sentences"] = [vars(s) for s in result.sentences]
        click.echo(json.dumps(payload, indent=2))
        return
    if sentences:
        click.echo(format_sentences(result))
    click.echo(format_summary(result))
    if by_length:
        click.echo("\n" + format_by_length(result, by_length))


@main.command("compare")
@click.argument("gold", type=EXISTING_FILE)
@click.argument("a", type=EXISTING_FILE)
@click.argument("b", type=EXISTING_FILE)
@_with_eval_options
@click.option("--trials", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Shuffling trials (the paper used 1,000,000).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the shuffles.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compare_command(gold: Path, a: Path, b: Path, prm: Path | None, collins_prm: bool, one_per_line: bool,
                    trials: int, seed: int, as_json: bool) -> None:
    """Is parser A better than parser B on GOLD? Paired stratified shuffling test (paper §3).

    Prints recall, precision and F1 of both and a two-sided p-value for each difference.
    """
    from clparse.evaluate import compare, evaluate_files
    from clparse.evaluate.report import format_comparison

    params = _params(prm, collins_prm)
    result = compare(evaluate_files(gold, a, params, one_per_line=one_per_line),
                     evaluate_files(gold, b, params, one_per_line=one_per_line), trials=trials, seed=seed)
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else format_comparison(result))


# --------------------------------------------------------------------- database

DB_OPTION = click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=Path("db/clparse.sqlite"),
                         show_default=True, help="The training database.")


@main.command("init")
@DB_OPTION
def init_command(db: Path) -> None:
    """Create a training database, or upgrade an older one (after a backup copy)."""
    from clparse.store.database import init_database, quick_check

    if db.exists() and db.stat().st_size > 0:
        quick_check(db)  # an upgrade writes: never into a damaged file
    init_database(db, echo=click.echo)
    click.echo(f"{db}: ready")


def _skip_bad_refused(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        raise click.UsageError("prepare does not skip bad trees: a run stores every tree of its files (and "
                               "their digests); fix the tree the error names, or write the good trees with "
                               "`clparse treebank preprocess --skip-bad --skip-step ...` first", ctx)
    return value


@main.command("prepare", cls=_ManyValues)
@DB_OPTION
@click.option("--train", "train", multiple=True, required=True, type=TREEBANK, callback=_treebank_files,
              help="Training treebank files, or directories of *.ptb/*.mrg files (several after one --train, "
                   "or --train repeated).")
@click.option("--dev", "dev", multiple=True, type=TREEBANK, callback=_treebank_files,
              help="Development treebank files or directories (like --train).")
@click.option("--max-words", type=click.IntRange(min=0), default=15, show_default=True,
              help="Keep sentences of at most N words, punctuation not counted; 0 keeps every sentence. 15 is "
                   "the paper's setting (its authors lacked the time for longer ones); every length means "
                   "many times the examples and training time.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random bottom-up paths.")
@click.option("--order", type=click.Choice(["random", "l2r", "r2l"]), default="random", show_default=True,
              help="Item order of the training paths (paper §3.5): one seeded random path per tree, or the "
                   "deterministic left-to-right / right-to-left order, with one correct inference per state and "
                   "only the spans the order allows as candidates (fewer examples); the parser keeps the same "
                   "order.")
@click.option("--context", type=click.IntRange(0, 5), default=2, show_default=True,
              help="Context items on each side that features may look at.")
@click.option("--max-children", type=click.IntRange(min=1), default=5, show_default=True,
              help="K: most children an inferred item may have.")
@click.option("--vocab-min", type=click.IntRange(min=1), default=5, show_default=True,
              help="Words seen fewer times in training become UNK (1 keeps the full vocabulary).")
@click.option("--skip-step", "skip_steps", multiple=True, type=click.Choice(_step_names()),
              help="Switch off a preprocessing step (repeatable).")
@click.option("--constraints/--no-constraints", default=True, show_default=True,
              help="Candidate constraints: no span beginning or ending with punctuation, ROOT only over a "
                   "single item (no gold tree needs either after preprocessing; fewer examples, faster parsing).")
@click.option("--unknown-words", type=click.Choice(["unk", "signatures"]), default="unk", show_default=True,
              help="Rare words (below --vocab-min) become one UNK, or an UNK signature of their shape and "
                   "suffix (UNK-Cap, UNK-num, UNK-ly, ...).")
@click.option("--template", "templates", multiple=True,
              type=click.Choice(["child-extra", "head-of-child", "context-exists", "length", "none"]),
              help="Richer feature templates beside the paper's (repeatable; default: all four, which measured "
                   "+0.6 F1): child-extra (second, second-to-last, head±2 children), head-of-child (each "
                   "edge/head child's head child), context-exists (exists-tests over the context items), length "
                   "(bucketed counts of children and words). Naming some keeps only those; `none` keeps the "
                   "paper's templates alone.")
@click.option("--tagger", type=click.Choice(["crf", "perceptron"]), default="crf", show_default=True,
              help="The run's POS tagger, for raw text: a CRF (CRFsuite; 96.2 % on GUM dev) or NLTK's averaged "
                   "perceptron (95.0 %). Stored in the database as data.")
@click.option("--train-tags", type=click.Choice(["gold", "jackknife"]), default="gold", show_default=True,
              help="Tags on the training trees' leaves: the treebank's gold tags, or jackknifed tagger tags "
                   "(each fold tagged by a tagger trained on the other folds), so the parser learns from the "
                   "tag errors it will meet on raw text.")
@click.option("--folds", type=click.IntRange(min=2), default=10, show_default=True,
              help="Jackknife folds (with --train-tags jackknife).")
@click.option("--fold-order", type=click.Choice(["interleaved", "contiguous"]), default="interleaved",
              show_default=True,
              help="How training sentences are dealt into jackknife folds: sentence i to fold i mod N, so each "
                   "fold's tagger sees every genre (as the final tagger does), or N contiguous blocks.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes training the jackknife folds' taggers at once.")
@click.option("--tagger-iterations", type=click.IntRange(min=1), default=None,
              help="Training iterations of the tagger(s) (default: CRF 150, perceptron 5).")
@click.option("--skip-bad", is_flag=True, hidden=True, expose_value=False, callback=_skip_bad_refused)
def prepare_command(db: Path, train: tuple[Path, ...], dev: tuple[Path, ...], max_words: int, seed: int,
                    order: str, context: int, max_children: int, vocab_min: int, skip_steps: tuple[str, ...],
                    constraints: bool, unknown_words: str, templates: tuple[str, ...], tagger: str,
                    train_tags: str, folds: int, fold_order: str, jobs: int, tagger_iterations: int | None) -> None:
    """Read and preprocess the treebank and store every training example with its features.

    One seeded random bottom-up path per training tree; every candidate at every state on it
    becomes an example of its label (paper §2.1.1). Running it again with the same inputs does
    nothing; with other inputs or settings it refuses (use a new --db). A malformed tree stops it
    (no --skip-bad: a run holds whole files); a database this command created is then removed.

    \b
    clparse prepare --db db/gum.sqlite --train gum/train/*.ptb --dev gum/dev/*.ptb
    clparse prepare --db db/gum.sqlite --train gum/train --dev gum/dev
    """
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.progress import Progress
    from clparse.store.database import new_or_existing, quick_check

    settings = PrepareSettings(max_words=max_words or None, seed=seed, max_children=max_children, vocab_min=vocab_min,
                               features=_features(context, templates),
                               skip_steps=tuple(skip_steps),
                               constraints=constraints, unknown_words=unknown_words, tagger=tagger,
                               train_tags=train_tags, folds=folds, fold_order=fold_order,
                               tagger_iterations=tagger_iterations, order=order)
    bar: Progress | None = None
    fold_bar: Progress | None = None

    def fold_done(_fold: int) -> None:
        nonlocal fold_bar
        if fold_bar is None:
            fold_bar = Progress("jackknife taggers", folds, "folds")
        fold_bar.update(1)

    def start(total: int) -> None:
        nonlocal bar
        bar = Progress("generating examples", total, "sentences")

    if db.exists() and db.stat().st_size > 0:
        quick_check(db)  # never write into a damaged file
    with new_or_existing(db, echo=click.echo, warn=lambda message: click.echo(message, err=True)):
        try:
            if train_tags == "jackknife":
                click.echo(f"training {folds} {tagger} taggers for the jackknifed training tags, {jobs} at a time",
                           err=True)
            summary = prepare(db, train, dev, settings, progress=lambda n: bar.update(n) if bar else None,
                              total=start, jobs=jobs, on_fold=fold_done)
        finally:
            for shown in (fold_bar, bar):
                if shown is not None:
                    shown.close()
    click.echo(summary.message)
    if summary.created:
        click.echo(f"{'label':<10}{'candidates':>12}{'positive':>10}{'distinct':>10}")
        for label, row in summary.labels.items():
            click.echo(f"{label:<10}{row['candidates']:>12,}{row['positives']:>10,}{row['examples']:>10,}")


def _features(context: int, templates: tuple[str, ...]) -> Any:
    """The feature templates of ``prepare --template``: all richer ones unless some (or ``none``) are named."""
    from clparse.features.space import RICHER, FeatureConfig

    if not templates:
        return FeatureConfig(context=context)
    if "none" in templates and len(set(templates)) > 1:
        raise click.UsageError("--template none cannot be combined with other templates")
    chosen = {t.replace("-", "_") for t in templates}
    return FeatureConfig(context=context, **{name: name in chosen for name in RICHER})


class _SqlCommand(_Command):
    """Lets a query start with ``--``: a pasted README example begins with an SQL comment, which click
    would otherwise read as an unknown option. An argument starting with ``-`` that holds a space
    or a line break cannot be an option, so it is the query."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        queries = [a for a in args if a.startswith("-") and any(c.isspace() for c in a)]
        if queries and "--" not in args:
            args = [a for a in args if a not in queries] + ["--", *queries]
        return super().parse_args(ctx, args)


@main.command("sql", cls=_SqlCommand)
@DB_OPTION
@click.argument("query", required=False)
@click.option("--csv", "as_csv", is_flag=True, help="CSV output.")
@click.option("--json", "as_json", is_flag=True, help="JSON output (a list of objects).")
@click.option("--write", is_flag=True, help="Open read-write (default: read-only, so nothing can be changed).")
def sql_command(db: Path, query: str | None, as_csv: bool, as_json: bool, write: bool) -> None:
    """Run QUERY on the database, or open an interactive SQL shell without one.

    QUERY may hold several statements (each one's rows are printed in turn) and may start with a
    `-- comment`, so the README's examples can be pasted as they are. Without --write nothing is
    written anywhere: no ATTACH or VACUUM INTO, no pragma that sets something, and the shell has
    no .open, .backup, .output, .py or .shell. See the README for ready-made queries.
    """
    from clparse.query import interactive_shell, run_query
    from clparse.store.database import quick_check

    if write and db.exists():
        quick_check(db)  # never write into a damaged file
    if query is None:
        interactive_shell(db, write=write)
        return
    click.echo(run_query(db, query, fmt="csv" if as_csv else "json" if as_json else "table", write=write), nl=False)


@main.command("backup", short_help="Copy the database to a new file (safe while training runs).")
@DB_OPTION
@click.argument("target", type=click.Path(dir_okay=False, path_type=Path))
def backup_command(db: Path, target: Path) -> None:
    """Copy the database to TARGET (a new file), consistently, also while training writes to it.

    Uses SQLite's backup API: the copy is one snapshot of committed data, never a half-written
    iteration. TARGET must not exist yet.
    """
    from clparse.store.database import backup_database

    size = backup_database(db, target)
    click.echo(f"{db} backed up to {target} ({size / 1e6:,.1f} MB)")


@main.command("check", short_help="Check the database file for damage.")
@DB_OPTION
def check_command(db: Path) -> None:
    """Check the database file for damage (SQLite's integrity check); exit status 1 if damaged."""
    from clparse.store.database import integrity_check

    integrity_check(db)
    click.echo(f"{db}: ok")


# --------------------------------------------------------------------- training


def _stop_request(what: str, command: str) -> Any:
    """Ctrl-C / SIGTERM: finish and commit the current ``what``, then stop; a second Ctrl-C gives up
    waiting (the work in flight is lost, nothing stored is harmed)."""
    from clparse.interrupt import StopRequest

    def say() -> None:
        click.echo(f"\nstopping after the current {what} (it is committed first); run `{command}` again "
                   "to resume", err=True)

    return StopRequest(say, second_interrupt_raises=True).install()


def _dask_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--dask: checked before anything slow starts (Dask itself is imported only if given)."""
    if value is None:
        return None
    from clparse.train.cluster import check_address

    try:
        return check_address(value)
    except ClparseError as exc:
        raise click.BadParameter(str(exc).removeprefix(f"--dask {value!r}: "), ctx, param) from None


@main.command("train")
@DB_OPTION
@click.option("--labels", default=None, metavar="NP,VP,...", help="Labels to train (default: all).")
@click.option("--until-theta", type=float, default=None, metavar="X",
              help="Stop a label once its Θ falls below X. Default (no stop option given): "
                   "1e-6 × the mean number of candidates per label.")
@click.option("--max-iterations", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop a label at N trees in all.")
@click.option("--max-splits", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop a label once its trees hold N splits in all.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Labels trained at once, each in its own process.")
@click.option("--dask", "dask_address", default=None, metavar="tcp://HOST:PORT | local:N",
              callback=_dask_address,
              help="Compute the labels on a Dask cluster (a scheduler's address, or local:N worker processes "
                   "here); this process alone writes the database. Needs pip install 'clparse[dask]'. See "
                   "docs/scale-out.md.")
@click.option("--dask-batch", type=click.IntRange(min=1), default=50, show_default=True, metavar="N",
              help="With --dask: a worker sends back at most N iterations (and about a second of work) at a time.")
@click.option("--stumps", is_flag=True, help="Decision stumps (trees of depth 1, paper §3.4).")
@click.option("--max-depth", type=click.IntRange(min=1), default=None, help="Cap the depth of every tree.")
@click.option("--loss", type=click.Choice(["logistic", "exponential"]), default="logistic", show_default=True,
              help="Logistic loss (the paper) or exponential loss (AdaBoost, footnote 2).")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=50, show_default=True,
              help="Keep the margin vector every N iterations (weights of other iterations are rebuilt "
                   "from the trees when queried).")
@click.option("--smoothing", type=click.FloatRange(min=0.0), default=None,
              help="Leaf smoothing: ε = 1e-8 + S × the mean weight of a candidate example, so a leaf holding a "
                   "few examples gets a modest confidence (0.5 is Schapire & Singer's ε = 1/2N; 0: the paper's). "
                   "Default: what the run's labels were started with, else 0.5 (it measured +0.74 F1).")
@click.option("--rule", "tree_rule", type=click.Choice(["mrl", "l1"]), default=None,
              help="How trees grow: mrl, the paper's (ΔZ splits under Θ, κ = ½ ln W+/W−), or l1, the authors' "
                   "2006 release (splits and confidences pay an ℓ1 penalty λ, which takes Θ's place). Default: "
                   "what the run's labels were started with, else mrl.")
@click.option("--sample", type=click.IntRange(min=2), default=None,
              help="Grow each tree on a priority sample of at most N distinct examples (weights kept unbiased; "
                   "leaf confidences still from every example), as the authors' release did with 100000: faster "
                   "iterations on large runs, seeded, so resuming stays bit-identical. Default: what the run's "
                   "labels were started with, else every example (exact).")
@click.option("--sample-seed", type=int, default=None,
              help="Seed of the per-tree samples (default: the started run's, else 0).")
def train_command(db: Path, labels: str | None, until_theta: float | None, max_iterations: int | None,
                  max_splits: int | None, jobs: int, dask_address: str | None, dask_batch: int, stumps: bool, max_depth: int | None, loss: str,
                  checkpoint_every: int, smoothing: float | None, tree_rule: str | None, sample: int | None,
                  sample_seed: int | None) -> None:
    """Boost each label's decision trees (paper §2.1.2-2.1.3), resumably.

    Every iteration (tree, Θ, loss, weights checkpoint) is committed in one transaction: Ctrl-C or
    SIGTERM stops after the current iteration, a kill loses at most the iteration in flight, and
    running the same command again resumes every label where it stopped, with trees identical to
    an uninterrupted run. Settings (--loss, --stumps, --max-depth, --checkpoint-every, --smoothing,
    --rule, --sample) are fixed per label at its first iteration. Watch a run with `clparse status`.
    """
    from clparse.boost import BoostSettings
    from clparse.train import StopRule, train
    from clparse.train.parallel import resolve, started_settings

    if stumps and max_depth not in (None, 1):
        raise click.UsageError("--stumps means --max-depth 1")
    if dask_address is not None and jobs != 1:
        raise click.UsageError("--jobs is for training on this machine; with --dask the cluster's workers train")
    if dask_address is not None:
        from clparse.train.cluster import require_dask

        require_dask()  # one line saying how to install it, before anything slow
    # A run already started keeps its tree rule and smoothing unless told otherwise (defaults have changed
    # since some runs began: resuming must not need the old values spelled out).
    started = started_settings(db)
    rule_default = started.rule if started else BoostSettings().rule
    if tree_rule is None:
        tree_rule = rule_default
    if smoothing is None and started is not None and started.rule == tree_rule:
        smoothing = started.smoothing  # None otherwise: the rule's own default
    if sample is None and started is not None:
        sample = started.sample
    if sample_seed is None:
        sample_seed = started.sample_seed if started is not None else 0
    settings = BoostSettings(loss=loss, max_depth=1 if stumps else max_depth, checkpoint_every=checkpoint_every,
                             smoothing=smoothing, rule=tree_rule, sample=sample, sample_seed=sample_seed)
    chosen = [x.strip() for x in labels.split(",") if x.strip()] if labels else None
    chosen, rule = resolve(db, chosen, StopRule(until_theta, max_iterations, max_splits), settings)
    where = f"on the Dask cluster {dask_address}" if dask_address else f"{jobs} at a time"
    click.echo(f"training {len(chosen)} label(s) {rule.describe()}, {where}; Ctrl-C pauses", err=True)
    flag = _stop_request("iteration", "clparse train")

    from clparse.progress import TrainingProgress

    # On a terminal: labels done out of the total and the labels in flight; logs get the summary only.
    bar = TrainingProgress(len(chosen))

    def show(label: str, result: Any) -> None:
        bar.iteration(label, result.iteration, result.theta)

    def poll() -> None:
        from clparse.train import label_status

        rows = [r for r in label_status(db) if r.label in chosen]
        finished = sum(r.state not in ("training", "pending") for r in rows)
        bar.poll(finished, {r.label: (r.iteration, r.theta) for r in rows if r.state == "training"})

    summary = train(db, chosen, settings, rule, jobs, should_stop=flag, on_iteration=show if bar.enabled else None,
                    on_poll=poll if bar.enabled else None, dask=dask_address, batch_iterations=dask_batch)
    bar.finish(sum(state not in ("paused", "refused") for state in summary.states.values()))
    from clparse.train import format_status, label_status

    click.echo(format_status([r for r in label_status(db) if r.label in chosen]))
    if summary.cluster is not None:
        click.echo(summary.cluster.describe(), err=True)
    for label, error in summary.refused.items():
        click.echo(f"warning: label {label} left alone: {error}", err=True)
    for label, error in summary.failures.items():
        click.echo(f"warning: label {label} failed: {error}", err=True)
    if summary.interrupted:
        click.echo("paused; run the same command again to resume", err=True)
    if summary.failures or summary.refused:
        sys.exit(1)


@main.command("status")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status_command(db: Path, as_json: bool) -> None:
    """Per label: iteration, Θ, splits, loss, examples/s, state, last update (works during training)."""
    from dataclasses import asdict

    from clparse.train import format_status, label_status

    rows = label_status(db)
    click.echo(json.dumps([asdict(r) for r in rows], indent=2) if as_json else format_status(rows))


# --------------------------------------------------------------------- parsing


class _Theta(click.ParamType):
    """Θ̂: a number ≥ 0, or "best" (the calibrated one). Checked before anything is loaded."""

    name = "theta"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float | str:
        if value == "best" or isinstance(value, float):
            return value  # type: ignore[no-any-return]
        try:
            theta = float(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number nor 'best'", param, ctx)
        if not theta >= 0 or theta == float("inf"):
            self.fail(f"{value!r}: Θ̂ must be a finite number ≥ 0", param, ctx)
        return theta


def search_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--beam, --max-pops and --aggregator, the same for every command that searches (parse, calibrate)."""
    for option in reversed((
        click.option("--beam", type=click.IntRange(min=1), default=1000, show_default=True,
                     help="Agenda size; 1 parses greedily."),
        click.option("--max-pops", type=click.IntRange(min=1), default=10_000, show_default=True,
                     help="After this many popped states, finish the sentence greedily from the best state "
                          "(with a warning) instead of searching on."),
        click.option("--aggregator", type=click.Choice(["maxmin", "sum"]), default="maxmin", show_default=True,
                     help="Max-min confidence (the paper) or summed logistic loss (Eq. 15)."),
    )):
        command = option(command)
    return command


@main.command("parse")
@DB_OPTION
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--theta", type=_Theta(), default="best", show_default=True, metavar="X|best",
              help="Θ̂ at which to rebuild the classifiers, or 'best' (from `clparse calibrate`).")
@search_options
@click.option("--input-format", type=click.Choice(["tokens", "tagged", "ptb"]), default="tokens",
              show_default=True, help="Lines of tokens (tagged by the stored tagger), lines of word/TAG, "
                                      "or PTB trees (their gold tags are used).")
@click.option("--max-words", type=click.IntRange(min=1), default=100, show_default=True,
              help="Longer sentences get a flat tree and a warning.")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8", lazy=True), default="-",
              help="Where to write the trees (default: stdout).")
def parse_command(db: Path, files: tuple[str, ...], theta: float | str, beam: int, max_pops: int, aggregator: str,
                  input_format: str, max_words: int, output: Any) -> None:
    """Parse FILES (or stdin) with the parser rebuilt from the database at Θ̂.

    Writes one PTB tree per input sentence, one per line, holding every input token in order
    (tokens preprocessing sets aside, such as outer punctuation and quotes, are put back), so
    EVALB can score it against the original gold trees. With tokens or tagged input, output line n
    is the parse of input line n: an empty line gives (ROOT) and a warning. A label not trained
    past Θ̂ is an error. Progress (with total and ETA for files) goes to stderr when it is a terminal.
    """
    from clparse.progress import Progress, is_terminal
    from clparse.read.sentences import count_sentences, read_sentences
    from clparse.store.database import check_database, quick_check

    names = files or ("-",)
    check_database(db, upgrade=False)  # a wrong --db is reported before the slow model load
    quick_check(db)  # damage anywhere is reported, not only in the pages this parse happens to read
    if input_format == "ptb" and "-" in names:
        raise click.UsageError("--input-format ptb needs file names (it cannot read stdin)")
    # Read files once first: bad input is reported before the slow model load, and the count is the
    # progress total (reading is thousands of times faster than parsing). Stdin can be read only once.
    total = None if "-" in names else count_sentences(names, input_format)
    # Not when the trees go to the same terminal: the progress line would be torn by them.
    trees_on_terminal = getattr(output, "name", "-") in ("-", "<stdout>") and is_terminal(sys.stdout)
    bar = Progress("parsing", total, "sentences", enabled=is_terminal(sys.stderr) and not trees_on_terminal)

    from clparse.examples.data import known_tags
    from clparse.parser import Parser
    from clparse.read.ptb import format_tree

    parser = Parser.from_db(db, theta=theta, beam=beam, max_pops=max_pops, aggregator=aggregator,
                            max_words=max_words)
    shown = "per label" if parser.model.label_thetas else f"{parser.model.theta:g}"
    click.echo(f"parser at Θ̂ = {shown}: {len(parser.model.labels)} labels, {parser.model.splits} splits", err=True)

    def warn(message: str) -> None:
        if bar.enabled and bar.done:
            click.echo("", err=True)  # keep the warning off the progress line
        click.echo(f"warning: {message}", err=True)

    count = fallbacks = completions = 0
    tags = known_tags(db) if input_format == "tagged" else None
    with bar:
        for sentence in read_sentences(names, input_format, warn, known_tags=tags):
            result = parser.parse(sentence)
            count += 1
            if result.fallback is not None and sentence:  # an empty line was warned about when read
                fallbacks += 1
                warn(f"sentence {count}: flat tree ({result.fallback})")
            if result.completion is not None:
                completions += 1
                warn(f"sentence {count}: {result.completion} (raise --max-pops to search further)")
            output.write(format_tree(result.tree) + "\n")
            bar.update()
    click.echo(f"parsed {count} sentence(s); {fallbacks} flat fallback(s); {completions} completed greedily "
               "at the pop cap", err=True)


def _thetas(ctx: click.Context, param: click.Parameter, value: str | None) -> list[float] | None:
    if value is None:
        return None
    try:
        thetas = [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers", ctx, param) from None
    if not thetas or not all(0 <= t < float("inf") for t in thetas):
        raise click.BadParameter(f"{value!r}: give finite numbers ≥ 0", ctx, param)
    return thetas


@main.command("calibrate", cls=_ManyValues)
@DB_OPTION
@click.option("--dev", "dev", multiple=True, type=TREEBANK, callback=_treebank_files,
              help="Dev treebank files or directories (several after one --dev; default: the dev split "
                   "stored by prepare).")
@click.option("--thetas", default=None, metavar="X,Y,...", callback=_thetas,
              help="Θ̂ values to try (default: up to --points stored Θ values at which every label is trained).")
@click.option("--points", type=click.IntRange(min=1), default=12, show_default=True,
              help="Size of the default grid.")
@search_options
@click.option("--tags", type=click.Choice(["gold", "tagger"]), default=None,
              help="Parse the dev set with its gold tags or with the stored tagger's. Default: the tagger's if "
                   "the run was prepared with --train-tags jackknife (then --theta best is calibrated on what "
                   "raw text looks like), else gold.")
@click.option("--per-label", is_flag=True,
              help="After the global calibration with these settings: coordinate ascent over each label's Θ̂ "
                   "on the stored dev set (one trial per committed row; resumable).")
@click.option("--passes", type=click.IntRange(min=1), default=2, show_default=True,
              help="With --per-label: most passes over the labels (it stops early when a pass changes nothing).")
def calibrate_command(db: Path, dev: tuple[Path, ...], thetas: list[float] | None, points: int, beam: int,
                      max_pops: int, aggregator: str, tags: str, per_label: bool, passes: int) -> None:
    """Parse the dev set at each candidate Θ̂, store the scores, and mark the best Θ̂.

    Each finished Θ̂ is committed at once: stopped (Ctrl-C) or killed, the same command resumes
    at the first unfinished Θ̂. `clparse parse --theta best` then uses the best one. With
    --per-label, each label's Θ̂ is then tuned on the dev set, starting from the best global Θ̂
    (`--theta best` then uses a Θ̂ per label).
    """
    from clparse.calibrate.run import CalibrationSettings, calibrate, default_grid, default_tags
    from clparse.progress import Progress
    from clparse.store.database import quick_check

    quick_check(db)  # calibration writes its scores: never into a damaged file
    settings = CalibrationSettings(beam, max_pops, aggregator, tags or default_tags(db))
    if per_label:
        if dev or thetas:
            raise click.UsageError("--per-label tunes the stored dev set's calibration: no --dev or --thetas")
        _calibrate_per_label(db, settings, passes)
        return
    grid = thetas or default_grid(db, points)
    click.echo(f"calibrating at {len(grid)} Θ̂ value(s): {', '.join(f'{t:.4g}' for t in grid)}", err=True)
    flag = _stop_request("Θ̂ (an unfinished one is parsed again)", "clparse calibrate")

    bar = Progress("calibrating", None, "sentences")

    def progress(theta: float, done: int, total: int) -> None:
        if bar.total is None:  # finished Θ̂ values are read back, not parsed: the total may overstate
            bar.total = total * len(grid)
        bar.update(1, f"Θ̂ = {theta:.4g}")

    with bar:
        result = calibrate(db, dev, grid, settings, on_sentence=progress, should_stop=flag)
    for theta, why in result.skipped.items():
        click.echo(f"warning: Θ̂ = {theta:g} skipped, not every label is trained past it ({why})", err=True)
    from clparse.calibrate.report import format_points

    click.echo(format_points(result.points, result.best_theta))
    if flag.requested:
        click.echo("stopped; run the same command again to resume", err=True)


def _calibrate_per_label(db: Path, settings: object, passes: int) -> None:
    from clparse.calibrate.per_label import calibrate_per_label

    flag = _stop_request("trial", "clparse calibrate --per-label")

    def trial(label: str, theta: float, f1: float, accepted: bool) -> None:
        click.echo(f"{label:<8} Θ̂ {theta:<10.4g} F1 {f1:6.2f}{'  kept' if accepted else ''}", err=True)

    result = calibrate_per_label(db, settings, passes, on_trial=trial, should_stop=flag)  # type: ignore[arg-type]
    moved = {label: t for label, t in result.thetas.items() if t != result.start_theta}
    click.echo(f"per-label Θ̂ from Θ̂ = {result.start_theta:.4g} (F1 {result.start_f1:.2f}): F1 {result.f1:.2f} after "
               f"{result.replayed + result.trials} trial(s) ({result.replayed} read back)")
    for label, theta in sorted(moved.items()):
        click.echo(f"  {label:<8} {theta:.4g}")
    if flag.requested or result.stopped:
        click.echo("stopped; run the same command again to resume", err=True)


@main.command("tag", cls=_ManyValues)
@DB_OPTION
@click.argument("files", nargs=-1)
@click.option("--eval", "gold", multiple=True, type=TREEBANK, callback=_treebank_files,
              help="Instead of tagging FILES: tag the words of these gold treebank files (or directories) and "
                   "report accuracy, speed and the commonest confusions.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="With --eval: how many (gold, tagged) confusions to list.")
@click.option("--json", "as_json", is_flag=True, help="With --eval: print JSON.")
def tag_command(db: Path, files: tuple[str, ...], gold: tuple[Path, ...], top: int, as_json: bool) -> None:
    """Tag tokenized text with the run's stored POS tagger: one sentence per line in, word/TAG out.

    Reads FILES (or stdin, or -) one sentence per line, tokens separated by spaces; writes the same
    lines with each token as word/TAG (an empty line stays empty). With --eval GOLD, tags the words of
    the gold trees instead and compares.

    \b
    echo "The dog barked ." | clparse tag --db db/quickstart.sqlite
    clparse tag --db db/quickstart.sqlite --eval gum/dev
    """
    from clparse.read.sentences import read_sentences
    from clparse.tag.stored import NONE_TAG, load_tagger

    tagger = load_tagger(db)
    if tagger is None:
        raise ClparseError(f"{db} has no tagger; run `clparse prepare` again with the same inputs to add one")
    if gold:
        from clparse.read import read_trees
        from clparse.tag.evaluate import evaluate_tagger

        sentences = ([(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
                     for path in gold for tree in read_trees(path))
        report = evaluate_tagger(tagger, sentences)
        click.echo(json.dumps(report.to_dict(top), indent=2) if as_json else report.format(top))
        return
    for sentence in read_sentences(files or ("-",), "tokens", lambda _: None):
        words = [str(w) for w in sentence]
        click.echo(" ".join(f"{w}/{t}" for w, t in zip(words, tagger.tag(words))) if words else "")


@main.command("report")
@DB_OPTION
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE.png",
              help="Also draw the paper's Figure 2 (F1 against Θ̂ and against total splits).")
@click.option("--labels", "show_labels", is_flag=True, help="Also print per-label F1 at the best Θ̂.")
def report_command(db: Path, plot: Path | None, show_labels: bool) -> None:
    """Print every calibration: Θ̂, trees, splits, recall, precision, F1, and the best Θ̂."""
    from clparse.calibrate.report import draw_figure, format_report

    click.echo(format_report(db, show_labels))
    if plot is not None:
        draw_figure(db, plot)
        click.echo(f"figure written to {plot}")


# --------------------------------------------------------------------- quick start


@main.command("quickstart")
def quickstart_command() -> None:
    """Run the pipeline on the bundled GUM sample and print what each step did."""
    from clparse.quickstart import run_quickstart

    run_quickstart(echo=click.echo)


if __name__ == "__main__":
    sys.exit(main())
