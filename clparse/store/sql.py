"""``clparse sql``: queries and an interactive shell on a clparse database, through APSW."""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import apsw
import apsw.shell
import numpy as np

from clparse.errors import ClparseError
from clparse.store.blobs import decode
from clparse.store.database import check_database, sqlite_error
from clparse.store.engine import BUSY_TIMEOUT_MS, open_read_only

#: A table-valued SQL function: its column names, and rows from (database path, *arguments).
TableFunction = tuple[Sequence[str], Callable[..., Iterator[tuple[Any, ...]]]]


def connect(db: str | Path, *, write: bool = False,
            tables: Mapping[str, TableFunction] = {}) -> apsw.Connection:
    """An APSW connection with clparse's SQL functions registered (and the table functions ``tables``,
    which layers above storage supply: e.g. ``clparse_weights`` replays boosting); read-only ones
    write nowhere."""
    # plain SQL reads any schema as it is (the .bak an upgrade leaves, say); --write upgrades first
    check_database(db, upgrade=write, allow_older=not write)
    if write:
        connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READWRITE)
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)
    else:
        # as every read-only command opens it: read-only media too, and no -wal/-shm left behind
        connection = open_read_only(db)
        connection.authorizer = _ReadOnlyAuthorizer()
    register_functions(connection)
    for name, (columns, rows) in tables.items():
        _register_table(connection, name, columns, rows)
    return connection


#: Pragmas that take an argument and still only read (anything else with an argument may write).
_READING_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_info", "index_xinfo", "index_list", "foreign_key_list",
    "foreign_key_check", "integrity_check", "quick_check", "function_list", "pragma_list", "collation_list",
    "module_list", "compile_options", "database_list"})
#: Pragmas that write even without an argument (a checkpoint copies the log into the database file).
_WRITING_PRAGMAS = frozenset({"wal_checkpoint"})
READ_ONLY_HINT = "refused: clparse sql is read-only without --write"


class _ReadOnlyAuthorizer:
    """Denies what would write through a read-only connection: ``ATTACH`` (``VACUUM INTO`` attaches its
    output file) and pragmas that set something. The read-only open flag guards the database itself;
    this guards every other file."""

    def __init__(self) -> None:
        self.denied: str | None = None

    def __call__(self, action: int, name: str | None, argument: str | None, *_: object) -> int:
        if action == apsw.SQLITE_ATTACH:
            self.denied = f"ATTACH and VACUUM INTO open another file ({name}) for writing; {READ_ONLY_HINT}"
        elif action == apsw.SQLITE_PRAGMA and (name or "").lower() in _WRITING_PRAGMAS:
            self.denied = f"PRAGMA {name} would write into the database file; {READ_ONLY_HINT}"
        elif (action == apsw.SQLITE_PRAGMA and argument is not None
              and (name or "").lower() not in _READING_PRAGMAS):
            self.denied = f"PRAGMA {name} = {argument} would change the database; {READ_ONLY_HINT}"
        else:
            return apsw.SQLITE_OK
        return apsw.SQLITE_DENY


def _explain(exc: BaseException, connection: apsw.Connection, write: bool) -> ClparseError:
    """One line for a failed statement: read-only refusals say so (SQLite's own text is misleading)."""
    authorizer = connection.authorizer
    if isinstance(authorizer, _ReadOnlyAuthorizer) and authorizer.denied:
        return ClparseError(authorizer.denied)
    if not write and isinstance(exc, apsw.ReadOnlyError | apsw.IOError | apsw.CantOpenError):
        # e.g. a write on a read-only WAL file: SQLite says "disk I/O error" or "attempt to write a
        # readonly database"
        return ClparseError("the database is opened read-only; add --write to change it")
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError | apsw.FullError | apsw.BusyError):
        return sqlite_error(exc, connection.filename)
    return ClparseError(f"SQL error: {exc}")


class SQLFunctionError(ValueError):
    """A clparse SQL function given arguments it does not take: one line naming the function, its
    arguments and what was wrong (``clparse sql`` prints it as one ``Error: SQL error: ...`` line).
    A ValueError, because APSW hands a Python function's exception back to the statement's caller."""


