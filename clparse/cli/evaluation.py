"""`clparse eval` and `clparse compare`: PARSEVAL as EVALB computes it, and the paired significance test."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from clparse.cli.core import main
from clparse.cli.options import EXISTING_FILE, SEED


class TreeFile(click.Path):
    """An existing tree file; ``-`` is refused as such (click said "File '-' does not exist", and ``parse``
    reads ``-`` as standard input)."""

    def __init__(self) -> None:
        super().__init__(exists=True, dir_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "-":
            self.fail("'-': trees are read from files, not standard input (save them to a file first, such "
                      "as parse -o FILE)", param, ctx)
        return super().convert(value, param, ctx)


TREE_FILE = TreeFile()


def _params(prm: Path | None, collins: bool) -> Any:
    from clparse.evaluate import EvalbParams

    if prm is not None and collins:  # --collins-prm was ignored in silence: the scores were --prm's
        raise click.UsageError("--prm and --collins-prm cannot be combined: give one parameter file")
    if prm is not None:
        return EvalbParams.from_prm_file(prm)
    return EvalbParams.collins() if collins else EvalbParams()


def _scored(gold: Path, test: Path, params: Any, one_per_line: bool, what: str) -> Any:
    """:func:`~clparse.evaluate.evaluate_files` with a progress line (sentences scored, on a terminal): a
    big file took 18 s per 18,000 sentences in silence, and ``compare`` scores two."""
    from clparse.errors import TokenMismatchError, TreebankError
    from clparse.evaluate import TooManyErrors, evaluate, read_parses
    from clparse.progress import Progress
    from clparse.read import read_trees

    read = [0]  # gold trees read: where the shorter file ended
    with Progress(what, None, "sentences") as bar:
        def counted(trees: Iterator[Any]) -> Iterator[Any]:
            for tree in trees:
                read[0] += 1
                yield tree
                bar.update()

        try:
            return evaluate(counted(read_trees(gold)), read_parses(test, one_per_line=one_per_line), params)
        except TooManyErrors as exc:  # named: compare's A or B could not be told apart
            raise TooManyErrors(f"{test}: {exc}") from None
        except TreebankError as exc:
            raise _parse_output_hint(exc) from None
        except TokenMismatchError as exc:
            if not str(exc).startswith(("test file has more trees", "gold file has more trees")):
                raise
            # named, with the count: "test file" did not say which one, nor which of compare's A and B
            test_longer = str(exc).startswith("test")
            longer, shorter = (test, gold) if test_longer else (gold, test)
            ended = read[0] if test_longer else read[0] - 1
            message = f"{longer}: {str(exc).split(':')[0]} than {shorter}, which ends after {ended} tree(s)"
            if one_per_line and longer == test and _ends_blank(test):
                # One parse per line counts a trailing blank line as a failed parse, as EVALB does.
                message += f"; {test} ends with a blank line, which --one-per-line reads as a failed parse " \
                           "(remove it)"
            raise TokenMismatchError(message) from None


def _parse_output_hint(error: Any) -> Any:
    """A :class:`~clparse.errors.TreebankError` at text before the first tree, with what wrote it when it is
    `clparse parse` output eval cannot score (it said only "text '{"tokens":' outside any bracket")."""
    import re

    from clparse.errors import TreebankError

    match = re.fullmatch(r"text '(.*)' outside any bracket", error.problem)
    if match is None:
        return error
    token = match.group(1)
    if token.startswith("{"):
        hint = "it looks like parse --format json output: eval reads trees, as parse --format ptb or " \
               "pretty writes them"
    elif token == "#" or re.fullmatch(r"-?(\d+\.?\d*(e-?\d+)?|nan)", token):
        hint = "it looks like parse --kbest output, a score before each tree: eval scores one tree per " \
               "sentence, as parse without --kbest writes them"
    else:
        return error
    # prose, not an aside in parentheses: a long line drops those
    return TreebankError(error.path, error.line, error.column, f"{error.problem}; {hint}")


def _ends_blank(path: Path) -> bool:
    """Whether the file's last line is empty or white space (a file ending in two newlines)."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        handle.seek(max(0, handle.tell() - 4096))
        tail = handle.read().replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = tail.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    return bool(lines) and not lines[-1].strip()


