"""Option types and decorators that several commands share."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from clparse.cli.core import Command
from clparse.errors import ClparseError

EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
# a file, or a directory of *.ptb / *.mrg files; treebank_files says what is missing (and what a pattern
# that matched nothing, or a directory of subdirectories, needs) better than click's exists=True
TREEBANK = click.Path(path_type=Path)
DB_OPTION = click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
                         default=Path("db/clparse.sqlite"), show_default=True, help="The training database.")


def refuse_overwriting(output: Any, files: Iterable[str | Path], db: Path | None = None) -> None:
    """``-o`` naming the database or an input file: writing would truncate what the command reads (the
    trained model, or the input read back as it is written). Refused before anything is written."""
    name = getattr(output, "name", "-")
    if not isinstance(name, str) or name in ("-", "<stdout>"):
        return
    # The file opens lazily at the first tree: a path it cannot open failed only after the model loaded
    # (seconds to minutes), and as click's "Could not open file" rather than a line naming -o.
    folder = os.path.dirname(name) or "."
    if os.path.isdir(name) or not os.path.isdir(folder):
        problem = "that is a directory" if os.path.isdir(name) else f"there is no directory {folder}"
        raise ClparseError(f"-o {name}: {problem}; give a file in an existing directory")
    if not os.path.exists(name):
        return
    sources = [("the database", db)] if db is not None else []
    sources += [("an input file", Path(f)) for f in files if str(f) != "-"]
    for what, source in sources:
        try:
            same = os.path.samefile(name, source)
        except OSError:  # a source that does not exist (yet): nothing to overwrite
            same = False
        if same:
            raise ClparseError(f"-o {name}: that is {what} of this command; write the output to another file")


def close_output(output: Any) -> None:
    """Flush and close an ``-o`` file (stdout is only flushed): a write error such as a full disk is
    raised here, inside the command, as one line, not as a traceback when click closes the file later."""
    name = getattr(output, "name", "-")
    try:
        if name in ("-", "<stdout>"):
            output.flush()
        else:
            output.close()
    except OSError as exc:
        raise ClparseError(f"{name}: {exc.strerror or exc}; the output is incomplete") from None


def treebank_files(ctx: click.Context, param: click.Parameter, value: tuple[Path, ...]) -> tuple[Path, ...]:
    """Directories given for treebank files stand for their *.ptb and *.mrg files."""
    from clparse.read.paths import treebank_files as expand

    try:
        return tuple(expand(value))
    except ClparseError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


class Renamed(click.Option):
    """An option renamed to the common convention whose old spellings (``old``) still work, unshown: in
    ``--help`` and in error messages only the new names appear, so scripts written for the old name go on."""

    def __init__(self, *args: Any, old: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old = old

    def _shown(self) -> list[str]:
        return [name for name in self.opts if name not in self.old]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        opts, self.opts = self.opts, self._shown()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return " / ".join(f"'{name}'" for name in self._shown())


class ManyValues(Command):
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


class LongChoice(click.Choice):  # type: ignore[type-arg]
    """A choice among many long names (preprocessing steps): a bad value names the near miss, or points to
    --help, instead of listing every name (a 230-character error)."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        from difflib import get_close_matches

        names = [str(c) for c in self.choices]
        near = get_close_matches(str(value), names, n=1, cutoff=0.5)
        if near:
            return f"{value!r} is not one of the {len(names)} choices; did you mean {near[0]}?"
        first = ", ".join(map(repr, names[:2]))
        return f"{value!r} is not one of {first}, … ({len(names)} choices; --help lists them)"


def step_names() -> LongChoice:
    """The preprocessing steps as a choice (--skip-step)."""
    from clparse.preprocess import STEP_NAMES

    return LongChoice(tuple(STEP_NAMES))


