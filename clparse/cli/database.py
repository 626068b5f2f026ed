"""`clparse init`, `sql`, `backup`, `check`: the database file itself."""

from __future__ import annotations

from pathlib import Path

import click

from clparse import api
from clparse.cli.core import Command, main
from clparse.cli.options import DB_OPTION, Renamed


@main.command("init")
@DB_OPTION
def init_command(db: Path) -> None:
    """Create a training database, or upgrade an older one (after a backup copy)."""
    api.init(db, echo=click.echo)
    click.echo(f"{db}: ready")


class SqlCommand(Command):
    """Lets a query start with ``--``: a pasted README example begins with an SQL comment, which click
    would otherwise read as an unknown option. An argument starting with ``-`` that holds a space
    or a line break cannot be an option, so it is the query."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        queries = [a for a in args if a.startswith("-") and any(c.isspace() for c in a)]
        if queries and "--" not in args:
            args = [a for a in args if a not in queries] + ["--", *queries]
        return super().parse_args(ctx, args)


@main.command("sql", cls=SqlCommand)
@DB_OPTION
@click.argument("query", required=False)
@click.option("--csv", "as_csv", is_flag=True, help="CSV output.")
@click.option("--json", "as_json", is_flag=True, help="JSON output (a list of objects).")
@click.option("--write", is_flag=True,
              help="Open read-write (default: read-only, so nothing can be changed).")
def sql_command(db: Path, query: str | None, as_csv: bool, as_json: bool, write: bool) -> None:
    """Run QUERY on the database, or open an interactive SQL shell without one.

    QUERY may hold several statements (each one's rows are printed in turn) and may start with a
    `-- comment`, so the README's examples can be pasted as they are. Without --write nothing is
    written anywhere: no ATTACH or VACUUM INTO, no pragma that sets something, and the shell has
    no .open, .backup, .output, .py or .shell. See the README for ready-made queries.

    \b
    clparse sql --db db/quickstart.sqlite "SELECT name, candidates, positives FROM labels"
    """
    if as_csv and as_json:  # one format: CSV won without a word
        raise click.UsageError("--csv and --json go apart: give one of them")
    if query is None:
        if as_csv or as_json:  # the shell printed its own list mode ("1|2") without a word
            flag = "--csv" if as_csv else "--json"
            raise click.UsageError(f"{flag} formats the rows of a QUERY argument; the shell (no QUERY) has "
                                   f"its own: type .mode {flag[2:]}" + (" and .headers on" if as_csv else ""))
        api.sql_shell(db, write=write)
        return
    click.echo(api.sql(db, query, fmt="csv" if as_csv else "json" if as_json else "table", write=write),
               nl=False)


@main.command("backup", short_help="Copy the database to a new file (safe while training runs).")
@DB_OPTION
@click.argument("target", type=click.Path(dir_okay=False, path_type=Path))
def backup_command(db: Path, target: Path) -> None:
    """Copy the database to TARGET (a new file), consistently, also while training writes to it.

    Uses SQLite's backup API: the copy is one snapshot of committed data, never a half-written
    iteration. TARGET must not exist yet.
    """
    from clparse.progress import Ticker

    with Ticker(f"copying to {target}").begin():
        size = api.backup(db, target)
    click.echo(f"{db} backed up to {target} ({size / 1e6:,.1f} MB)")


@main.command("check", short_help="Check the database file for damage.")
@DB_OPTION
def check_command(db: Path) -> None:
    """Check the database file for damage; exit status 1 if damaged.

    SQLite's integrity check of every page, then the SHA-256 of every stored tree and array (feature
    rows, examples, margins), so a changed float that SQLite cannot see is named too (label and
    iteration). See docs/reliability.md.
    """
    from clparse.progress import Ticker

    with Ticker("checking every page and checksum").begin():  # a minute on a large run, no steps reported
        api.check(db)
    click.echo(f"{db}: ok")


@main.command("export", short_help="Write a parser database: the trained run without its examples.")
@DB_OPTION
@click.option("-o", "--output", "--out", "out", cls=Renamed, old=("--out",), required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="The parser database to write (a new file; see --force).")
@click.option("--force", is_flag=True, help="Replace the --output file if it exists.")
def export_command(db: Path, out: Path, force: bool) -> None:
    """Write what parsing needs of the run in --db to the parser database --output, to hand on.

    The same schema, with the trees and Θ of every iteration (any Θ̂ still works), the calibrations, the
    tagger, the vocabulary, the feature index, the settings and the dev sentences; without the training
    examples, the margins and the training sentences (a few % of the run's size). `parse`, `tag`, `report`,
    `calibrate`, `sql` and `check` work on it; `train` and `prepare` refuse it. --db is only read (also
    while training writes to it); --output appears only when it is complete and checked.

    \b
    clparse export --db db/quickstart.sqlite --output db/quickstart-parser.sqlite
    """
    from clparse.progress import Progress

    with Progress("exporting", None, "rows") as bar:
        summary = api.export(db, out, force=force, progress=lambda table, rows: bar.update(rows, table))
    click.echo(f"{db} exported to {out}: {summary.out_bytes / 1e6:,.1f} MB, {100 * summary.ratio:.1f} % of "
               f"the run's {summary.source_bytes / 1e6:,.1f} MB ({summary.seconds:.1f} s)")
