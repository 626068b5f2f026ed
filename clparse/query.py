"""``clparse sql``: plain SQL on a clparse database, with every clparse SQL function registered.

The storage layer provides the connection and the functions that only decode stored blobs
(``clparse_row_features``, ``clparse_example``); this module adds ``clparse_weights(label, t)``,
whose rows are replayed by the trainer's code (every distinct example's margin and weight at
iteration t), so that storage never imports the trainer.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clparse.store import sql
from clparse.train.weights import WEIGHT_COLUMNS


def _weights(db: str, label: str, iteration: int) -> Iterator[tuple[int, int, int, int, float, float]]:
    from clparse.errors import ConfigurationError
    from clparse.store.export import export_origin
    from clparse.train.weights import weights_at

    origin = export_origin(db)
    if origin is not None:  # its examples were left out: no rows would read as a label without examples
        raise ConfigurationError(f"{db} is a parser exported from {origin.get('source', '?')}, without "
                                 "training examples or margins; query the run itself")
    return weights_at(db, str(label), int(iteration))


TABLES: dict[str, sql.TableFunction] = {"clparse_weights": (WEIGHT_COLUMNS, _weights)}


#: What a shell command asks, in SQL (for the two a QUERY most often holds); {name}: its table's name.
SHELL_IN_SQL = {".tables": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                ".schema": "SELECT sql FROM sqlite_master WHERE name = '{name}'"}


def run_query(db: str | Path, query: str, fmt: str = "table", *, write: bool = False) -> str:
    """Run one or more statements; each one's rows as an aligned table, CSV or JSON text."""
    words = _shell_command(query)
    if words:  # `sqlite3 FILE .tables` habits: SQLite's own answer was 'near ".": syntax error'
        from clparse.errors import ClparseError

        command = words[0]
        name = words[1] if len(words) > 1 and words[1].isidentifier() else "TABLE"
        asked = f"; in SQL: \"{SHELL_IN_SQL[command].format(name=name)}\"" if command in SHELL_IN_SQL else ""
        raise ClparseError(f"{command} is a command of the interactive shell, not SQL: run `clparse sql --db "
                           f"{db}` without QUERY and type it there{asked}")
    return sql.run_query(db, query, fmt, write=write, tables=TABLES)


def _shell_command(query: str) -> list[str]:
    """The words of the shell command (``.schema labels``) a query starts with, after any ``--`` comment
    lines; empty for SQL (no SQL statement starts with a dot)."""
    for line in query.splitlines():
        text = line.strip()
        if text and not text.startswith("--"):
            return text.split() if text.startswith(".") else []
    return []


def interactive_shell(db: str | Path, *, write: bool = False) -> None:
    """APSW's shell (``.tables``, ``.schema``, ``.mode``, ``.help``) on the database."""
    sql.interactive_shell(db, write=write, tables=TABLES)


READ_ONLY_HINT = sql.READ_ONLY_HINT