def _warn(result: Any, name: str = "") -> None:
    """What EVALB leaves out, on stderr: each sentence whose words differ, and how many parses were empty."""
    from clparse.evaluate.evalb import EMPTY_PARSE

    empty = 0
    for s in result.sentences:
        if s.status == "error":
            click.echo(f"warning: {name}sentence {s.index}: {s.message}", err=True)
        elif s.status == "skip" and s.message == EMPTY_PARSE:
            empty += 1
        elif s.status == "skip":  # counted as an empty parse, which it is not
            click.echo(f"warning: {name}sentence {s.index}: {s.message}: skipped, as EVALB does", err=True)
    if empty:
        click.echo(f"warning: {name}{empty} empty parse(s) skipped, as EVALB does", err=True)


_eval_options = [
    click.option("--prm", type=EXISTING_FILE, default=None,
                 help="An EVALB parameter file to use instead of the built-in settings."),
    click.option("--collins-prm", is_flag=True,
                 help="Use COLLINS.prm exactly (a ROOT or bare '( (S ...))' wrapper then counts as a "
                      "bracket)."),
    click.option("--one-per-line", is_flag=True,
                 help="Read test files as EVALB does: one parse per line, a blank line is a failed parse."),
]


def _with_eval_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_eval_options):
        func = option(func)
    return func


@main.command("eval")
@click.argument("gold", type=TREE_FILE)
@click.argument("test", type=TREE_FILE)
@_with_eval_options
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (totals, cut-off totals, per-length table).")
@click.option("--by-length", type=click.IntRange(min=1), default=None, metavar="N",
              help="Also print scores per sentence length, in buckets of N words.")
@click.option("--sentences", is_flag=True, help="Also print EVALB's per-sentence table.")
def eval_command(gold: Path, test: Path, prm: Path | None, collins_prm: bool, one_per_line: bool,
                 as_json: bool, by_length: int | None, sentences: bool) -> None:
    """PARSEVAL scores of TEST against GOLD, computed exactly as EVALB does.

    Defaults are EVALB's COLLINS.prm plus `DELETE_LABEL ROOT` and the empty
    label (so a ROOT or bare `( (S ...))` wrapper is not counted, like TOP).
    Sentences with mismatched words are reported and left out, as EVALB
    does; more than MAX_ERROR of them stop the evaluation with exit status 1.
    """
    from clparse.evaluate.report import format_by_length, format_sentences, format_summary

    result = _scored(gold, test, _params(prm, collins_prm), one_per_line, "scoring")
    _warn(result)
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
@click.argument("gold", type=TREE_FILE)
@click.argument("a", type=TREE_FILE)
@click.argument("b", type=TREE_FILE)
@_with_eval_options
@click.option("--trials", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Shuffling trials (the paper used 1,000,000).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed of the shuffles.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compare_command(gold: Path, a: Path, b: Path, prm: Path | None, collins_prm: bool, one_per_line: bool,
                    trials: int, seed: int, as_json: bool) -> None:
    """Is parser A better than parser B on GOLD? Paired stratified shuffling test (paper §3).

    Prints recall, precision and F1 of both and a two-sided p-value for each difference.
    """
    from clparse.evaluate import compare
    from clparse.evaluate.report import format_comparison

    params = _params(prm, collins_prm)
    scored = [_scored(gold, test, params, one_per_line, f"scoring {name}")
              for name, test in (("A", a), ("B", b))]
    for name, evaluation in zip("AB", scored):  # left out of the test, so said as eval says it
        _warn(evaluation, f"{name}: ")
    result = compare(scored[0], scored[1], trials=trials, seed=seed)
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else format_comparison(result))
