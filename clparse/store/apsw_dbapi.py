"""A small DB-API 2.0 (PEP 249) module over APSW, so SQLAlchemy and Alembic never load ``sqlite3``.

Why: APSW ships its own SQLite; Python's ``sqlite3`` links another. Two SQLite
copies in one process opening the same file break SQLite's POSIX locks (one
copy closing a descriptor drops the other's locks), which can corrupt a
database that other processes write to, exactly what parallel training
does. So every connection in clparse goes through APSW, and this module gives
SQLAlchemy's SQLite dialect (``create_engine(..., module=this_module)``) the
DB-API it expects, behaving like ``sqlite3`` in its legacy transaction mode:
a ``BEGIN`` is issued implicitly before INSERT/UPDATE/DELETE/REPLACE, and
``commit``/``rollback`` end it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import apsw

apilevel = "2.0"
threadsafety = 1
paramstyle = "qmark"
sqlite_version_info = tuple(int(part) for part in apsw.sqlite_lib_version().split("."))
version_info = (2, 6, 0)
Binary = bytes


class Warning(Exception):  # noqa: A001 - the DB-API name
    pass


class Error(Exception):
    pass


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


# APSW exception -> DB-API class, as sqlite3 classifies the same SQLite error codes.
_ERRORS: tuple[tuple[type[BaseException], type[Error]], ...] = (
    (apsw.ConstraintError, IntegrityError),
    (apsw.MismatchError, IntegrityError),
    (apsw.CorruptError, DatabaseError),
    (apsw.NotADBError, DatabaseError),
    (apsw.TooBigError, DataError),
    (apsw.RangeError, ProgrammingError),
    (apsw.BindingsError, ProgrammingError),
    (apsw.ExecutionCompleteError, ProgrammingError),
    (apsw.ConnectionClosedError, ProgrammingError),
    (apsw.CursorClosedError, ProgrammingError),
    (apsw.ReadOnlyError, OperationalError),
    (apsw.Error, OperationalError),  # busy, locked, I/O, full, SQL errors: sqlite3 says OperationalError
)
_DML = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def _translate(exc: BaseException) -> Error:
    for source, target in _ERRORS:
        if isinstance(exc, source):
            error = target(str(exc))
            error.__cause__ = exc
            return error
    return InterfaceError(str(exc))


class Cursor:
    """A DB-API cursor over an APSW cursor."""

    arraysize = 1

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._cursor = connection.apsw.cursor()
        self._rows: Iterator[tuple[Any, ...]] = iter(())
        self.description: tuple[tuple[Any, ...], ...] | None = None
        self.rowcount = -1
        self.lastrowid: int | None = None

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        self.connection._begin_if_needed(sql)
        apsw_conn = self.connection.apsw
        changes_before = apsw_conn.total_changes()
        columns: tuple[tuple[str, Any], ...] = ()

        def remember_columns(cursor: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
            # Called for each statement after it is prepared and before it runs: the only moment
            # APSW can describe the columns of a query that turns out to return no rows.
            nonlocal columns
            columns = tuple(cursor.getdescription())
            return True

        self._cursor.exec_trace = remember_columns
        try:
            results = self._cursor.execute(sql, _bindings(parameters))
        except Exception as exc:
            raise _translate(exc) from None
        self.description = tuple((name, None, None, None, None, None, None) for name, _ in columns) or None
        self._rows = _guarded(results) if columns else iter(())
        dml = sql.lstrip().upper().startswith(_DML)
        self.rowcount = apsw_conn.total_changes() - changes_before if dml else -1
        self.lastrowid = apsw_conn.last_insert_rowid()
        return self

    def executemany(self, sql: str, seq_of_parameters: Sequence[Sequence[Any] | dict[str, Any]]) -> Cursor:
        self.connection._begin_if_needed(sql)
        apsw_conn = self.connection.apsw
        changes_before = apsw_conn.total_changes()
        try:
            self._cursor.executemany(sql, [_bindings(p) for p in seq_of_parameters])
        except Exception as exc:
            raise _translate(exc) from None
        self.description = None
        self._rows = iter(())
        self.rowcount = apsw_conn.total_changes() - changes_before
        self.lastrowid = apsw_conn.last_insert_rowid()
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        return next(self._rows, None)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        size = self.arraysize if size is None else size
        out = []
        for _ in range(size):
            row = next(self._rows, None)
            if row is None:
                break
            out.append(row)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self._rows

    def close(self) -> None:
        self._rows = iter(())
        self._cursor.close()

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass


def _bindings(parameters: Sequence[Any] | dict[str, Any] | None) -> Any:
    if parameters is None:
        return ()
    if isinstance(parameters, dict):
        return parameters
    return tuple(bytes(p) if isinstance(p, (memoryview, bytearray)) else p for p in parameters)


def _guarded(rows: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Rows, with APSW errors raised while stepping translated to DB-API errors."""
    try:
        yield from rows
    except apsw.Error as exc:
        raise _translate(exc) from None


class Connection:
    """A DB-API connection owning one ``apsw.Connection`` (available as ``.apsw``)."""

    def __init__(self, connection: apsw.Connection) -> None:
        self.apsw = connection
        #: None = autocommit (no implicit BEGIN), "" = sqlite3's legacy implicit transactions.
        self.isolation_level: str | None = ""

    def _begin_if_needed(self, sql: str) -> None:
        if self.isolation_level is not None and not self.apsw.in_transaction \
                and sql.lstrip().upper().startswith(_DML):
            self.apsw.execute("BEGIN")

    def cursor(self) -> Cursor:
        return Cursor(self)

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        return self.cursor().execute(sql, parameters)

    def commit(self) -> None:
        if self.apsw.in_transaction:
            try:
                self.apsw.execute("COMMIT")
            except apsw.Error as exc:
                raise _translate(exc) from None

    def rollback(self) -> None:
        if self.apsw.in_transaction:
            self.apsw.execute("ROLLBACK")

    def close(self) -> None:
        self.rollback()
        self.apsw.close()

    def create_function(self, name: str, nargs: int, func: Callable[..., Any], *, deterministic: bool = False) -> None:
        self.apsw.create_scalar_function(name, func, nargs, deterministic=deterministic)


def connect(path: str, *, readonly: bool = False, busy_timeout_ms: int = 20_000) -> Connection:
    """Open ``path`` through APSW with clparse's settings (busy timeout, foreign keys, WAL)."""
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        raw = apsw.Connection(str(path), flags=flags)
        raw.set_busy_timeout(busy_timeout_ms)
        raw.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            raw.execute("PRAGMA journal_mode = WAL")
    except apsw.Error as exc:
        raise _translate(exc) from None
    return Connection(raw)
