"""Issue 14 (hardening), the library side: database errors as one line, backups, cleanup after a
failed first command, and the input rules the CLI and the Python API share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from clparse.errors import ClparseError, DatabaseError
from tests.conftest import read_rows

BIN = Path(sys.executable).parent


# ----------------------------------------------------------------------------- 6. one line per database error


@pytest.mark.parametrize("error,expected", [
    (apsw.FullError("database or disk is full"),
     "db.sqlite: the disk is full; the transaction in flight was rolled back, everything committed before is "
     "intact; free space and run the command again"),
    (apsw.BusyError("database is locked"),
     "db.sqlite: the database stayed locked by another process for 20 s; try again"),
    (apsw.CorruptError("database disk image is malformed"),
     "db.sqlite: the database is damaged; nothing was written to it; restore it from a backup (`clparse "
     "backup` makes one)"),
    (apsw.SQLError("no such table: x\n(more)"), "db.sqlite: database error: no such table: x"),
])
def test_sqlite_errors_become_one_line(error: Exception, expected: str) -> None:
    import sqlalchemy.exc

    from clparse.store.database import sqlite_error

    assert str(sqlite_error(error, "db.sqlite")) == expected
    # The same error as SQLAlchemy wraps it (with the SQL and parameters in its text): the same line.
    wrapped = sqlalchemy.exc.OperationalError("SELECT * FROM x WHERE id = ?", (1,), error)
    assert str(sqlite_error(wrapped, "db.sqlite")) == expected


def test_a_full_disk_during_a_write_is_one_line(db_copy: Path) -> None:
    """A real SQLITE_FULL: the file may not grow by a page (as on a full disk)."""
    (pages,), = read_rows(db_copy, "PRAGMA page_count")
    query = (f"PRAGMA max_page_count = {pages}; "
             "CREATE TABLE filler AS SELECT randomblob(100000) AS b FROM labels")
    done = subprocess.run([str(BIN / "clparse"), "sql", "--db", str(db_copy), "--write", query],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == (f"Error: {db_copy}: the disk is full; the transaction in flight was rolled back, "
                           "everything committed before is intact; free space and run the command again\n")
    assert read_rows(db_copy, "SELECT count(*) FROM sqlite_master WHERE name = 'filler'") == [(0,)]


# ----------------------------------------------------------------------------- 16, 17. backup, cleanup


def test_backup_refuses_a_foreign_file_and_its_own_path(tmp_path: Path, trained_db: Path) -> None:
    from clparse.store.database import backup_database

    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    with pytest.raises(DatabaseError, match="not a SQLite database"):
        backup_database(text, tmp_path / "out.sqlite")
    with pytest.raises(DatabaseError, match="already exists"):
        backup_database(trained_db, trained_db)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_failed_first_command_removes_the_database_it_created(tmp_path: Path) -> None:
    from clparse.store.database import new_or_existing

    db = tmp_path / "new.sqlite"
    said: list[str] = []
    with pytest.raises(RuntimeError), new_or_existing(db, warn=said.append):
        assert db.exists()
        raise RuntimeError("prepare failed")
    assert not db.exists() and said == [f"removed {db} again: this command created it and did not finish"]
    with new_or_existing(db) as created:
        assert created
    with pytest.raises(RuntimeError), new_or_existing(db) as created:  # existing now: never removed
        assert not created
        raise RuntimeError("prepare failed")
    assert db.exists()
    nested = tmp_path / "new" / "dir" / "x.sqlite"
    with pytest.raises(RuntimeError), new_or_existing(nested):
        raise RuntimeError("prepare failed")
    assert not (tmp_path / "new").exists()  # the directories it made for the database go too


# ----------------------------------------------------------------------------- 7. read-only, at the library


def test_read_only_connection_denies_writes_to_other_files(trained_db: Path, tmp_path: Path) -> None:
    from clparse.query import run_query

    with pytest.raises(ClparseError, match="refused: clparse sql is read-only without --write"):
        run_query(trained_db, f"VACUUM INTO '{tmp_path / 'x.sqlite'}'")
    with pytest.raises(ClparseError, match="refused: clparse sql is read-only without --write"):
        run_query(trained_db, "PRAGMA user_version = 7")
    assert run_query(trained_db, "PRAGMA user_version", fmt="csv") == "user_version\r\n0\r\n"
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- 15. paths


def test_treebank_files_expand_directories_in_name_order(tmp_path: Path) -> None:
    from clparse.read.paths import treebank_files

    for name in ("b.mrg", "a.ptb", "notes.txt"):
        (tmp_path / name).write_text("(S (NN x))\n")
    assert treebank_files([tmp_path, tmp_path / "notes.txt"]) == [tmp_path / "a.ptb", tmp_path / "b.mrg",
                                                                 tmp_path / "notes.txt"]
    with pytest.raises(ClparseError, match="no such file or directory"):
        treebank_files([tmp_path / "missing"])


# ----------------------------------------------------------------------------- 9, 11, 18. input rules


def test_one_sentence_per_line_and_unknown_tags(tmp_path: Path) -> None:
    from clparse.read.sentences import read_sentences

    path = tmp_path / "in.txt"
    path.write_text("a/DT b/XYZ\n\nc/XYZ d/NN\n")
    warnings: list[str] = []
    sentences = list(read_sentences([str(path)], "tagged", warnings.append, known_tags={"DT", "NN"}))
    assert sentences == [[("a", "DT"), ("b", "XYZ")], [], [("c", "XYZ"), ("d", "NN")]]
    assert warnings == [
        f"{path}:1: token 2 has tag 'XYZ', never seen in training (warned once per tag)",
        f"{path}:2: empty line; its output is (ROOT), so output lines stay aligned with input",
    ]


def test_binary_input_names_file_and_line(tmp_path: Path) -> None:
    from clparse.read.sentences import read_sentences

    path = tmp_path / "in.txt"
    path.write_bytes(b"ok line\n\xff\xfe bad\n")
    with pytest.raises(ClparseError) as caught:
        list(read_sentences([str(path)], "tokens"))
    assert str(caught.value) == f"{path}:2: byte 1 is not UTF-8 text (binary file, or another encoding?)"


def test_the_api_and_the_cli_agree_on_empty_sentences(trained_db: Path) -> None:
    """One rule for both (item 11): an empty sentence is (ROOT), in the API and, per line, in the CLI."""
    from clparse.parser import Parser
    from clparse.read.ptb import format_tree

    parser = Parser.from_db(trained_db, theta=3.0, beam=1)
    assert format_tree(parser.parse("").tree) == "(ROOT)"
    done = subprocess.run([str(BIN / "clparse"), "parse", "--db", str(trained_db), "--theta", "3",
                           "--beam", "1"],
                          input="\n", capture_output=True, text=True, timeout=300, env=os.environ)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "(ROOT)\n"


def test_training_failures_are_described_in_one_line() -> None:
    """What `train` prints and stores for a failed label: SQLite's errors without SQL text."""
    import sqlalchemy.exc

    from clparse.store.database import describe, is_full

    full = sqlalchemy.exc.OperationalError("INSERT INTO iterations ...", {"x": 1},
                                           apsw.FullError("disk is full"))
    assert is_full(full)
    assert describe(full, "db.sqlite").startswith("db.sqlite: the disk is full; ")
    assert describe(ValueError("bad"), "db.sqlite") == "ValueError: bad"


def test_known_revisions_agree_with_alembic() -> None:
    """Item 13: the schema revisions are read from the migration files without importing Alembic."""
    from alembic.script import ScriptDirectory

    from clparse.store.database import _alembic_config, known_revisions

    script = ScriptDirectory.from_config(_alembic_config())
    assert known_revisions() == [rev.revision for rev in reversed(list(script.walk_revisions()))]
