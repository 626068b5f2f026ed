"""Read-only means read-only, also on read-only media; SQL functions fail in one line (issue 25, items
4 and 11 and the -wal/-shm leftovers).

* A read-only command (``status``, ``sql``, ``check``, ``parse``, ``report``) on a database nobody
  else has open leaves the directory as it found it (no ``-wal``/``-shm``) and the database file's
  bytes and mtime unchanged.
* A healthy file we may not write (its mode, its directory's, a read-only mount) is read as it is
  (``?immutable=1``), not reported as damaged. As root, where file modes do not stop writes, the
  decision is tested directly and the immutable opening end to end with the permission probe
  answering "read-only"; as another user the real thing runs too.
* ``clparse_row_features``, ``clparse_example`` and ``clparse_weights`` given wrong arguments: exit
  1, one ``Error:`` line naming the function and its arguments, no traceback.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

OLD_SCHEMAS = Path(__file__).parent / "data" / "old_schemas"
CLPARSE = str(Path(sys.executable).with_name("clparse"))
SENTENCE = "The cat sat on the mat .\n"


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small trained and calibrated database of today's schema (the 0006 asset, upgraded), one file."""
    from clparse.store.database import init_database

    db = tmp_path_factory.mktemp("small") / "db.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0006.sqlite", db)
    init_database(db)
    for backup in db.parent.glob("*.bak"):
        backup.unlink()
    assert sorted(p.name for p in db.parent.iterdir()) == ["db.sqlite"]
    return db


@pytest.fixture
def alone(small_db: Path, tmp_path: Path) -> Path:
    """A copy of ``small_db`` alone in its own directory (WAL mode, nobody has it open)."""
    db = tmp_path / "alone" / "db.sqlite"
    db.parent.mkdir()
    shutil.copyfile(small_db, db)
    assert db.read_bytes()[18:20] == b"\x02\x02"  # WAL mode
    return db


READ_ONLY_COMMANDS = {
    "status": ["status"],
    "check": ["check"],
    "report": ["report"],
    "sql": ["sql", "SELECT name, candidates FROM labels; SELECT clparse_row_features(1)"],
    "sql-weights": ["sql", "SELECT count(*) FROM clparse_weights('NP', 1)"],
    "parse": ["parse"],
}


def state(db: Path) -> tuple[list[str], str, int]:
    """What a read-only command must not change: the directory's entries, the file's bytes and mtime."""
    return (sorted(p.name for p in db.parent.iterdir()), hashlib.sha256(db.read_bytes()).hexdigest(),
            db.stat().st_mtime_ns)


