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
from clparse.store.database import check_database
from clparse.store.engine import BUSY_TIMEOUT_MS


def connect(db: str | Path, *, write: bool = False) -> apsw.Connection:
    """An APSW connection with clparse's SQL functions registered."""
    check_database(db, upgrade=write)
    flags = apsw.SQLITE_OPEN_READWRITE if write else apsw.SQLITE_OPEN_READONLY
    connection = apsw.Connection(str(db), flags=flags)
    connection.set_busy_timeout(BUSY_TIMEOUT_MS)
    register_functions(connection)
    return connection


def register_functions(connection: apsw.Connection) -> None:
    """SQL functions that open the typed blobs, so plain SQL can reach every example.

    * ``clparse_row_features(row)``: JSON array of the feature ids of a distinct feature row;
    * ``clparse_example(label, n)``: JSON ``{"row", "y", "multiplicity"}`` of a label's n-th distinct example;
    * ``clparse_weights(label, t)`` (table): every distinct example's margin and weight at iteration t.

    Combine them with SQLite's ``json_each`` to list an example's features (README has examples).
    """

    chunk_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # the last chunk read: queries walk rows in order

    def row_features(row: int) -> str | None:
        found = connection.execute(
            "SELECT first_row, row_count FROM feature_rows WHERE first_row <= ? ORDER BY first_row DESC LIMIT 1",
            (row,)).fetchall()
        if not found or row - found[0][0] >= found[0][1]:
            return None
        first = found[0][0]
        if first not in chunk_cache:
            blobs = connection.execute("SELECT indptr_int64, indices_int32 FROM feature_rows WHERE first_row = ?",
                                       (first,)).fetchall()[0]
            chunk_cache.clear()
            chunk_cache[first] = (np.frombuffer(blobs[0], dtype="<i8"), np.frombuffer(blobs[1], dtype="<i4"))
        indptr, indices = chunk_cache[first]
        local = row - first
        return json.dumps(indices[indptr[local]:indptr[local + 1]].tolist())

    def example(label: str, n: int) -> str | None:
        found = connection.execute(
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

    connection.create_scalar_function("clparse_row_features", row_features, 1, deterministic=True)
    connection.create_scalar_function("clparse_example", example, 2, deterministic=True)
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
    apsw.ext.make_virtual_module(connection, "clparse_weights", clparse_weights)


def run_query(db: str | Path, query: str, fmt: str = "table", *, write: bool = False) -> str:
    """Run one query; return its rows as an aligned table, CSV or JSON text."""
    connection = connect(db, write=write)
    cursor = connection.cursor()
    columns: list[str] = []

    def remember(cur: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
        nonlocal columns
        columns = [name for name, _ in cur.get_description()]
        return True

    cursor.exec_trace = remember
    try:
        rows = [list(row) for row in cursor.execute(query)]
    except apsw.ReadOnlyError:
        raise ClparseError("the database is opened read-only; add --write to change it") from None
    except (apsw.Error, ValueError) as exc:  # ValueError: raised inside a clparse SQL function
        raise ClparseError(f"SQL error: {exc}") from None
    finally:
        connection.close()
    rows = [[_show(v) for v in row] for row in rows]
    if fmt == "json":
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue()
    return _table(columns, rows)


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


def interactive_shell(db: str | Path, *, write: bool = False) -> None:
    """APSW's shell (``.tables``, ``.schema``, ``.mode``, ``.help``) on the database."""
    shell = apsw.shell.Shell(db=connect(db, write=write))
    shell.cmdloop(intro=f"clparse SQL shell on {db} ({'read-write' if write else 'read-only'}); .help for help")