_SQL_TYPES: dict[type, tuple[str, str]] = {str: ("TEXT", "text"), int: ("INTEGER", "an integer")}


def _usage(name: str, parameters: Sequence[tuple[str, type]]) -> str:
    """``name(arg TYPE, ...)``, as the error lines show a function."""
    return f"{name}({', '.join(f'{p} {_SQL_TYPES[t][0]}' for p, t in parameters)})"


def _shown(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a blob of {len(value)} bytes"
    return repr(value)


def _checked(name: str, parameters: Sequence[tuple[str, type]], args: Sequence[object], *,
             null_ok: bool) -> bool:
    """Check ``args`` against ``parameters`` (name, Python type); False if one is NULL and ``null_ok``
    (a scalar function then returns NULL, as SQL's own functions do)."""
    usage = _usage(name, parameters)
    if len(args) < len(parameters):
        missing = ", ".join(p for p, _ in parameters[len(args):])
        raise SQLFunctionError(f"{usage}: missing argument {missing}")
    if len(args) > len(parameters):
        raise SQLFunctionError(f"{usage}: takes {len(parameters)} arguments, got {len(args)}")
    for (parameter, kind), value in zip(parameters, args):
        if value is None and null_ok:
            return False
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SQLFunctionError(f"{usage}: {parameter} must be {_SQL_TYPES[kind][1]}, got {_shown(value)}")
    return True


def _scalar(connection: apsw.Connection, name: str, parameters: Sequence[tuple[str, type]],
            body: Callable[..., str | None]) -> None:
    """Register ``body`` as the SQL function ``name`` with checked arguments; any other failure inside it
    becomes one line naming the function too (damage reports pass through as they are)."""

    def function(*args: object) -> str | None:
        if not _checked(name, parameters, args, null_ok=True):
            return None
        try:
            return body(*args)
        except ClparseError:
            raise
        except Exception as exc:
            raise SQLFunctionError(f"{_usage(name, parameters)}: {type(exc).__name__}: {exc}") from None

    # -1: any number of arguments, so that a wrong count gets the same line as a wrong type
    connection.create_scalar_function(name, function, -1, deterministic=True)  # type: ignore[arg-type]


def register_functions(connection: apsw.Connection) -> None:
    """SQL functions that open the typed blobs, so plain SQL can reach every example.

    * ``clparse_row_features(row)``: JSON array of the feature ids of a distinct feature row;
    * ``clparse_example(label, n)``: JSON ``{"row", "y", "multiplicity"}`` of a label's n-th distinct example;

    Combine them with SQLite's ``json_each`` to list an example's features (README has examples).
    """

    # the last chunk read: queries walk rows in order
    chunk_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def row_features(row: int) -> str | None:
        found: list[Any] = connection.execute(
            "SELECT first_row, row_count FROM feature_rows WHERE first_row <= ? ORDER BY first_row DESC "
            "LIMIT 1",
            (row,)).fetchall()
        if not found or row - found[0][0] >= found[0][1]:
            return None
        first = found[0][0]
        if first not in chunk_cache:
            blobs: Any = connection.execute("SELECT indptr_int64, indices_int32 FROM feature_rows WHERE "
                                            "first_row = ?",
                                       (first,)).fetchall()[0]
            chunk_cache.clear()
            chunk_cache[first] = (decode("indptr_int64", blobs[0]), decode("indices_int32", blobs[1]))
        indptr, indices = chunk_cache[first]
        local = row - first
        return json.dumps(indices[indptr[local]:indptr[local + 1]].tolist())

    def example(label: str, n: int) -> str | None:
        found: list[Any] = connection.execute(
            "SELECT e.first_example, e.row_int32, e.y_int8, e.multiplicity_int32 FROM label_examples e "
            "JOIN labels l ON l.id = e.label_id WHERE l.name = ? AND e.first_example <= ? "
            "ORDER BY e.first_example DESC LIMIT 1", (label, n)).fetchall()
        if not found:
            return None
        first, rows, ys, counts = found[0]
        i = n - first
        rows_a = decode("row_int32", rows)
        if i >= len(rows_a):
            return None
        return json.dumps({"row": int(rows_a[i]), "y": int(decode("y_int8", ys)[i]),
                           "multiplicity": int(decode("multiplicity_int32", counts)[i])})

    _scalar(connection, "clparse_row_features", [("row", int)], row_features)
    _scalar(connection, "clparse_example", [("label", str), ("n", int)], example)


def _register_table(connection: apsw.Connection, name: str, columns: Sequence[str],
                    rows: Callable[..., Iterator[tuple[Any, ...]]]) -> None:
    """``name(args...)`` as a table-valued function yielding ``rows(database path, *args)``.

    The arguments are checked against the annotations of ``rows`` (``str`` is TEXT, ``int`` INTEGER):
    a missing or wrong one is one :class:`SQLFunctionError` line naming the function and its arguments.
    """
    import typing

    import apsw.ext

    db = connection.filename
    signature = inspect.signature(rows)
    hints = typing.get_type_hints(rows)
    sql_parameters = list(signature.parameters.values())[1:]
    parameters = [(p.name, hints.get(p.name, str)) for p in sql_parameters]

    def table(*args: Any, **named: Any) -> Iterator[tuple[Any, ...]]:
        given = list(args) + [named[p] for p, _ in parameters[len(args):] if p in named]
        _checked(name, parameters, given, null_ok=False)
        try:
            yield from rows(db, *given)
        except ClparseError as exc:
            raise SQLFunctionError(f"{name}: {exc}") from None
        except Exception as exc:
            raise SQLFunctionError(f"{_usage(name, parameters)}: {type(exc).__name__}: {exc}") from None

    # APSW names the function's SQL parameters from its signature: those of ``rows`` after the path.
    table.__signature__ = signature.replace(parameters=sql_parameters)  # type: ignore[attr-defined]
    table.columns = tuple(columns)  # type: ignore[attr-defined]
    table.column_access = apsw.ext.VTColumnAccess.By_Index  # type: ignore[attr-defined]
    apsw.ext.make_virtual_module(connection, name, table)  # type: ignore[arg-type]


def run_query(db: str | Path, query: str, fmt: str = "table", *, write: bool = False,
              tables: Mapping[str, TableFunction] = {}) -> str:
    """Run one or more statements; return each one's rows as an aligned table, CSV or JSON text.

    Several statements (a pasted block of README queries) give one result after another; with
    ``json`` several results are a list of lists.
    """
    if not query.strip():
        raise ClparseError("empty query; give a SQL statement, or no argument for the interactive shell")
    connection = connect(db, write=write, tables=tables)
    cursor = connection.cursor()
    results: list[tuple[list[str], list[list[Any]]]] = []

    def remember(cur: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
        results.append(([name for name, _ in cur.get_description()], []))
        return True

    cursor.exec_trace = remember
    # Several statements that write are one transaction: a failing one left those before it committed
    # (half a pasted block written, the error line silent about it). Not when the query runs its own
    # transactions, or a statement that cannot run inside one (VACUUM, ATTACH, PRAGMA).
    whole = write and _one_transaction(query)
    try:
        if whole:
            connection.execute("BEGIN IMMEDIATE")
        for row in cursor.execute(query):
            results[-1][1].append([_show(v) for v in row])
        if whole:
            connection.execute("COMMIT")
    except (apsw.Error, ValueError) as exc:  # ValueError: raised inside a clparse SQL function
        error = _explain(exc, connection, write)
        if whole:
            if connection.in_transaction:  # (SQLite may have rolled it back itself: a full disk, say)
                connection.execute("ROLLBACK")
            error = ClparseError(f"{error}; nothing was written (the statements are one transaction)")
        raise error from None
    finally:
        connection.close()
    shown = [r for r in results if r[0]] or results[-1:]  # statements without columns print nothing
    if fmt == "json":
        # a JSON object holds each key once: a second column of the same name (a join) would silently
        # replace the first, so later ones are renamed as SQLite renames them (name:1, name:2, ...)
        payload = [[dict(zip(_unique(columns), map(_json_value, row))) for row in rows]
                   for columns, rows in shown]
        return json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        for n, (columns, rows) in enumerate(shown):
            if n:
                out.write("\n")
            writer.writerow(columns)
            writer.writerows(rows)
        return out.getvalue()
    return "\n".join(_table(columns, rows) for columns, rows in shown if columns)


def _unique(columns: Sequence[str]) -> list[str]:
    """The column names with repeats renamed ``name:1``, ``name:2``, ... (skipping names already taken)."""
    taken = set(columns)
    names: list[str] = []
    for column in columns:
        name, n = column, 0
        while name in names or (n and name in taken):
            n += 1
            name = f"{column}:{n}"
        names.append(name)
    return names


#: Statements that end, begin or cannot run inside a transaction: a query holding one is run as it is.
_OWN_TRANSACTION = frozenset({"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE", "VACUUM",
                              "ATTACH", "DETACH", "PRAGMA"})


def _one_transaction(query: str) -> bool:
    """Does ``query`` hold more than one statement, none of them in :data:`_OWN_TRANSACTION`?"""
    keywords, start = [], 0
    for at, char in enumerate(query):
        if char == ";" and apsw.complete(query[start:at + 1]):  # not a ; in a string, comment or trigger
            keywords.append(_first_word(query[start:at]))
            start = at + 1
    keywords.append(_first_word(query[start:]))
    keywords = [k for k in keywords if k]
    return len(keywords) > 1 and not _OWN_TRANSACTION.intersection(keywords)


def _first_word(statement: str) -> str:
    """The first keyword of a statement, past comments (empty if it holds none)."""
    text = statement
    while True:
        text = text.lstrip()
        if text.startswith("--"):
            text = text.partition("\n")[2]
        elif text.startswith("/*"):
            text = text.partition("*/")[2]
        else:
            break
    word = ""
    for char in text:
        if not char.isalpha():
            break
        word += char
    return word.upper()


def _json_value(value: Any) -> Any:
    """A value JSON can hold: an infinite or NaN REAL as the string SQLite's own shell prints for it
    (``Inf``, ``-Inf``; NaN is NULL in SQLite), not Python's bare ``Infinity``, which is not JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Inf" if value > 0 else "-Inf"
    return value


def _show(value: Any) -> Any:
    return f"<blob {len(value)} bytes>" if isinstance(value, bytes) else value


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    if not columns:
        return ""
    texts = [[("NULL" if v is None else _float(v) if isinstance(v, float) else str(v)) for v in row]
             for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in texts]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.rjust(w) if _numeric(v) else v.ljust(w) for v, w in zip(r, widths)) for r in texts]
    return "\n".join(lines) + f"\n({len(rows)} row{'s' if len(rows) != 1 else ''})\n"


def _float(value: float) -> str:
    """Six digits where they are the number, else every digit it needs: a Θ̂ shown as 1.00084 and typed
    back to --theta dropped the trees between it and the stored 1.000835...; SQL's round() shortens."""
    short = f"{value:.6g}"
    return short if float(short) == value else repr(value)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class _ReadOnlyShell(apsw.shell.Shell):
    """APSW's shell without the commands that reach past a read-only connection."""

    #: Commands that open other files read-write, write files, or run Python or the system shell.
    DENIED = ("autoimport", "backup", "connection", "import", "load", "log", "open", "output", "pages_svg",
              "py", "restore", "shell")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name in self.DENIED:
            setattr(self, f"command_{name}", self._denied)

    def _denied(self, _cmd: list[str]) -> None:
        raise self.Error("not in a read-only shell; start `clparse sql --write` for this command")


def interactive_shell(db: str | Path, *, write: bool = False,
                      tables: Mapping[str, TableFunction] = {}) -> None:
    """APSW's shell (``.tables``, ``.schema``, ``.mode``, ``.help``) on the database."""
    shell_class = apsw.shell.Shell if write else _ReadOnlyShell
    shell = shell_class(db=connect(db, write=write, tables=tables))
    shell.cmdloop(intro=f"clparse SQL shell on {db} ({'read-write' if write else 'read-only'}); .help for "
                        "help")
