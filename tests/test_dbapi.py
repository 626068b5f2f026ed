"""Tests of clparse.store.dbapi: the DB-API 2.0 adapter over APSW, alone and under SQLAlchemy."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
import sqlalchemy as sa
import sqlalchemy.exc

from clparse.store import dbapi

metadata = sa.MetaData()
labels = sa.Table(
    "labels",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(20), nullable=False, unique=True),
)
classifiers = sa.Table(
    "classifiers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("label_id", sa.Integer, sa.ForeignKey("labels.id"), nullable=False),
    sa.Column("weight", sa.Float, nullable=False),
    sa.Column("model", sa.LargeBinary),
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "train.sqlite"


@pytest.fixture
def engine(db_path: Path) -> Iterator[sa.Engine]:
    engine = dbapi.create_engine(db_path)
    metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def conn(db_path: Path) -> Iterator[dbapi.Connection]:
    connection = dbapi.connect(db_path)
    connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)")
    yield connection
    connection.close()


def count(engine: sa.Engine, table: sa.Table) -> int:
    with engine.connect() as connection:
        return connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()


# -- module globals ---------------------------------------------------------------------------


def test_module_globals_are_what_sqlalchemy_reads() -> None:
    assert dbapi.apilevel == "2.0" and dbapi.paramstyle == "qmark"
    assert dbapi.sqlite_version_info == tuple(int(p) for p in apsw.sqlite_lib_version().split("."))
    assert dbapi.sqlite_version_info >= (3, 35)  # RETURNING, which SQLAlchemy then uses
    assert issubclass(dbapi.IntegrityError, dbapi.DatabaseError) and issubclass(
        dbapi.DatabaseError, dbapi.Error
    )
    assert issubclass(dbapi.InterfaceError, dbapi.Error) and not issubclass(
        dbapi.InterfaceError, dbapi.DatabaseError
    )


# -- through SQLAlchemy -----------------------------------------------------------------------


def test_create_all_insert_select_and_inspector(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        result = connection.execute(labels.insert().values(name="NP"))
        assert result.inserted_primary_key == (1,)
        connection.execute(
            classifiers.insert(),
            [
                {"label_id": 1, "weight": 0.5, "model": b"\x00\x01\xff"},
                {"label_id": 1, "weight": -2.25, "model": None},
            ],
        )
    with engine.connect() as connection:
        rows = connection.execute(sa.select(classifiers).order_by(classifiers.c.id)).all()
        joined = connection.execute(
            sa.select(labels.c.name, sa.func.sum(classifiers.c.weight))
            .join(classifiers)
            .group_by(labels.c.name)
        ).all()
        empty = connection.execute(sa.select(labels).where(labels.c.name == "VP")).all()
    assert [tuple(row) for row in rows] == [(1, 1, 0.5, b"\x00\x01\xff"), (2, 1, -2.25, None)]
    assert [tuple(row) for row in joined] == [("NP", -1.75)]
    assert empty == []  # a SELECT without rows still has a description, so .all() works

    inspector = sa.inspect(engine)
    assert sorted(inspector.get_table_names()) == ["classifiers", "labels"]
    columns = {c["name"]: c for c in inspector.get_columns("classifiers")}
    assert list(columns) == ["id", "label_id", "weight", "model"]
    assert isinstance(columns["model"]["type"], sa.LargeBinary) and not columns["weight"]["nullable"]
    [foreign_key] = inspector.get_foreign_keys("classifiers")
    assert foreign_key["referred_table"] == "labels" and foreign_key["constrained_columns"] == ["label_id"]


def test_insert_returning_many_rows(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        ids = connection.execute(
            labels.insert().returning(labels.c.id, labels.c.name), [{"name": "S"}, {"name": "VP"}]
        ).all()
    assert [tuple(row) for row in ids] == [(1, "S"), (2, "VP")]


def test_rollback_discards(engine: sa.Engine) -> None:
    with engine.connect() as connection:
        connection.execute(labels.insert().values(name="NP"))
        connection.rollback()
    assert count(engine, labels) == 0
    with pytest.raises(RuntimeError), engine.begin() as connection:
        connection.execute(labels.insert().values(name="NP"))
        raise RuntimeError("abort the transaction")
    assert count(engine, labels) == 0


def test_nested_savepoint_rollback_keeps_outer_work(engine: sa.Engine) -> None:
    # sqlite3's legacy mode gets this wrong; here SQLite is asked whether a transaction is open.
    with engine.begin() as connection:
        connection.execute(labels.insert().values(name="NP"))
        savepoint = connection.begin_nested()
        connection.execute(labels.insert().values(name="VP"))
        savepoint.rollback()
    with engine.connect() as connection:
        assert connection.execute(sa.select(labels.c.name)).scalars().all() == ["NP"]


def test_unique_violation_is_integrity_error(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(labels.insert().values(name="NP"))
    with pytest.raises(sqlalchemy.exc.IntegrityError) as info, engine.begin() as connection:
        connection.execute(labels.insert().values(name="NP"))
    assert isinstance(info.value.orig, dbapi.IntegrityError)
    assert "UNIQUE constraint failed: labels.name" in str(info.value)
    assert info.value.orig.sqlite_errorname == "SQLITE_CONSTRAINT_UNIQUE"


def test_foreign_key_violation_is_integrity_error(engine: sa.Engine) -> None:
    with (
        pytest.raises(sqlalchemy.exc.IntegrityError, match="FOREIGN KEY constraint failed"),
        engine.begin() as c,
    ):
        c.execute(classifiers.insert().values(label_id=42, weight=1.0))
    assert count(engine, classifiers) == 0


def test_rowcount_of_update_and_delete(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(labels.insert(), [{"name": n} for n in ("NP", "VP", "PP")])
        updated = connection.execute(
            labels.update().where(labels.c.name != "NP").values(name=labels.c.name + "x")
        )
        assert updated.rowcount == 2
        assert connection.execute(labels.delete().where(labels.c.name == "nothing")).rowcount == 0
        assert connection.execute(labels.delete()).rowcount == 3


def test_autocommit_isolation_level(engine: sa.Engine) -> None:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(labels.insert().values(name="NP"))
        assert connection.connection.dbapi_connection.isolation_level is None  # type: ignore[union-attr]
        assert not connection.connection.dbapi_connection.in_transaction  # type: ignore[union-attr]
    assert count(engine, labels) == 1
    with engine.connect() as connection:  # the pool reset the isolation level
        assert connection.connection.dbapi_connection.isolation_level == ""  # type: ignore[union-attr]


def test_wal_and_foreign_keys_are_on(engine: sa.Engine) -> None:
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 20000


def test_readonly_engine_refuses_writes(engine: sa.Engine, db_path: Path) -> None:
    with engine.begin() as connection:
        connection.execute(labels.insert().values(name="NP"))
    readonly = dbapi.create_engine(db_path, readonly=True)
    try:
        with readonly.connect() as connection:
            assert connection.execute(sa.select(labels.c.name)).scalars().all() == ["NP"]
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            with pytest.raises(sqlalchemy.exc.OperationalError, match="attempt to write a readonly database"):
                connection.execute(labels.insert().values(name="VP"))
    finally:
        readonly.dispose()
    assert count(engine, labels) == 1


def test_readonly_open_of_missing_file_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(dbapi.OperationalError, match="unable to open database file.*missing.sqlite"):
        dbapi.connect(missing, readonly=True)
    assert not missing.exists()


def test_other_connections_see_only_committed_rows(engine: sa.Engine, db_path: Path) -> None:
    with engine.connect() as writer:
        writer.execute(labels.insert().values(name="NP"))
        other = dbapi.connect(db_path)
        try:
            assert other.execute("SELECT count(*) FROM labels").fetchone() == (0,)
            writer.commit()
            assert other.execute("SELECT count(*) FROM labels").fetchone() == (1,)
        finally:
            other.close()


def test_sqlite3_is_never_imported(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        import sqlalchemy as sa
        from clparse.store import dbapi

        engine = dbapi.create_engine(sys.argv[1])
        table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True))
        table.metadata.create_all(engine)
        with engine.begin() as connection:
            connection.execute(table.insert(), [{"id": 1}, {"id": 2}])
            assert connection.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 2
        assert sa.inspect(engine).get_table_names() == ["t"]
        engine.dispose()
        leaked = sorted(name for name in ("sqlite3", "_sqlite3", "sqlite3.dbapi2") if name in sys.modules)
        print("leaked:", leaked)
        sys.exit(1 if leaked else 0)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "fresh.sqlite")],
        check=False,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "leaked: []" in result.stdout


# -- the DB-API directly ----------------------------------------------------------------------


def test_description_is_none_for_statements_without_rows(conn: dbapi.Connection) -> None:
    cursor = conn.cursor()
    assert cursor.description is None and cursor.rowcount == -1 and cursor.lastrowid is None
    cursor.execute("CREATE TABLE u (a INTEGER)")
    assert cursor.description is None and cursor.fetchall() == [] and cursor.fetchone() is None
    cursor.execute("INSERT INTO u VALUES (1)")
    assert cursor.description is None
    cursor.execute("SELECT a, a + 1 AS b FROM u WHERE a > 5")  # no rows, but columns
    assert cursor.description == (("a",) + (None,) * 6, ("b",) + (None,) * 6)
    assert cursor.fetchall() == []
    cursor.execute("DROP TABLE u")
    assert cursor.description is None


def test_rowcount_and_lastrowid(conn: dbapi.Connection) -> None:
    cursor = conn.cursor()
    cursor.execute("INSERT INTO t (name) VALUES (?)", ("a",))
    assert cursor.rowcount == 1 and cursor.lastrowid == 1
    cursor.executemany("INSERT INTO t (name) VALUES (?)", [("b",), ("c",), ("d",)])
    assert cursor.rowcount == 3
    cursor.execute("INSERT INTO t (id, name) VALUES (10, 'e')")
    assert cursor.lastrowid == 10
    cursor.execute("UPDATE t SET data = x'00' WHERE id < 3")
    assert cursor.rowcount == 2 and cursor.lastrowid == 10  # only INSERT/REPLACE move lastrowid
    cursor.execute("SELECT * FROM t")
    assert cursor.rowcount == -1
    cursor.execute("DELETE FROM t WHERE name IN ('a', 'b', 'zz')")
    assert cursor.rowcount == 2
    cursor.executemany("UPDATE t SET name = name || ? WHERE id = ?", [("!", 3), ("!", 4), ("!", 99)])
    assert cursor.rowcount == 2
    cursor.executemany("DELETE FROM t WHERE id = ?", [])
    assert cursor.rowcount == 0
    cursor.executemany(
        "UPDATE t SET data = ? WHERE id >= ? RETURNING id", [(b"1", 4), (b"2", 10), (b"3", 11)]
    )
    assert cursor.rowcount == 3 and cursor.fetchall() == []  # 2 + 1 + 0; RETURNING rows are dropped
    for not_dml in ("SELECT ?", "WITH v(n) AS (SELECT ?) SELECT n FROM v"):
        with pytest.raises(dbapi.ProgrammingError, match="DML"):
            cursor.executemany(not_dml, [(1,)])
    with pytest.raises(dbapi.ProgrammingError, match="parameter :name"):
        cursor.executemany(
            "INSERT INTO t (id, name) VALUES (:id, :name)", [{"id": 20, "name": "x"}, {"id": 21}]
        )


def test_implicit_begin_and_transaction_state(conn: dbapi.Connection, db_path: Path) -> None:
    conn.commit()  # no transaction: both are no-ops
    conn.rollback()
    assert not conn.in_transaction
    conn.execute("SELECT * FROM t").fetchall()
    assert not conn.in_transaction  # reads do not begin
    conn.execute("INSERT INTO t (name) VALUES ('a')")
    assert conn.in_transaction  # DML does
    conn.execute("CREATE TABLE inside (x)")  # DDL runs inside the open transaction
    conn.rollback()
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    assert not conn.apsw.table_exists(None, "inside")

    conn.execute("BEGIN IMMEDIATE")  # transaction control as SQL keeps state consistent
    assert conn.in_transaction
    conn.execute("INSERT INTO t (name) VALUES ('b')")
    conn.execute("COMMIT")
    assert not conn.in_transaction
    conn.commit()  # nothing left to commit: no "no transaction is active" error

    conn.execute("/* comment */ -- another\n  with v(n) AS (SELECT 'c') INSERT INTO t (name) SELECT n FROM v")
    assert conn.in_transaction  # a CTE that writes begins as well
    conn.commit()

    conn.isolation_level = None  # autocommit: no implicit BEGIN
    conn.execute("INSERT INTO t (name) VALUES ('d')")
    assert not conn.in_transaction
    with pytest.raises(ValueError):
        conn.isolation_level = "SOMETIMES"
    conn.isolation_level = "immediate"
    assert conn.isolation_level == "IMMEDIATE"

    other = dbapi.connect(db_path)
    try:
        assert [row[0] for row in other.execute("SELECT name FROM t ORDER BY id")] == ["b", "c", "d"]
    finally:
        other.close()


def test_connection_context_manager_commits_or_rolls_back(conn: dbapi.Connection) -> None:
    with conn:
        conn.execute("INSERT INTO t (name) VALUES ('kept')")
    with pytest.raises(dbapi.IntegrityError), conn:
        conn.execute("INSERT INTO t (name) VALUES ('lost')")
        conn.execute("INSERT INTO t (name) VALUES ('kept')")
    assert conn.execute("SELECT name FROM t").fetchall() == [("kept",)]


def test_fetch_methods_and_iteration(conn: dbapi.Connection) -> None:
    conn.executemany("INSERT INTO t (id, name) VALUES (?, ?)", [(i, f"n{i}") for i in range(1, 8)])
    cursor = conn.execute("SELECT id FROM t ORDER BY id")
    assert cursor.fetchone() == (1,)
    assert cursor.fetchmany() == [(2,)]  # arraysize defaults to 1
    cursor.arraysize = 2
    assert cursor.fetchmany() == [(3,), (4,)]
    assert cursor.fetchmany(1) == [(5,)]
    assert list(cursor) == [(6,), (7,)]
    assert cursor.fetchone() is None and cursor.fetchall() == [] and cursor.fetchmany(5) == []
    named = conn.execute("SELECT name FROM t WHERE id = :id", {"id": 3})
    assert named.fetchall() == [("n3",)]
    returned = conn.execute("DELETE FROM t WHERE id > ? RETURNING id", (5,))
    assert sorted(returned.fetchall()) == [(6,), (7,)] and returned.rowcount == 2
    conn.commit()  # possible because RETURNING rows were read during execute


def test_blob_round_trip(conn: dbapi.Connection) -> None:
    payload = bytes(range(256)) * 4
    for value in (payload, memoryview(payload), bytearray(payload), dbapi.Binary(payload)):
        conn.execute("DELETE FROM t")
        conn.execute("INSERT INTO t (name, data) VALUES (?, ?)", ("blob", value))
        [(stored, kind)] = conn.execute("SELECT data, typeof(data) FROM t").fetchall()
        assert stored == payload and isinstance(stored, bytes) and kind == "blob"


def test_blob_round_trip_through_sqlalchemy(engine: sa.Engine) -> None:
    payload = bytes(range(256)) * 100
    with engine.begin() as connection:
        connection.execute(labels.insert().values(id=1, name="NP"))
        connection.execute(classifiers.insert().values(label_id=1, weight=1.0, model=payload))
        connection.execute(classifiers.insert().values(label_id=1, weight=1.0, model=memoryview(b"mv")))
    with engine.connect() as connection:
        stored = connection.execute(sa.select(classifiers.c.model).order_by(classifiers.c.id)).scalars().all()
    assert stored == [payload, b"mv"]


@pytest.mark.parametrize(
    ("sql", "parameters", "error", "message"),
    [
        ("SELEC 1", None, dbapi.OperationalError, "syntax error"),
        ("SELECT * FROM nowhere", None, dbapi.OperationalError, "no such table"),
        ("SELECT ?, ?", (1,), dbapi.ProgrammingError, "bindings"),
        ("SELECT ?", None, dbapi.ProgrammingError, "bindings"),
        ("SELECT :a, :b", {"a": 1}, dbapi.ProgrammingError, "parameter :b"),
        ("SELECT ?", (object(),), dbapi.ProgrammingError, "type 'object' is not supported"),
        ("SELECT ?", "x", dbapi.ProgrammingError, "unsupported type"),
        ("INSERT INTO t (id) VALUES ('not an integer')", None, dbapi.IntegrityError, "datatype mismatch"),
    ],
)
def test_errors_map_to_dbapi_classes(
    conn: dbapi.Connection, sql: str, parameters: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        conn.execute(sql, parameters)


def test_closed_objects_raise_programming_error(db_path: Path) -> None:
    connection = dbapi.connect(db_path)
    cursor = connection.cursor()
    cursor.close()
    cursor.close()  # twice is fine
    with pytest.raises(dbapi.ProgrammingError, match="closed cursor"):
        cursor.execute("SELECT 1")
    pending = connection.execute("SELECT 1 UNION ALL SELECT 2")
    connection.close()
    connection.close()
    pending.close()  # its connection is gone: still fine
    for operation in (
        connection.cursor,
        connection.commit,
        connection.rollback,
        lambda: connection.execute("SELECT 1"),
    ):
        with pytest.raises(dbapi.ProgrammingError, match="Cannot operate on a closed database."):
            operation()


def test_create_function_as_the_dialect_uses_it(engine: sa.Engine) -> None:
    with engine.begin() as connection:  # the dialect registered regexp() and floor() on connect
        connection.execute(labels.insert(), [{"name": "NP-SBJ"}, {"name": "VP"}])
        matched = connection.execute(
            sa.select(labels.c.name).where(labels.c.name.regexp_match("^NP"))
        ).scalars()
        assert matched.all() == ["NP-SBJ"]
        assert connection.execute(sa.select(sa.func.floor(2.7))).scalar() == 2


def test_create_engine_rejects_its_own_arguments(db_path: Path) -> None:
    with pytest.raises(TypeError, match="creator"):
        dbapi.create_engine(db_path, creator=lambda: None)
