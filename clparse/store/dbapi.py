"""A DB-API 2.0 (PEP 249) module over APSW, so SQLAlchemy and Alembic never load ``sqlite3``.

Why this exists: APSW links its own SQLite library and Python's ``sqlite3`` links
another. With two SQLite copies in one process, closing a file in one copy drops
the POSIX locks the other copy holds on it, which can corrupt a database that
other processes are writing. So clparse opens every database through APSW, and
this module is the DB-API face SQLAlchemy's SQLite dialect expects::

    from clparse.store import dbapi
    engine = dbapi.create_engine("train.sqlite")            # the usual way
    engine = sqlalchemy.create_engine(                        # the same, by hand
        "sqlite:///train.sqlite", module=dbapi, creator=lambda: dbapi.connect("train.sqlite")
    )

Transactions follow ``sqlite3``'s legacy mode (``isolation_level=""``), which is
what SQLAlchemy's pysqlite dialect is written against:

* ``BEGIN`` is issued implicitly before INSERT, UPDATE, DELETE and REPLACE (and a
  ``WITH ...`` statement that writes) when no transaction is open; SELECT, DDL
  and PRAGMA statements run in autocommit mode unless a transaction is open.
* ``commit()`` and ``rollback()`` do nothing when no transaction is open.
* Whether a transaction is open is always asked of SQLite, never tracked here,
  so ``BEGIN``/``COMMIT``/``SAVEPOINT`` sent as SQL keep everything consistent.
* ``isolation_level = None`` switches the implicit ``BEGIN`` off (SQLAlchemy's
  ``AUTOCOMMIT``) and, like ``sqlite3``, commits an open transaction.

Errors are raised as this module's PEP 249 classes, chosen from the SQLite result
code exactly as ``sqlite3`` chooses them, so SQLAlchemy wraps them in the same
``sqlalchemy.exc`` classes it would for ``sqlite3``.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, NoReturn
from urllib.parse import quote

import apsw

if TYPE_CHECKING:
    import sqlalchemy
    from typing_extensions import Self  # typing.Self needs Python 3.11

__all__ = [
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
    "apilevel",
    "connect",
    "create_engine",
    "paramstyle",
    "sqlite_version",
    "sqlite_version_info",
    "threadsafety",
    "version",
    "version_info",
]

# --------------------------------------------------------------------------------------------
# Module globals required by PEP 249 and read by SQLAlchemy's SQLite dialects.
# --------------------------------------------------------------------------------------------

apilevel: Final = "2.0"
#: Connections may be shared between threads (APSW serialises calls), cursors should not be.
threadsafety: Final = 1
#: ``?`` placeholders; ``:name`` placeholders with a mapping work too, as in ``sqlite3``.
paramstyle: Final = "qmark"

#: Version of the SQLite library APSW uses. SQLAlchemy's dialect reads ``sqlite_version_info``
#: to switch features (RETURNING, multi-row VALUES, ...) on and off.
sqlite_version: Final[str] = apsw.sqlite_lib_version()
sqlite_version_info: Final[tuple[int, ...]] = tuple(int(part) for part in sqlite_version.split("."))
#: Version of the driver, here APSW's own ("3.54.1.0").
version: Final[str] = apsw.apsw_version()
version_info: Final[tuple[int, ...]] = tuple(int(part) for part in version.split("."))

#: Wraps a value to be stored as a BLOB. APSW binds ``bytes``, ``bytearray`` and
#: ``memoryview`` as BLOBs and returns BLOBs as ``bytes``.
Binary = bytes


# --------------------------------------------------------------------------------------------
# PEP 249 exceptions. SQLAlchemy maps them to ``sqlalchemy.exc`` classes by class name.
# --------------------------------------------------------------------------------------------


class Warning(Exception):  # shadows the builtin: the name PEP 249 prescribes
    """Important warnings; never raised by this module, present because PEP 249 asks for it."""


class Error(Exception):
    """Base class of every error this module raises.

    Like ``sqlite3`` (3.11+), errors that come from SQLite carry its result code:
    ``sqlite_errorcode`` is the extended code (e.g. 2067) and ``sqlite_errorname``
    its name (e.g. ``"SQLITE_CONSTRAINT_UNIQUE"``); both are None otherwise.
    """

    sqlite_errorcode: int | None = None
    sqlite_errorname: str | None = None


class InterfaceError(Error):
    """The adapter itself was misused (e.g. SQLITE_MISUSE, SQLITE_RANGE)."""


class DatabaseError(Error):
    """An error in the database (e.g. a corrupt file, or a file that is not a database)."""


class DataError(DatabaseError):
    """A value was unusable (e.g. a string or BLOB too big)."""


class OperationalError(DatabaseError):
    """Operation failed: SQL errors, missing tables, busy/locked, read-only, I/O, disk full."""


class IntegrityError(DatabaseError):
    """A constraint failed: UNIQUE, NOT NULL, CHECK, FOREIGN KEY, or a datatype mismatch."""


class InternalError(DatabaseError):
    """SQLite reported an internal error."""


class ProgrammingError(DatabaseError):
    """Wrong use of the API: closed connection or cursor, wrong number of parameters, ..."""


class NotSupportedError(DatabaseError):
    """A feature that is not supported was requested."""


# SQLite primary result code -> DB-API class, the same table CPython's sqlite3 uses
# (Modules/_sqlite/util.c). SQLITE_NOMEM becomes MemoryError, as in sqlite3; codes not
# listed (NOTADB, FORMAT, AUTH, ...) become DatabaseError.
_CLASS_FOR_RESULT_CODE: Final[dict[int, type[Error]]] = {
    apsw.SQLITE_INTERNAL: InternalError,
    apsw.SQLITE_NOTFOUND: InternalError,
    apsw.SQLITE_ERROR: OperationalError,  # syntax errors, "no such table", ...
    apsw.SQLITE_PERM: OperationalError,
    apsw.SQLITE_ABORT: OperationalError,
    apsw.SQLITE_BUSY: OperationalError,
    apsw.SQLITE_LOCKED: OperationalError,
    apsw.SQLITE_READONLY: OperationalError,
    apsw.SQLITE_INTERRUPT: OperationalError,
    apsw.SQLITE_IOERR: OperationalError,
    apsw.SQLITE_FULL: OperationalError,
    apsw.SQLITE_CANTOPEN: OperationalError,
    apsw.SQLITE_PROTOCOL: OperationalError,
    apsw.SQLITE_EMPTY: OperationalError,
    apsw.SQLITE_SCHEMA: OperationalError,
    apsw.SQLITE_CORRUPT: DatabaseError,
    apsw.SQLITE_TOOBIG: DataError,
    apsw.SQLITE_CONSTRAINT: IntegrityError,
    apsw.SQLITE_MISMATCH: IntegrityError,
    apsw.SQLITE_MISUSE: InterfaceError,
    apsw.SQLITE_RANGE: InterfaceError,
}

# Errors APSW raises on its own, without an SQLite result code.
_CLOSED_DATABASE: Final = (
    "Cannot operate on a closed database."  # SQLAlchemy's is_disconnect() looks for this
)
_CLOSED_CURSOR: Final = "Cannot operate on a closed cursor."
_APSW_ONLY_ERRORS: Final[tuple[tuple[type[apsw.Error], type[Error], str | None], ...]] = (
    (apsw.ConnectionClosedError, ProgrammingError, _CLOSED_DATABASE),
    (apsw.CursorClosedError, ProgrammingError, _CLOSED_CURSOR),
    (apsw.BindingsError, ProgrammingError, None),  # wrong number of parameters
    (apsw.ThreadingViolationError, ProgrammingError, None),  # same object used re-entrantly
    (apsw.ForkingViolationError, ProgrammingError, None),
    (apsw.IncompleteExecutionError, ProgrammingError, None),
    (apsw.ExecutionCompleteError, ProgrammingError, None),
    (apsw.ExtensionLoadingError, OperationalError, None),
)


def _translate(exc: apsw.Error, *, readonly: bool = False, filename: str | None = None) -> BaseException:
    """Return the DB-API exception to raise for ``exc`` (the caller chains it with ``from``)."""
    result = getattr(exc, "result", None)
    if isinstance(result, int) and result >= 0:
        primary = result & 0xFF
        if primary == apsw.SQLITE_NOMEM:
            return MemoryError(str(exc))
        message = str(exc)
        if primary == apsw.SQLITE_READONLY and readonly:
            message += " (the connection was opened read-only)"
        elif primary == apsw.SQLITE_CANTOPEN and filename is not None:
            message += f": {filename}"
        error = _CLASS_FOR_RESULT_CODE.get(primary, DatabaseError)(message)
        extended = getattr(exc, "extendedresult", result)
        code = extended if isinstance(extended, int) and extended >= 0 else result
        error.sqlite_errorcode = code
        # APSW's mapping_* dicts map both ways (code -> name and name -> code).
        name = apsw.mapping_extended_result_codes.get(code) or apsw.mapping_result_codes.get(primary)
        error.sqlite_errorname = name if isinstance(name, str) else None
        return error
    for apsw_class, dbapi_class, fixed_message in _APSW_ONLY_ERRORS:
        if isinstance(exc, apsw_class):
            return dbapi_class(fixed_message or str(exc))
    return InterfaceError(str(exc))


def _unsupported_binding(cursor: apsw.Cursor, number: int, value: Any) -> NoReturn:
    """APSW's ``convert_binding`` hook: a parameter of a type SQLite cannot store.

    ``sqlite3`` raises ProgrammingError here; APSW would raise TypeError, which
    SQLAlchemy would not recognise as a DB-API error.
    """
    raise ProgrammingError(
        f"Error binding parameter {number}: type {type(value).__name__!r} is not supported"
    )


def _bindings(parameters: object) -> Sequence[Any] | Mapping[str, Any]:
    """Check and normalise ``execute`` parameters to what APSW accepts."""
    if parameters is None:
        # An empty tuple, not None: APSW then reports missing parameters as an error, like sqlite3.
        return ()
    if isinstance(parameters, (tuple, list, dict)):
        return parameters
    if isinstance(parameters, Mapping):
        return dict(parameters)
    # A bare str/bytes is a sequence too, but certainly not a list of parameters.
    if isinstance(parameters, Sequence) and not isinstance(parameters, (str, bytes, bytearray, memoryview)):
        return tuple(parameters)
    raise ProgrammingError(f"parameters are of unsupported type {type(parameters).__name__!r}")


# --------------------------------------------------------------------------------------------
# Statement classification for the implicit BEGIN.
# --------------------------------------------------------------------------------------------

# The first keyword of a statement, after any whitespace and SQL comments.
_FIRST_KEYWORD: Final = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*([A-Za-z]+)", re.DOTALL)
# Statements before which sqlite3's legacy mode opens a transaction.
_DML_KEYWORDS: Final = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE"})
# First keywords executemany() accepts ("WITH" only if the statement turns out to write).
_EXECUTEMANY_KEYWORDS: Final = _DML_KEYWORDS | {"WITH"}
_VALID_ISOLATION_LEVELS: Final = frozenset({"", "DEFERRED", "IMMEDIATE", "EXCLUSIVE"})


@functools.lru_cache(maxsize=1024)  # SQLAlchemy sends the same few statement strings again and again
def _first_keyword(sql: str) -> str:
    match = _FIRST_KEYWORD.match(sql)
    return match.group(1).upper() if match else ""


class _StatementTracer:
    """APSW exec tracer of one cursor: runs just before SQLite executes each statement.

    APSW calls it once per statement (a string holding several statements is
    traced statement by statement, ``executemany`` once per parameter set) with
    the statement already prepared. That is the one moment where

    * the result columns are known even if the statement will return no rows
      (APSW's ``Cursor.description`` raises once execution has completed, but a
      SELECT that matches nothing must still have a description), and
    * the implicit ``BEGIN`` can go in before exactly the statements that write.

    When ``summing`` is set (by ``executemany``), it also adds up the rows changed
    by each execution: when the tracer runs for execution *n*, execution *n - 1*
    has completed and ``changes()`` still reports it.

    It is a separate object, not a Cursor method, so that the APSW cursor does not
    hold a reference back to our Cursor (a cycle would keep statements, and the
    read locks they hold, alive until the garbage collector runs).
    """

    __slots__ = ("changes", "connection", "description", "keyword", "summing", "writes")

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.reset()

    def reset(self) -> None:
        self.description: tuple[tuple[str, None, None, None, None, None, None], ...] | None = None
        self.keyword = ""  # first keyword of the statement traced last
        self.writes = False  # whether that statement is DML (INSERT/UPDATE/DELETE/REPLACE)
        self.summing = False
        self.changes = 0  # rows changed by the completed executions, while summing

    def __call__(self, cursor: apsw.Cursor, sql: str, bindings: object) -> bool:
        db = self.connection._db
        if self.summing and self.writes:
            self.changes += db.changes()  # of the previous execution, which has completed
        keyword = _first_keyword(sql)
        # sqlite3 only looks at the first keyword; a CTE followed by DML is recognised here too.
        writes = keyword in _DML_KEYWORDS or (keyword == "WITH" and not cursor.is_readonly)
        self.keyword, self.writes = keyword, writes
        # Only the column names are known; sqlite3 leaves the other six fields None as well.
        columns = cursor.description
        self.description = (
            tuple((column[0], None, None, None, None, None, None) for column in columns) if columns else None
        )
        level = self.connection._isolation_level
        if writes and level is not None and not db.in_transaction:
            db.execute(f"BEGIN {level}")
        return True  # go ahead and execute the statement


# --------------------------------------------------------------------------------------------
# Connection and Cursor.
# --------------------------------------------------------------------------------------------

Row = tuple[Any, ...]
# Inside Connection the name ``apsw`` is the property below, so annotations there use these.
_APSWConnection = apsw.Connection
_APSWError = apsw.Error


class Connection:
    """A PEP 249 connection wrapping one ``apsw.Connection`` (available as ``.apsw``)."""

    def __init__(self, db: _APSWConnection, *, readonly: bool = False) -> None:
        self._db = db
        self._readonly = readonly
        self._closed = False
        # "" = sqlite3's legacy implicit transactions (deferred BEGIN); None = autocommit.
        self._isolation_level: str | None = ""
        db.convert_binding = _unsupported_binding

    # -- state ------------------------------------------------------------------------------

    @property
    def apsw(self) -> _APSWConnection:
        """The underlying APSW connection, for what DB-API does not cover (backup, pragmas, ...)."""
        return self._db

    @property
    def readonly(self) -> bool:
        """Whether the database was opened with ``SQLITE_OPEN_READONLY``."""
        return self._readonly

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open, as SQLite itself reports it (not in autocommit mode)."""
        self._check_open()
        return bool(self._db.in_transaction)

    @property
    def isolation_level(self) -> str | None:
        """The ``BEGIN`` flavour used before DML ("", DEFERRED, IMMEDIATE, EXCLUSIVE), or None.

        None means autocommit: no implicit ``BEGIN``. SQLAlchemy's pysqlite dialect sets
        None for its ``AUTOCOMMIT`` isolation level and "" for the others. As in sqlite3,
        setting None commits a transaction that is open.
        """
        return self._isolation_level

    @isolation_level.setter
    def isolation_level(self, value: str | None) -> None:
        if value is None:
            self.commit()
        elif not isinstance(value, str) or value.upper() not in _VALID_ISOLATION_LEVELS:
            raise ValueError(
                f"isolation_level must be None, '', DEFERRED, IMMEDIATE or EXCLUSIVE, not {value!r}"
            )
        else:
            value = value.upper()
        self._isolation_level = value

    def _check_open(self) -> None:
        if self._closed:
            raise ProgrammingError(_CLOSED_DATABASE)

    def _raise(self, exc: _APSWError) -> NoReturn:
        raise _translate(exc, readonly=self._readonly) from exc

    # -- PEP 249 ----------------------------------------------------------------------------

    def cursor(self) -> Cursor:
        self._check_open()
        return Cursor(self)

    def commit(self) -> None:
        """Commit the open transaction; do nothing when there is none."""
        self._check_open()
        try:
            if self._db.in_transaction:
                self._db.execute("COMMIT")
        except apsw.Error as exc:
            self._raise(exc)

    def rollback(self) -> None:
        """Roll back the open transaction; do nothing when there is none."""
        self._check_open()
        try:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        except apsw.Error as exc:
            self._raise(exc)

    def close(self) -> None:
        """Close the connection (and its cursors). An open transaction is rolled back, not committed.

        Closing twice is harmless.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._db.close()
        except apsw.Error as exc:
            self._raise(exc)

    # -- sqlite3 extensions that SQLAlchemy or users rely on ---------------------------------

    def execute(self, operation: str, parameters: object = None) -> Cursor:
        """Shortcut: a new cursor, executed (as ``sqlite3.Connection.execute``)."""
        return self.cursor().execute(operation, parameters)

    def executemany(self, operation: str, seq_of_parameters: Iterable[object]) -> Cursor:
        return self.cursor().executemany(operation, seq_of_parameters)

    def create_function(
        self, name: str, narg: int, func: Callable[..., Any] | None, *, deterministic: bool = False
    ) -> None:
        """Register an SQL scalar function (SQLAlchemy's dialect adds ``regexp`` and ``floor``)."""
        self._check_open()
        try:
            self._db.create_scalar_function(name, func, narg, deterministic=deterministic)
        except apsw.Error as exc:
            self._raise(exc)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """As in sqlite3: commit if the block succeeded, roll back if it raised; do not close."""
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


class Cursor:
    """A PEP 249 cursor over one ``apsw.Cursor``.

    SELECT results are streamed from SQLite as they are fetched. Results of DML
    statements (``INSERT ... RETURNING``) are read completely during ``execute``,
    so that the statement has finished when ``execute`` returns: ``rowcount`` is
    then final, and a later ``COMMIT`` does not fail with "SQL statements in progress".
    """

    arraysize: int
    #: Column descriptions (name plus six Nones) of the last statement, None if it returns no rows.
    description: tuple[tuple[str, None, None, None, None, None, None], ...] | None
    #: Rows changed by the last INSERT/UPDATE/DELETE/REPLACE (summed by executemany), else -1.
    rowcount: int
    #: Rowid of the last row inserted by INSERT/REPLACE through ``execute``; None before any.
    lastrowid: int | None

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.arraysize = 1
        self.description = None
        self.rowcount = -1
        self.lastrowid = None
        self._closed = False
        self._rows: Iterator[Row] | None = None
        self._tracer = _StatementTracer(connection)
        try:
            self._cursor = connection.apsw.cursor()
        except apsw.Error as exc:
            connection._raise(exc)
        self._cursor.exec_trace = self._tracer

    def _check_open(self) -> None:
        if self._closed:
            raise ProgrammingError(_CLOSED_CURSOR)
        self.connection._check_open()

    def _start(self) -> None:
        """Forget the previous statement's results."""
        self._check_open()
        self._tracer.reset()
        self.description = None
        self.rowcount = -1
        self._rows = None

    def _missing_parameter(self, exc: KeyError) -> ProgrammingError | None:
        """APSW raises KeyError for a ``:name`` missing from the mapping; sqlite3 raises ProgrammingError."""
        try:
            names = self._cursor.bindings_names
        except apsw.Error:
            return None
        if exc.args and exc.args[0] in names:
            return ProgrammingError(f"You did not supply a value for binding parameter :{exc.args[0]}.")
        return None  # a KeyError from somewhere else, e.g. a user-defined SQL function

    def _drain(self) -> list[Row]:
        try:
            return self._cursor.fetchall()
        except apsw.Error as exc:
            self.connection._raise(exc)

    # -- PEP 249 ----------------------------------------------------------------------------

    def execute(self, operation: str, parameters: object = None) -> Cursor:
        """Execute one statement with ``?`` (sequence) or ``:name`` (mapping) parameters."""
        self._start()
        try:
            self._cursor.execute(operation, _bindings(parameters))
        except apsw.Error as exc:
            self.connection._raise(exc)
        except KeyError as exc:
            raise self._missing_parameter(exc) or exc
        tracer = self._tracer
        self.description = tracer.description
        if tracer.writes:
            self._rows = iter(self._drain())  # rows of RETURNING, if any
            self.rowcount = self.connection.apsw.changes()
            if tracer.keyword in ("INSERT", "REPLACE"):
                self.lastrowid = self.connection.apsw.last_insert_rowid()
        elif tracer.description is not None:
            self._rows = self._cursor  # stream: APSW steps SQLite as rows are fetched
        return self

    def executemany(self, operation: str, seq_of_parameters: Iterable[object]) -> Cursor:
        """Execute one DML statement once per parameter set; ``rowcount`` is the sum of changes.

        Any rows returned (RETURNING) are discarded. As in sqlite3, statements that do
        not write are refused.
        """
        self._start()
        only_dml = ProgrammingError("executemany() can only execute DML statements.")
        if _first_keyword(operation) not in _EXECUTEMANY_KEYWORDS:
            raise only_dml
        tracer = self._tracer
        tracer.summing = True
        try:
            # APSW's own executemany reuses the prepared statement: several times faster than a loop here.
            self._cursor.executemany(operation, map(_bindings, seq_of_parameters))
            self._drain()  # rows of RETURNING, if any, are discarded
        except apsw.Error as exc:
            self.connection._raise(exc)
        except KeyError as exc:
            raise self._missing_parameter(exc) or exc
        finally:
            tracer.summing = False
        if tracer.keyword and not tracer.writes:  # "WITH ... SELECT": executed, but not DML
            raise only_dml
        self.rowcount = tracer.changes + (self.connection._db.changes() if tracer.writes else 0)
        return self

    def fetchone(self) -> Row | None:
        self._check_open()
        if self._rows is None:
            return None
        try:
            return next(self._rows, None)
        except apsw.Error as exc:
            self.connection._raise(exc)

    def fetchmany(self, size: int | None = None) -> list[Row]:
        self._check_open()
        if self._rows is None:
            return []
        try:
            return list(itertools.islice(self._rows, self.arraysize if size is None else size))
        except apsw.Error as exc:
            self.connection._raise(exc)

    def fetchall(self) -> list[Row]:
        self._check_open()
        if self._rows is None:
            return []
        try:
            return list(self._rows)
        except apsw.Error as exc:
            self.connection._raise(exc)

    def close(self) -> None:
        """Close the cursor, finishing its statement. Harmless if already closed or disconnected."""
        if self._closed:
            return
        self._closed = True
        self._rows = None
        if not self.connection.closed:  # closing the connection already closed the APSW cursor
            try:
                self._cursor.close()
            except apsw.Error as exc:
                self.connection._raise(exc)

    def setinputsizes(self, sizes: object) -> None:
        """Does nothing, as PEP 249 allows."""

    def setoutputsize(self, size: int, column: int | None = None) -> None:
        """Does nothing, as PEP 249 allows."""

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> Row:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row


# --------------------------------------------------------------------------------------------
# Opening connections and engines.
# --------------------------------------------------------------------------------------------


def connect(path: str | os.PathLike[str], readonly: bool = False, busy_timeout_ms: int = 20000, *,
            immutable: bool = False, query_only: bool = False) -> Connection:
    """Open ``path`` through APSW and return a DB-API :class:`Connection`.

    Every connection gets ``PRAGMA foreign_keys = ON`` and a busy timeout (wait up
    to ``busy_timeout_ms`` for other writers instead of failing at once). A
    writable connection also switches the database to WAL journal mode, which is
    persistent and lets readers proceed while one process writes; an error is
    raised if SQLite refuses (e.g. on a file system without shared memory).

    ``readonly=True`` opens with ``SQLITE_OPEN_READONLY``: the file must exist and
    any write fails with OperationalError ("attempt to write a readonly database").
    Two read-only variants (see :mod:`clparse.store.engine` for when each is used):
    ``immutable=True`` opens ``?immutable=1`` (no locks, no ``-wal``/``-shm``: for files
    nobody can change, e.g. on read-only media); ``query_only=True`` opens the existing
    file read-write without changing its journal mode and sets ``PRAGMA query_only``,
    so that writes fail and the connection, closing last, removes ``-wal``/``-shm``.
    """
    if busy_timeout_ms < 0:
        raise ValueError(f"busy_timeout_ms must be >= 0, not {busy_timeout_ms}")
    if (immutable or query_only) and not readonly:
        raise ValueError("immutable and query_only are ways of opening read-only: give readonly=True too")
    if immutable and query_only:
        raise ValueError("give immutable or query_only, not both")
    filename = os.fspath(path)
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    target = filename
    if query_only:
        flags = apsw.SQLITE_OPEN_READWRITE
    elif immutable:
        flags |= apsw.SQLITE_OPEN_URI
        target = f"file:{quote(os.path.abspath(filename))}?immutable=1"
    try:
        db = apsw.Connection(target, flags=flags)
    except apsw.Error as exc:
        raise _translate(exc, readonly=readonly, filename=filename) from exc
    try:
        db.set_busy_timeout(busy_timeout_ms)  # first, so that the WAL switch below waits too
        db.execute("PRAGMA foreign_keys = ON")
        if query_only:
            db.execute("PRAGMA query_only = ON")
        if not readonly:
            mode = str(db.pragma("journal_mode", "wal")).lower()
            if mode != "wal" and filename not in ("", ":memory:"):  # in-memory databases cannot use WAL
                raise OperationalError(f"cannot use WAL journal mode for {filename} (SQLite kept {mode!r})")
    except BaseException as exc:
        db.close()
        if isinstance(exc, apsw.Error):
            raise _translate(exc, readonly=readonly, filename=filename) from exc
        raise
    return Connection(db, readonly=readonly)


def create_engine(
    path: str | os.PathLike[str], *, readonly: bool = False, busy_timeout_ms: int = 20000,
    immutable: bool = False, query_only: bool = False, **kw: Any
) -> sqlalchemy.Engine:
    """A SQLAlchemy engine whose connections are APSW connections made by :func:`connect`.

    ``kw`` goes to ``sqlalchemy.create_engine`` (``echo``, ``poolclass``, ...). The
    path is made absolute once, here, so that connections the pool opens later do
    not depend on the current directory (SQLAlchemy does the same for ``sqlite3``).
    """
    import sqlalchemy

    for reserved in ("module", "creator"):
        if reserved in kw:
            raise TypeError(f"create_engine() sets {reserved!r} itself")
    filename = os.fspath(path)
    if filename not in ("", ":memory:"):
        filename = os.path.abspath(filename)

    def creator() -> Connection:
        return connect(filename, readonly=readonly, busy_timeout_ms=busy_timeout_ms, immutable=immutable,
                       query_only=query_only)

    url = sqlalchemy.URL.create("sqlite", database=filename)
    return sqlalchemy.create_engine(url, module=sys.modules[__name__], creator=creator, **kw)