class Theta(click.ParamType):
    """Θ̂: a number > 0, or "best" (the calibrated one). Checked before anything is loaded (0 was let
    through, then refused once the model began to load, naming no option)."""

    name = "theta"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float | str:
        if value == "best" or isinstance(value, float):
            return value  # type: ignore[no-any-return]
        try:
            theta = float(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number nor 'best'", param, ctx)
        if not theta > 0 or theta == float("inf"):
            self.fail(f"{value!r}: Θ̂ must be a finite number > 0", param, ctx)
        return theta


class Number(click.ParamType):
    """A finite number (``nan`` and ``inf`` are refused, which click's FloatRange lets through), above
    ``above`` or at least ``at_least``: a bad value is a usage error naming the option, before anything
    is loaded."""

    name = "number"

    def __init__(self, *, above: float | None = None, at_least: float | None = None) -> None:
        self.above, self.at_least = above, at_least

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        # The library's words for the same faults (StopRule, BoostSettings), so both read alike.
        try:
            number = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a valid float.", param, ctx)
        if not math.isfinite(number):
            self.fail(f"must be a finite number, got {value}", param, ctx)
        if self.above is not None and not number > self.above:
            rule = "must be positive" if self.above == 0 else f"must be > {self.above:g}"
            self.fail(f"{rule}, got {value}", param, ctx)
        if self.at_least is not None and not number >= self.at_least:
            rule = "must be a non-negative number" if self.at_least == 0 else f"must be ≥ {self.at_least:g}"
            self.fail(f"{rule}, got {value}", param, ctx)
        return number


#: A seed of a random generator: numpy takes whole numbers ≥ 0 only (a negative one was a traceback).
SEED = click.IntRange(min=0)


#: The beam of parsing (parse, explain; also :class:`clparse.parser.SearchOptions` and
#: :func:`clparse.api.open_parser`): on GUM dev beam 100 scores as beam 1000 does (all lengths 79.42
#: against 79.34, ≤ 15 words 86.80 against 86.59; a ≤ 15 model the same F1), neither difference
#: significant, at 3× its speed on all lengths (37.3 against 12.2 sentences per CPU second) and within
#: 300 MB (README, "Parse speed").
PARSE_BEAM = 100
#: clparse.parser.SEARCH_LIMIT, written again because the parser's module loads numba and --help must not
#: (tests/test_parse.py holds the two equal).
SEARCH_LIMIT = 2**31 - 1
#: The beam of calibration: its settings are stored with each calibration and a resumed sweep must meet
#: the same ones, so it stays where calibrations were started.
CALIBRATION_BEAM = 1000
#: clparse.parser.DEFAULT_AGGREGATOR and clparse.search.aggregate.AGGREGATORS (the default first), written
#: again for the same reason as SEARCH_LIMIT.
AGGREGATOR = "sum"
AGGREGATOR_CHOICES = ("sum", "maxmin")


def search_options(beam: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--beam (default ``beam``), --max-pops and --aggregator, the same for every command that searches
    (parse, explain, calibrate)."""
    return lambda command: _search_options(command, beam)


def _search_options(command: Callable[..., Any], beam: int) -> Callable[..., Any]:
    for option in reversed((
        click.option("--beam", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=beam, show_default=True,
                     help="Agenda size; 1 parses greedily."),
        click.option("--max-pops", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=10_000,
                     show_default=True,
                     help="After this many popped states, finish the sentence greedily from the best state "
                          "instead of searching on (such sentences are counted, not warned about)."),
        click.option("--aggregator", type=click.Choice(AGGREGATOR_CHOICES), default=AGGREGATOR,
                     show_default=True,
                     help="How a parse is scored: the summed logistic loss of its decisions (the paper's "
                          "Eq. 15; +0.9 to +1.2 F1 over max-min on all of GUM dev) or max-min, its lowest "
                          "confidence (the paper's search). A combination parses with the aggregator it "
                          "was fitted with."),
    )):
        command = option(command)
    return command


def unless_given(search: dict[str, Any], *names: str) -> dict[str, Any]:
    """``search`` with each of ``names`` left at its default set to None: the library's default then
    holds (a combination's stored beam), and only what the user typed can be refused."""
    ctx = click.get_current_context()
    return {**search, **{name: None for name in names
                         if ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE}}


def stop_request(what: str, command: str, finishes: bool = True) -> Any:
    """Ctrl-C / SIGTERM: finish and commit the current ``what``, then stop (``finishes`` False: the command
    stops at once and drops the ``what`` in flight, done again on resume); a second Ctrl-C gives up
    waiting (the work in flight is lost, nothing stored is harmed). The returned flag's ``signum`` is the
    first signal that asked to stop (None if none did), for the exit status (:func:`interrupted_status`)."""
    from clparse.interrupt import StopRequest

    class Signalled(StopRequest):
        signum: int | None = None

        def handle(self, signum: int, frame: object) -> None:
            if self.signum is None:
                self.signum = signum
            super().handle(signum, frame)

    def say() -> None:
        how = (f"after the current {what} (it is committed first)" if finishes
               else f"now (the {what} in flight is dropped and done again on resume)")
        click.echo(f"\nstopping {how}; run `{command}` again to resume", err=True)

    return Signalled(say, second_interrupt_raises=True).install()


def interrupted_status(signum: int | None) -> int:
    """The exit status of a command that stopped cleanly on a signal, by the shell's convention 128 + the
    signal's number: 130 for Ctrl-C (SIGINT), 143 for SIGTERM (the default when the signal is not known)."""
    import signal

    return 128 + (signum if signum is not None else signal.SIGTERM)
