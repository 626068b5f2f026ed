"""`clparse treebank`: look at treebank files (statistics, preprocessing)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from clparse.cli.core import Group, main
from clparse.cli.options import TREEBANK, close_output, refuse_overwriting, step_names, treebank_files



def _preprocess_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--skip-step", "skip_steps", multiple=True, type=step_names(),
                        help="Switch off one preprocessing step (repeatable).")(func)
    func = click.option("--max-words", type=click.IntRange(min=0), default=None,
                        callback=lambda _ctx, _param, value: value or None,  # 0: every length, as in prepare
                        help="Keep sentences of at most N words, punctuation not counted; 0 (or leaving it "
                             "out) keeps every sentence, as prepare --max-words 0 does.")(func)
    return func


def _read(files: Iterable[Path], skip_bad: bool) -> Iterator[Any]:
    from clparse.read import ReadReport, read_treebank

    files = list(files)
    seen: set[Path] = set()
    for path in files:  # `gum/train gum/train/a.ptb`: every tree of a.ptb counted (or written) twice
        if path.resolve() in seen:
            click.echo(f"warning: {path} is given twice: its trees are read twice", err=True)
        seen.add(path.resolve())
    report = ReadReport()
    yield from read_treebank(files, skip_bad=skip_bad, report=report)
    if report.skipped:
        first = report.first_errors[0] if report.first_errors else "?"
        click.echo(f"warning: skipped {report.skipped} malformed tree(s); first: {first}", err=True)


@main.group(cls=Group)
def treebank() -> None:
    """Look at treebank files: statistics, preprocessing."""


@treebank.command("stats")
@click.argument("files", nargs=-1, required=True, type=TREEBANK, callback=treebank_files)
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

    if not preprocess and (max_words is not None or skip_steps):
        # raw counts have no length filter or steps: the option would be ignored without a word
        raise click.UsageError("--max-words and --skip-step count after preprocessing: add --preprocess")
    if as_json and click.get_current_context().get_parameter_source("bucket") is ParameterSource.COMMANDLINE:
        # the JSON histogram counts every length: the option was ignored without a word
        raise click.UsageError("--bucket groups the table's length histogram; --json gives the count of "
                               "every length (length_histogram)")
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
@click.argument("files", nargs=-1, required=True, type=TREEBANK, callback=treebank_files)
@_preprocess_options
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the trees (default: stdout; not one of FILES). Written whole or not at "
                   "all: an existing file is replaced only once every tree is written.")
@click.option("--indented", is_flag=True, help="Indented trees instead of one per line.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed trees (and say how many) instead of stopping.")
def treebank_preprocess_command(files: tuple[Path, ...], max_words: int | None, skip_steps: tuple[str, ...],
                                output: Path | None, indented: bool, skip_bad: bool) -> None:
    """Write FILES after preprocessing (Table 3), with a report of what changed on stderr."""
    from clparse.preprocess import PreprocessConfig, PreprocessReport, preprocess_treebank
    from clparse.read import write_trees

    report = PreprocessReport()
    config = PreprocessConfig.without(skip_steps, max_words=max_words)
    trees = (p.tree for p in preprocess_treebank(_read(files, skip_bad), config, report))
    if output is None or str(output) == "-":
        write_trees(trees, sys.stdout, indented=indented)
        close_output(sys.stdout)
    else:
        _write_whole(output, files, lambda handle: write_trees(trees, handle, indented=indented))
    click.echo(report.format(), err=True)


def _write_whole(output: Path, files: Iterable[Path], write: Callable[[Any], object]) -> None:
    """Write ``output`` whole or not at all: a bad tree, Ctrl-C or a full disk half-way left the file
    truncated to the trees before (a run's earlier output lost, and a shorter treebank in its place)."""
    from types import SimpleNamespace

    from clparse.atomic_write import write_whole

    refuse_overwriting(SimpleNamespace(name=str(output)), files)  # -o naming a directory, or one of FILES

    def put(where: Path) -> None:
        with open(where, "w", encoding="utf-8") as handle:
            write(handle)

    write_whole(output, put, kept="; nothing written")