def run(db: Path, command: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    """A real ``clparse`` process, as a user runs it (a connection left open would be seen here)."""
    return subprocess.run([CLPARSE, command[0], "--db", str(db), *command[1:]], input=SENTENCE,
                          capture_output=True, text=True, timeout=300, **kw)


@pytest.mark.parametrize("name", sorted(READ_ONLY_COMMANDS))
def test_a_read_only_command_writes_nothing_anywhere(alone: Path, name: str) -> None:
    before = state(alone)
    assert before[0] == ["db.sqlite"]
    result = run(alone, READ_ONLY_COMMANDS[name])
    assert result.returncode == 0, result.stderr
    assert state(alone) == before  # no -wal/-shm left, same bytes, same mtime


def test_read_only_readers_beside_a_writer_leave_its_files_to_it(alone: Path) -> None:
    """While another process has the file open, readers use its -wal/-shm; its close removes them."""
    import apsw

    writer = apsw.Connection(str(alone))
    writer.execute("CREATE TABLE IF NOT EXISTS scratch_notes(x)")
    try:
        result = run(alone, ["status"])
        assert result.returncode == 0, result.stderr
        assert Path(f"{alone}-wal").exists()
    finally:
        writer.close()
    assert sorted(p.name for p in alone.parent.iterdir()) == ["db.sqlite"]


def test_read_only_connections_refuse_writes(alone: Path) -> None:
    import sqlalchemy

    from clparse.errors import DatabaseError
    from clparse.store.database import Database

    with Database(alone, readonly=True) as database:
        with pytest.raises(DatabaseError, match="read"):
            with database.transaction() as connection:
                connection.execute(sqlalchemy.text("DELETE FROM labels"))
    for statement in ("DELETE FROM labels", "PRAGMA wal_checkpoint", "ANALYZE", "VACUUM"):
        result = run(alone, ["sql", statement])
        assert result.returncode == 1 and "read-only" in result.stderr, (statement, result.stderr)
    assert sorted(p.name for p in alone.parent.iterdir()) == ["db.sqlite"]


# ----------------------------------------------------------------------------------- read-only media


def test_the_read_only_opening_decision() -> None:
    from clparse.store.engine import read_only_mode

    def mode(writable: bool, wal_mode: bool = True, wal: bool = False, journal: bool = False) -> str:
        return read_only_mode(writable=writable, wal_mode=wal_mode, wal_exists=wal, journal_exists=journal)

    # may write: WAL files are read through a query_only read-write connection (its close cleans up)
    assert mode(True) == "query_only"
    assert mode(True, wal=True) == "query_only"
    # a rollback journal: a read-only connection makes no file
    assert mode(True, wal_mode=False) == "readonly"
    assert mode(True, wal_mode=False, journal=True) == "readonly"
    # read-only media: immutable unless a log must be read
    assert mode(False) == "immutable"
    assert mode(False, wal_mode=False) == "immutable"
    assert mode(False, wal=True) == "readonly"
    assert mode(False, wal_mode=False, journal=True) == "readonly"


def test_writable_follows_file_and_directory_permissions(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from clparse.store import engine

    db = tmp_path / "db.sqlite"
    db.write_bytes(b"")
    assert engine.writable(db)
    asked: list[tuple[str, int]] = []

    def access(path: Any, mode: int) -> bool:
        asked.append((os.fspath(path), mode))
        return os.fspath(path) != str(tmp_path)  # the directory is read-only

    monkeypatch.setattr(engine.os, "access", access)
    assert not engine.writable(db)
    assert (str(tmp_path), os.W_OK) in asked



@pytest.fixture
def read_only_media(alone: Path) -> Iterator[Path]:
    """``alone`` with its file 0444 and its directory 0555 (modes restored afterwards)."""
    os.chmod(alone, 0o444)
    os.chmod(alone.parent, 0o555)
    try:
        yield alone
    finally:
        os.chmod(alone.parent, 0o755)
        os.chmod(alone, 0o644)


MEDIA_COMMANDS = ("status", "check", "sql", "sql-weights", "parse", "report")


def test_read_only_media_as_decided(read_only_media: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The immutable opening end to end, in this process, with the permission probe saying what it says
    on read-only media (as root file modes stop nothing, so the probe is told)."""
    from clparse.cli import main
    from clparse.store import database, engine

    monkeypatch.setattr(engine, "writable", lambda path: False)
    monkeypatch.setattr(database, "writable", lambda path: False)
    assert engine.mode_of(read_only_media) == "immutable"
    before = state(read_only_media)
    for name in MEDIA_COMMANDS:
        command = READ_ONLY_COMMANDS[name]
        result = CliRunner().invoke(main, [command[0], "--db", str(read_only_media), *command[1:]],
                                    input=SENTENCE)
        assert result.exit_code == 0, (name, result.output)
        assert "damaged" not in result.output
        assert state(read_only_media) == before, name


@pytest.mark.skipif(os.geteuid() == 0, reason="as root file modes do not stop writes (see the test above)")
@pytest.mark.parametrize("name", MEDIA_COMMANDS)
def test_read_only_media_for_real(read_only_media: Path, name: str) -> None:
    before = state(read_only_media)
    result = run(read_only_media, READ_ONLY_COMMANDS[name])
    assert result.returncode == 0, result.stderr
    assert state(read_only_media) == before


def _read_only_mount_works(directory: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    script = f"{mount_read_only(directory)} && ! touch {shlex.quote(str(directory / 'x'))}"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, timeout=30)
    return probe.returncode == 0


def mount_read_only(directory: Path) -> str:
    d = shlex.quote(str(directory))
    return f"mount --bind {d} {d} && mount -o remount,ro,bind {d} {d}"


@pytest.mark.parametrize("name", MEDIA_COMMANDS)
def test_a_read_only_mount_for_real(alone: Path, name: str) -> None:
    """As root: the directory bind-mounted read-only in a private mount namespace (``unshare -m``), where
    nothing can be written by anyone, and each read-only command run there."""
    if not _read_only_mount_works(alone.parent):
        pytest.skip("needs root and unshare -m (a private read-only bind mount)")
    before = state(alone)
    command = READ_ONLY_COMMANDS[name]
    script = mount_read_only(alone.parent) + ' && exec "$@"'
    result = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", CLPARSE, command[0], "--db",
                             str(alone), *command[1:]], input=SENTENCE, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "damaged" not in result.stderr
    assert state(alone) == before


def test_a_read_only_file_is_not_written_as_root_either(read_only_media: Path) -> None:
    """As root the probe says 'writable' (root may write), and still nothing is written."""
    before = state(read_only_media)
    result = run(read_only_media, ["check"])
    assert result.returncode == 0, result.stderr
    assert state(read_only_media) == before
    assert stat.S_IMODE(read_only_media.stat().st_mode) == 0o444


# ------------------------------------------------------------------------------- SQL functions


BAD_CALLS = {
    "SELECT clparse_row_features('abc')": "clparse_row_features(row INTEGER): row must be an integer",
    "SELECT clparse_row_features(1.5)": "clparse_row_features(row INTEGER): row must be an integer",
    "SELECT clparse_row_features(x'00')": "clparse_row_features(row INTEGER): row must be an integer",
    "SELECT clparse_row_features()": "clparse_row_features(row INTEGER): missing argument row",
    "SELECT clparse_row_features(1, 2)": "clparse_row_features(row INTEGER): takes 1 arguments",
    "SELECT clparse_example('NP')": "clparse_example(label TEXT, n INTEGER): missing argument n",
    "SELECT clparse_example('NP', 'x')": "clparse_example(label TEXT, n INTEGER): n must be an integer",
    "SELECT clparse_example(1, 2)": "clparse_example(label TEXT, n INTEGER): label must be text",
    "SELECT * FROM clparse_weights('NP')":
        "clparse_weights(label TEXT, iteration INTEGER): missing argument iteration",
    "SELECT * FROM clparse_weights()":
        "clparse_weights(label TEXT, iteration INTEGER): missing argument label, iteration",
    "SELECT * FROM clparse_weights('NP', 'x')":
        "clparse_weights(label TEXT, iteration INTEGER): iteration must be an integer",
    "SELECT * FROM clparse_weights(NULL, 1)":
        "clparse_weights(label TEXT, iteration INTEGER): label must be text",
    "SELECT * FROM clparse_weights('NOPE', 1)": "clparse_weights: ",
}


@pytest.mark.parametrize("query", sorted(BAD_CALLS))
def test_a_sql_function_with_bad_arguments_is_one_line(small_db: Path, query: str) -> None:
    from clparse.cli import main

    result = CliRunner().invoke(main, ["sql", "--db", str(small_db), query])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: SQL error: "), result.output
    assert BAD_CALLS[query] in lines[0]
    assert "Traceback" not in result.output


def test_sql_functions_with_good_arguments_still_answer(small_db: Path) -> None:
    from clparse.query import run_query

    assert run_query(small_db, "SELECT clparse_row_features(NULL) AS f", "json").strip().startswith("[")
    found = run_query(small_db, "SELECT clparse_row_features(0) AS f, clparse_example('NP', 0) AS e", "json")
    assert '"f": "[' in found and '\\"row\\"' in found
    assert "(1 row)" in run_query(small_db, "SELECT count(*) FROM clparse_weights('NP', 1)")
