"""`clparse browse`: the database in a web browser (Datasette), read-only."""

from __future__ import annotations

import signal

from pathlib import Path

import click

from clparse.cli.core import main
from clparse.cli.options import DB_OPTION


@main.command("browse", short_help="The database in a web browser (Datasette), read-only.")
@DB_OPTION
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="Port to serve on (0: any free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface, so other machines can connect).")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default web browser.")
@click.option("--check", "check_only", is_flag=True,
              help="Start the server (on any free port unless --port is given), fetch every canned query "
                   "once, print what answered, and stop.")
@click.pass_context
def browse_command(ctx: click.Context, db: Path, port: int, host: str, open_browser: bool,
                   check_only: bool) -> None:
    """Serve the database with Datasette until Ctrl-C: every table, each table and column described,
    and canned queries (training curve per label, features with the most gain, calibration points,
    calibration per label, per-label status, one tree). Needs pip install 'clparse[browse]'.

    The file is opened immutable: nothing is written to it or beside it. A file being written (a
    -wal beside it) is refused: browse a `clparse backup` of it. See docs/browse.md.

    \b
    clparse browse --db db/quickstart.sqlite        # then open http://127.0.0.1:8001
    """
    from clparse import browse

    if check_only:
        if open_browser:  # the page was never opened, without a word: the server stops once checked
            raise click.UsageError("--open and --check go apart: --check stops the server once every query "
                                   "answered; give --open alone to browse")
        # a self-test needs no fixed port: 8001 is taken while the same database is being browsed
        if ctx.get_parameter_source("port") is click.core.ParameterSource.DEFAULT:
            port = 0
        for url, rows, truncated in browse.check(db, host, port):
            cut = f" (cut at Datasette's limit of {browse.MAX_ROWS:,} rows: the query has more)"
            click.echo(f"{url}: {rows} rows{cut if truncated else ''}")
        return
    # Ctrl-C (SIGINT) is how the server is stopped: make it raise KeyboardInterrupt even in a process that
    # inherited SIGINT ignored or blocked (a test runner's child, say), instead of serving on unstoppable.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    server = browse.start(db, host, port)
    try:
        server.wait_until_ready()
        click.echo(f"serving {db} read-only at {server.database_url} (Ctrl-C stops)")
        if open_browser:
            import webbrowser  # here, not at the top: every command's start would pay for it

            webbrowser.open(server.database_url)
        server.process.wait()
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a server is stopped
    finally:
        server.stop()
