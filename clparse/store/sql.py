"""``clparse sql``: queries and an interactive shell on a clparse database, through APSW."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import apsw
import apsw.shell
import numpy as np

from clparse.errors import ClparseError
from clparse.store.database import check_database, sqlite_error
from clparse.store.engine import BUSY_TIMEOUT_MS


def connect(db: str | Path, *, write: bool = False) -> apsw.Connection:
    """An APSW connection with clparse's SQL functions registered; read-only ones write nowhere."""
    check_database(db, upgrade=write)
    flags = apsw.SQLITE_OPEN_READWRITE if write else apsw.SQLITE_OPEN_READONLY
    connection = apsw.Connection(str(db), flags=flags)
    connection.set_busy_timeout(BUSY_TIMEOUT_MS)
    if not write:
        connection.authorizer = _ReadOnlyAuthorizer()
    register_functions(connection)
    return connection


#: Pragmas that take an argument and still only read (anything else with an argument may write).
_READING_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_info", "index_xinfo", "index_list", "foreign_key_list",
    "foreign_key_check", "integrity_check", "quick_check", "function_list", "pragma_list", "collation_list",
    "module_list", "compile_options", "database_list"})
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
        elif action == apsw.SQLITE_PRAGMA and argument is not None and (name or "").lower() not in _READING_PRAGMAS:
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
        # e.g. a write on a read-only WAL file: SQLite says "disk I/O error" or "attempt to write a readonly database"
        return ClparseError("the database is opened read-only; add --write to change it")
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError | apsw.FullError | apsw.BusyError):
        return sqlite_error(exc, connection.filename)
    return ClparseError(f"SQL error: {exc}")


def register_functions(connection: apsw.Connection) -> None:
    """SQL functions that open the typed blobs, so plain SQL can reach every example.

    * ``clparse_row_features(row)``: JSON array of the feature ids of a distinct feature row;
    * ``clparse_example(label, n)``: JSON ``{"row", "y", "multiplicity"}`` of a label's n-th distinct example;
    * ``clparse_weights(label, t)`` (table): every distinct example's margin and weight at iteration t.

    Combine them with SQLite's ``json_each`` to list an example's features (README has examples).
    """

    chunk_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # the last chunk read: queries walk rows in order

    def row_features(row: int) -> str | None:
        found: list[Any] = connection.execute(
            "SELECT first_row, row_count FROM feature_rows WHERE first_row <= ? ORDER BY first_row DESC LIMIT 1",
            (row,)).fetchall()
        if not found or row - found[0][0] >= found[0][1]:
            return None
        first = found[0][0]
        if first not in chunk_cache:
            blobs: Any = connection.execute("SELECT indptr_int64, indices_int32 FROM feature_rows WHERE first_row = ?",
                                       (first,)).fetchall()[0]
            chunk_cache.clear()
            chunk_cache[first] = (np.frombuffer(blobs[0], dtype="<i8"), np.frombuffer(blobs[1], dtype="<i4"))
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
        rows_a = np.frombuffer(rows, dtype="<i4")
        if i >= len(rows_a):
            return None
        return json.dumps({"row": int(rows_a[i]), "y": int(np.frombuffer(ys, dtype="i1")[i]),
                           "multiplicity": int(np.frombuffer(counts, dtype="<i4")[i])})

    # APSW's stubs type SQL functions as taking any SQLite value; these take the documented ones.
    connection.create_scalar_function("clparse_row_features", row_features, 1,  # type: ignore[arg-type]
                                      deterministic=True)
    connection.create_scalar_function("clparse_example", example, 2, deterministic=True)  # type: ignore[arg-type]
    _register_weights(connection)


def _register_weights(connection: apsw.Connection) -> None:
    """``clparse_weights(label, t)``: one row per distinct example with the weight that grew tree t."""
    import apsw.ext

    from clparse.store.weights import WEIGHT_COLUMNS, weights_at

    db = connection.filename

    def clparse_weights(label: str, iteration: int):  # type: ignore[no-untyped-def]
        try:
            yield from weights_at(db, label, int(iteration))
        except ClparseError as exc:
            raise ValueError(str(exc)) from None

    clparse_weights.columns = WEIGHT_COLUMNS  # type: ignore[attr-defined]
    clparse_weights.column_access = apsw.ext.VTColumnAccess.By_Index  # type: ignore[attr-defined]
    apsw.ext.make_virtual_module(connection, "clparse_weights", clparse_weights)  # type: ignore[arg-type]


def run_query(db: str | Path, query: str, fmt: str = "table", *, write: bool = False) -> str:
    """Run one or more statements; return each one's rows as an aligned table, CSV or JSON text.

    Several statements (a pasted block of README queries) give one result after another; with
    ``json`` several results are a list of lists.
    """
    if not query.strip():
        raise ClparseError("empty query; give a SQL statement, or no argument for the interactive shell")
    connection = connect(db, write=write)
    cursor = connection.cursor()
    results: list[tuple[list[str], list[list[Any]]]] = []

    def remember(cur: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
        results.append(([name for name, _ in cur.get_description()], []))
        return True

    cursor.exec_trace = remember
    try:
        for row in cursor.execute(query):
            results[-1][1].append([_show(v) for v in row])
    except (apsw.Error, ValueError) as exc:  # ValueError: raised inside a clparse SQL function
        raise _explain(exc, connection, write) from None
    finally:
        connection.close()
    shown = [r for r in results if r[0]] or results[-1:]  # statements without columns print nothing
    if fmt == "json":
        payload = [[dict(zip(columns, row)) for row in rows] for columns, rows in shown]
        return json.dumps(payload[0] if len(payload) == 1 else payload, indent=2) + "\n"
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


def _show(value: Any) -> Any:
    return f"<blob {len(value)} bytes>" if isinstance(value, bytes) else value


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    if not columns:
        return ""
    texts = [[("NULL" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in texts]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.rjust(w) if _numeric(v) else v.ljust(w) for v, w in zip(r, widths)) for r in texts]
    return "\n".join(lines) + f"\n({len(rows)} row{'s' if len(rows) != 1 else ''})\n"


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
        raise self.Error(f"not in a read-only shell; start `clparse sql --write` for this command")


def interactive_shell(db: str | Path, *, write: bool = False) -> None:
    """APSW's shell (``.tables``, ``.schema``, ``.mode``, ``.help``) on the database."""
    shell_class = apsw.shell.Shell if write else _ReadOnlyShell
    shell = shell_class(db=connect(db, write=write))
    shell.cmdloop(intro=f"clparse SQL shell on {db} ({'read-write' if write else 'read-only'}); .help for help")
