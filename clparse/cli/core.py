"""The ``clparse`` group and the error policy every command shares: one ``Error:`` line, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from clparse.errors import ClparseError, ParameterError


def fail(exc: BaseException, db: Path | None) -> click.ClickException:
    """One ``Error:`` line for an error met while running a command (details with ``--verbose``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and (ctx.find_root().params.get("verbose") or False):
        import traceback

        traceback.print_exception(exc)
    if isinstance(exc, ClparseError):
        return click.ClickException(with_options(str(exc), ctx))
    if isinstance(exc, OSError):  # missing file, full disk, permission: name the file
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return click.ClickException(f"{where}{exc.strerror or exc}")
    # SQLite errors reach here as APSW's or SQLAlchemy's exceptions, with SQL and parameters in their text.
    from clparse.store.database import sqlite_error

    return click.ClickException(str(sqlite_error(exc, db if db is not None else "the database")))


def option_error(exc: ParameterError, ctx: click.Context) -> click.ClickException:
    """A library parameter error, told as the option it came from (usage line, exit status 2)."""
    for param in ctx.command.params:
        if param.name == exc.parameter:
            return click.BadParameter(exc.problem, ctx=ctx, param=param)
    return fail(exc, ctx.params.get("db"))


def _is_sqlite_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("apsw", "sqlalchemy")  # checked without importing either


def with_options(text: str, ctx: click.Context | None = None) -> str:
    """A library message told in options: each parameter name of the running command (``max_pops``)
    becomes its option (``--max-pops``); only names with an underscore, which cannot be plain words."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return text
    for param in ctx.command.params:
        if isinstance(param, click.Option) and param.name and "_" in param.name:
            text = re.sub(rf"\b{param.name}\b", param.opts[0], text)
    return text


class Command(click.Command):
    """A click command that turns clparse's own errors, OS and database errors into one ``Error:`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # click exits quietly when stdout is closed early (`clparse eval ... | head`)
        except ParameterError as exc:
            raise option_error(exc, ctx) from None
        except (ClparseError, OSError) as exc:
            raise fail(exc, ctx.params.get("db")) from None
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
