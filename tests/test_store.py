"""The training database: creation, refusal of foreign/newer/damaged files, prepare, the Python API, sql."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw
import numpy as np
import pytest
import sqlalchemy as sa

from clparse.data import sample_path
from clparse.errors import ClparseError, DatabaseError, TreebankError
from clparse.examples.data import TrainingData
from clparse.examples.generate import item_to_tree, replay
from clparse.examples.prepare import PrepareSettings, prepare
from clparse.query import run_query
from clparse.store import dbapi, schema
from clparse.store.database import check_database, init_database
from clparse.store.engine import make_engine

SMALL = "".join(f"(ROOT (S (NP (DT The) (NN dog{i % 3})) (VP (VBD barked) (ADVP (RB loudly))) (. .)))\n"
                for i in range(12))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return init_database(tmp_path / "db" / "t.sqlite")


def test_init_creates_a_recognizable_database(db: Path) -> None:
    connection = apsw.Connection(str(db))
    assert connection.execute("PRAGMA application_id").fetchall()[0][0] == schema.APPLICATION_ID
    assert connection.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert check_database(db) == schema.SCHEMA_REVISION
    assert init_database(db) == db  # again: nothing to do


def test_no_sqlite3_module_is_ever_loaded(tmp_path: Path) -> None:
    code = (f"import sys\nfrom clparse.store.database import init_database\n"
            f"from clparse.examples.prepare import prepare\n"
            f"from clparse.examples.data import TrainingData\n"
            f"p = init_database({str(tmp_path / 'x.sqlite')!r})\n"
            f"prepare(p, [{str(sample_path('dev'))!r}])\nTrainingData(p).label_matrix('NP')\n"
            f"assert 'sqlite3' not in sys.modules and '_sqlite3' not in sys.modules, sorted(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def _unchanged_after(path: Path, action) -> None:  # type: ignore[no-untyped-def]
    before = path.read_bytes()
    with pytest.raises(DatabaseError) as info:
        action()
    assert path.read_bytes() == before
    assert str(path) in str(info.value)


def test_foreign_files_are_refused_and_untouched(tmp_path: Path) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, not a database")
    _unchanged_after(text, lambda: init_database(text))
    other = tmp_path / "other.sqlite"
    connection = apsw.Connection(str(other))
    connection.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
    connection.close()
    _unchanged_after(other, lambda: init_database(other))


def test_newer_schema_is_refused(db: Path) -> None:
    connection = apsw.Connection(str(db))
    connection.execute("UPDATE alembic_version SET version_num = '9999'")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    with pytest.raises(DatabaseError, match="newer than this clparse knows"):
        init_database(db)


def test_truncated_database_is_refused_untouched(prepared: Path) -> None:
    connection = apsw.Connection(str(prepared))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    data = prepared.read_bytes()
    prepared.write_bytes(data[: len(data) // 3])
    with pytest.raises(DatabaseError):
        TrainingData(prepared).label_matrix("NP")


def test_prepare_is_idempotent_and_refuses_other_inputs(prepared: Path) -> None:
    again = prepare(prepared, [sample_path("train")], [sample_path("dev")],
                    PrepareSettings(max_words=10, tagger_iterations=20))
    assert not again.created and "nothing to do" in again.message
    with pytest.raises(DatabaseError, match="other inputs or settings"):
        prepare(prepared, [sample_path("train")], [sample_path("dev")],
                PrepareSettings(max_words=10, seed=1, tagger_iterations=20))


def test_bad_tree_stops_prepare_and_stores_nothing(db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ptb"
    bad.write_text(SMALL + "(S (NP (NN x)\n")
    with pytest.raises(TreebankError, match="bad.ptb:13:1: unbalanced"):
        prepare(db, [bad])
    assert run_query(db, "SELECT count(*) AS n FROM runs", fmt="json") == '[\n  {\n    "n": 0\n  }\n]\n'


def test_full_disk_rolls_back(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    train = tmp_path / "t.ptb"
    train.write_text(SMALL)

    def tiny_engine(path: Path, readonly: bool = False) -> sa.Engine:
        engine = make_engine(path, readonly=readonly)
        sa.event.listen(engine, "connect", lambda conn, _: conn.execute("PRAGMA max_page_count = 12"))
        return engine

    monkeypatch.setattr("clparse.store.database.make_engine", tiny_engine)
    with pytest.raises(DatabaseError, match="rolled back"):
        prepare(db, [train])
    monkeypatch.undo()
    assert check_database(db) == schema.SCHEMA_REVISION
    assert json.loads(run_query(db, "SELECT count(*) AS n FROM sentences", fmt="json"))[0]["n"] == 0
    assert prepare(db, [train]).created  # and the database still works


def test_python_api_examples_and_paths(prepared: Path) -> None:
    data = TrainingData(prepared)
    labels = data.labels()
    assert "NP" in labels and "ROOT" in labels
    rows = data.feature_rows()
    x, y, multiplicity = data.label_matrix("NP", rows)
    assert x.shape[0] == len(y) == len(multiplicity) and set(np.unique(y)) == {-1, 1}
    stored = json.loads(run_query(prepared, "SELECT candidates, positives, examples FROM labels "
                                            "WHERE name = 'NP'", fmt="json"))[0]
    assert multiplicity.sum() == stored["candidates"] and multiplicity[y > 0].sum() == stored["positives"]
    assert len(y) == stored["examples"]
    # distinct (row, y) pairs: deduplication is exact
    assert len({(int(r), int(v)) for r, v in zip(data.label_examples("NP")[0], y)}) == len(y)
    for sentence in data.sentences("train"):
        if sentence.trained:
            rebuilt = item_to_tree(replay(sentence.tree.tagged_words(), sentence.path), sentence.tree.words())
            assert rebuilt == sentence.tree
    assert sum(1 for _ in data.sentences("dev")) > 0


def test_sql_output_formats_and_read_only(prepared: Path) -> None:
    table = run_query(prepared, "SELECT name FROM labels WHERE name = 'NP'")
    assert table.splitlines()[0].strip() == "name" and "(1 row)" in table
    assert run_query(prepared, "SELECT 1 AS a, 'x' AS b", fmt="csv") == "a,b\r\n1,x\r\n"
    with pytest.raises(ClparseError, match="read-only"):
        run_query(prepared, "DELETE FROM labels")
    with pytest.raises(ClparseError, match="SQL error"):
        run_query(prepared, "SELECT nope FROM labels")


def test_dbapi_adapter_basics(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "a.sqlite")
    meta = sa.MetaData()
    parent = sa.Table("parent", meta, sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("name", sa.String, unique=True), sa.Column("blob", sa.LargeBinary))
    sa.Table("child", meta, sa.Column("id", sa.Integer, primary_key=True),
             sa.Column("parent_id", sa.Integer, sa.ForeignKey("parent.id"), nullable=False))
    meta.create_all(engine)
    with engine.begin() as c:
        result = c.execute(parent.insert().values(name="a", blob=b"\x00\x01"))
        assert result.inserted_primary_key[0] == 1
    with engine.connect() as c:
        c.execute(parent.insert().values(name="b"))
        c.rollback()
        assert c.execute(sa.select(sa.func.count()).select_from(parent)).scalar() == 1
        assert c.execute(sa.select(parent.c.blob)).scalar() == b"\x00\x01"
        assert c.execute(parent.update().values(name="c")).rowcount == 1
        c.commit()
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as c:
        c.execute(parent.insert().values(name="c"))
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as c:
        c.execute(sa.text("INSERT INTO child (parent_id) VALUES (42)"))  # foreign keys are on
    assert sorted(sa.inspect(engine).get_table_names()) == ["child", "parent"]
    raw = dbapi.connect(str(tmp_path / "a.sqlite"))
    assert raw.cursor().execute("CREATE TABLE z(x)").description is None
    assert raw.cursor().execute("SELECT x FROM z").description[0][0] == "x"  # described though empty
    readonly = make_engine(tmp_path / "a.sqlite", readonly=True)
    with pytest.raises(sa.exc.OperationalError), readonly.begin() as c:
        c.execute(sa.text("DELETE FROM parent"))


def test_older_schema_is_backed_up_then_upgraded(tmp_path: Path) -> None:
    import clparse.store.database as database

    old = tmp_path / "old.sqlite"
    database._migrate(old, fresh=True, target="0001")  # a database as the first release made it
    assert check_database_revision(old) == "0001"
    with pytest.raises(DatabaseError, match="older"):
        database.check_database(old, upgrade=False)
    messages: list[str] = []
    assert database.check_database(old, echo=messages.append) == schema.SCHEMA_REVISION
    backup = old.with_name(f"{old.name}.schema-0001.bak")
    assert backup.exists() and "backup at" in messages[0]
    assert check_database_revision(backup) == "0001"
    assert check_database_revision(old) == schema.SCHEMA_REVISION
    tables = {row[0] for row in apsw.Connection(str(old)).execute("SELECT name FROM sqlite_master")}
    assert {"iterations", "tree_nodes", "label_training", "margin_checkpoints"} <= tables


def check_database_revision(path: Path) -> str:
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    return connection.execute("SELECT version_num FROM alembic_version").fetchall()[0][0]
