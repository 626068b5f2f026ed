"""The ``clparse`` group and the error policy every command shares: one ``Error:`` line, never a traceback."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click

from clparse.errors import ClparseError, ParameterError


def fail(exc: BaseException, db: Path | None) -> click.ClickException:
    """One ``Error:`` line for an error met while running a command (details with ``--verbose``)."""
    ctx = click.get_current_context(silent=True)
    limit = None if verbose() else LIMIT  # --verbose: the traceback, and the message whole
    if limit is None:
        import traceback

        traceback.print_exception(exc)
    if isinstance(exc, ClparseError):
        return click.ClickException(one_line(with_options(str(exc), ctx), limit))
    if isinstance(exc, OSError):  # missing file, full disk, permission: name the file
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return click.ClickException(one_line(f"{where}{exc.strerror or exc}", limit))
    # SQLite errors reach here as APSW's or SQLAlchemy's exceptions, with SQL and parameters in their text.
    from clparse.store.database import sqlite_error

    return click.ClickException(one_line(str(sqlite_error(exc, db if db is not None else "the database")),
                                         limit))


#: Past this many characters a message is shortened (``clparse --verbose`` prints it whole).
LIMIT = 200
_MORE = "with --verbose"


def verbose() -> bool:
    """Was the running command given ``clparse --verbose``?"""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and bool(ctx.find_root().params.get("verbose"))


def one_line(text: str, limit: int | None = LIMIT) -> str:
    """A message as one short line: its lines joined by "; " (SQLite's integrity report, say), then, past
    ``limit`` characters (None: never), each parenthesized list cut to its first item and a count (a Θ̂ no
    label is trained past listed every label), then lists and long asides dropped, each step only while
    the line is still too long. What is cut is said to be there with ``--verbose``; the prose around
    stays whole."""
    line = ""
    for part in text.splitlines():
        part = part.replace("*** in database main ***", "").strip()  # SQLite's header says nothing
        if part:
            line += ("" if not line else " " if line.endswith(":") else "; ") + part
    if limit is None:
        return line
    for keep in (1, 0):
        while len(line) > limit:
            shorter = _shorten_longest_list(line, keep)
            if shorter == line:
                break
            line = shorter
    return line  # prose is never cut: what is left says what to do (long paths are the user's own)


def _groups(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost parenthesized group of ``text``, the parentheses included."""
    spans, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            start, depth = (i if depth == 0 else start), depth + 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def _items(inner: str) -> list[str]:
    """``inner`` split at its "; " separators outside nested parentheses."""
    items, depth, last = [], 0, 0
    for i, char in enumerate(inner):
        depth += (char == "(") - (char == ")")
        if depth == 0 and inner.startswith("; ", i):
            items.append(inner[last:i])
            last = i + 2
    return [*items, inner[last:]]


def _shorten_longest_list(line: str, keep: int) -> str:
    """``line`` with its longest parenthesized list ("a; b; c") cut to its first item and a count (``keep``
    1), or to a pointer to ``--verbose`` (``keep`` 0); unchanged if no list is left to cut."""
    lists = []
    for start, end in _groups(line):
        inner = line[start + 1:end - 1]
        items, cut = _items(inner), _MORE in inner
        long = len(items) > 1 or cut or len(inner) > 80  # a list, or a quoted sentence, say
        if (keep and len(items) > 1 and not cut) or (not keep and long
                                                      and not inner.endswith(f"details {_MORE}")):
            lists.append((end - start, start, end, items))
    if not lists:
        return line
    _, start, end, items = max(lists)
    # A report named by its SQLite pragma (integrity_check: ...) keeps the name: it says which check failed.
    named = re.match(r"[a-z]+_[a-z_]+: ", items[0])
    shown = (f"{items[0]}; {len(items) - 1} more {_MORE}" if keep
             else f"{named.group(0) if named else ''}details {_MORE}")
    return f"{line[:start]}({shown}){line[end:]}"


def text_damage(exc: UnicodeDecodeError, db: Path | None) -> ClparseError:
    """A text column of the database holding bytes that are not UTF-8 (bit rot, a stray ``sql --write``)."""
    from clparse.errors import DatabaseError
    from clparse.store.database import DAMAGED

    bad = exc.object[exc.start:exc.end]
    return DatabaseError(f"{db if db is not None else 'the database'}: {DAMAGED} (a text column holds bytes "
                         f"that are not UTF-8: {bytes(bad)!r}: {exc.reason})")


def _from_database(exc: BaseException) -> bool:
    """Was ``exc`` raised while reading the database (in clparse's store or a SQLite driver), rather than
    while reading a file (which clparse's readers report with the file and line themselves)?"""
    store = str(Path(__file__).resolve().parents[1] / "store")
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if code.co_filename.startswith(store) or module.split(".")[0] in ("apsw", "sqlalchemy"):
            return True
        tb = tb.tb_next
    return False


def option_error(exc: ParameterError, ctx: click.Context) -> click.ClickException:
    """A library parameter error, told as the option it came from (usage line, exit status 2)."""
    for param in ctx.command.params:
        if param.name == exc.parameter:
            return click.BadParameter(one_line(exc.problem, None if verbose() else LIMIT), ctx=ctx,
                                      param=param)
    return fail(exc, ctx.params.get("db"))


def _is_sqlite_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("apsw", "sqlalchemy")  # checked without importing either


_QUOTED = re.compile(r"""((?<!\w)'(?:[^'\\\n]|\\.)*'(?!\w)|(?<!\w)"(?:[^"\\\n]|\\.)*"(?!\w))""")


def with_options(text: str, ctx: click.Context | None = None) -> str:
    """A library message told in options: each parameter name of the running command (``max_pops``)
    becomes its option (``--max-pops``); only names with an underscore, which cannot be plain words."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return text
    names = {param.name: param.opts[0] for param in ctx.command.params
             if isinstance(param, click.Option) and param.name and "_" in param.name}
    if not names:
        return text
    pattern = re.compile(rf"\b({'|'.join(map(re.escape, names))})\b")
    # a quoted value, as repr() quotes it, is the user's own text ('max_words,' a token of the input): left
    # as it is (an apostrophe inside a word, the run's, opens no quote)
    parts = _QUOTED.split(text)
    return "".join(part if index % 2 else pattern.sub(lambda m: names[m.group(1)], part)
                   for index, part in enumerate(parts))


class Command(click.Command):
    """A click command that turns clparse's own errors, OS and database errors into one ``Error:`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # click exits quietly when stdout is closed early (`clparse eval ... | head`)
        except KeyboardInterrupt:  # Ctrl-C where a command does not pause on it (train, calibrate do)
            click.echo("Error: interrupted (Ctrl-C); what was written before it is complete", err=True)
            ctx.exit(130)  # 128 + SIGINT, as train and calibrate exit
        except ParameterError as exc:
            raise option_error(exc, ctx) from None
        except (ClparseError, OSError) as exc:
            raise fail(exc, ctx.params.get("db")) from None
        except UnicodeDecodeError as exc:
            if not _from_database(exc):
                raise
            raise fail(text_damage(exc, ctx.params.get("db")), ctx.params.get("db")) from None
        except Exception as exc:
            if not _is_sqlite_error(exc):
                raise
            raise fail(exc, ctx.params.get("db")) from None


class Group(click.Group):
    command_class = Command


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=Group, context_settings=CONTEXT)
@click.version_option(package_name="clparse")
@click.option("-v", "--verbose", is_flag=True, help="On an error, print the full details (traceback) too.")
def main(verbose: bool) -> None:
    """clparse: constituent parsing by classification (Turian & Melamed 2005).

    The training state lives in SQLite. Start with `clparse quickstart`, or
    look at a treebank with `clparse treebank stats FILES`. Every error is one
    `Error: ...` line and exit status 1; `clparse --verbose COMMAND` adds the details.
    """
    if sys.stdout is None:  # started with stdout closed (`>&-`): results would vanish, exit status 0
        raise click.ClickException("standard output is closed; clparse writes its results there: redirect "
                                   "it to a file (or /dev/null) instead of closing it")
