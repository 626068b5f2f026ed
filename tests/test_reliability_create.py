"""Creating and upgrading a database under fault injection (issue 25, items 1-3).

* Creating is exclusive: racers on one new path end with one complete database, exactly one of
  them created it and the others found it finished (real processes, started together).
* An upgrade is all-or-nothing: ``kill -9`` at a random moment leaves the file exactly as before
  (same revision, same rows) or fully upgraded, and ``clparse init`` then finishes it.
* A backup from an upgrade never overwrites an earlier one, and an old database is never
  reported as damaged for something else's fault (a leftover ``.bak``, an interrupted write).
"""

from __future__ import annotations

import multiprocessing
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from click.testing import CliRunner

OLD_SCHEMAS = Path(__file__).parent / "data" / "old_schemas"


def clparse(*args: str) -> Any:
    from clparse.cli import main

    return CliRunner().invoke(main, list(args))


def dump(db: Path) -> tuple[list[tuple[Any, ...]], dict[str, list[str]]]:
    """The schema and every row of ``db`` (as SQLite reads its committed state; a hot journal left by
    a kill is rolled back, as any read-write open does)."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READWRITE)
    connection.set_busy_timeout(10_000)
    try:
        schema = sorted((r[0], r[1], r[2]) for r in connection.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"))
        tables = [r[1] for r in schema if r[0] == "table"]
        rows = {t: sorted(repr(tuple(r)) for r in connection.execute(f'SELECT * FROM "{t}"')) for t in tables}
    finally:
        connection.close()
    return schema, rows


def revision_of(db: Path) -> str:
    return dump(db)[1]["alembic_version"][0].strip("(),'")


# ------------------------------------------------------------------------------- item 1: racing creators


def _racer(path: str, barrier: Any, queue: Any) -> None:
    from clparse.store.database import init_database

    said: list[str] = []
    barrier.wait()
    try:
        init_database(path, echo=said.append)
        queue.put(("ok", said))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        queue.put(("error", [f"{type(exc).__name__}: {exc}"]))


def race_creators(directory: Path, rounds: int) -> None:
    import alembic.command  # noqa: F401 - imported once before forking: the racers start at once

    from clparse.store.database import check_database, integrity_check, known_revisions

    context = multiprocessing.get_context("fork")
    for n in range(rounds):
        racers = 2 + n % 3
        path = directory / f"round{n}" / "new.sqlite"
        barrier, queue = context.Barrier(racers), context.Queue()
        processes = [context.Process(target=_racer, args=(str(path), barrier, queue)) for _ in range(racers)]
        for p in processes:
            p.start()
        results = [queue.get(timeout=120) for _ in processes]
        for p in processes:
            p.join(60)
            assert p.exitcode == 0
        errors = [said for status, said in results if status == "error"]
        assert not errors, (n, errors)
        created = [said for _, said in results if any(line.startswith("created ") for line in said)]
        assert len(created) == 1, (n, results)  # exactly one creator; the others found it finished
        assert check_database(path, upgrade=False) == known_revisions()[-1]
        integrity_check(path)
        assert {"alembic_version", "runs", "labels"} <= set(dump(path)[1])
        assert sorted(p.name for p in path.parent.iterdir()) == ["new.sqlite"], "scratch files left behind"


def test_racing_creators_make_one_complete_database(tmp_path: Path) -> None:
    race_creators(tmp_path, rounds=3)


@pytest.mark.slow
def test_racing_creators_many_rounds(tmp_path: Path) -> None:
    race_creators(tmp_path, rounds=20)


def test_a_dead_creators_scratch_file_is_cleaned_up(tmp_path: Path) -> None:
    """A scratch file of a creator that was killed (its pid no longer runs) is removed by the next one."""
    from clparse.store.database import init_database

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    leftover = tmp_path / f".new.sqlite.{dead}.0123abcd.creating"
    leftover.write_bytes(b"half a database")
    init_database(tmp_path / "new.sqlite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite"]


def test_an_empty_file_is_taken_over(tmp_path: Path) -> None:
    """A 0-byte file (``touch``) at the path is replaced by the new database, as before."""
    from clparse.store.database import check_database, init_database, known_revisions

    path = tmp_path / "new.sqlite"
    path.touch()
    said: list[str] = []
    init_database(path, echo=said.append)
    assert said and said[0].startswith("created ")
    assert check_database(path, upgrade=False) == known_revisions()[-1]


# ------------------------------------------------------------------------- item 2: kills during an upgrade

UPGRADER = """
import sys
from clparse import api
import alembic.command, alembic.op  # imported before the go signal: the kill lands inside the upgrade
print("ready", flush=True)
sys.stdin.readline()
api.init(sys.argv[1], echo=lambda line: print(line, flush=True))
print("done", flush=True)
"""


def start_upgrader(db: Path, cwd: Path) -> subprocess.Popen[str]:
    """An upgrader process with its imports done, waiting for "go" on stdin."""
    process = subprocess.Popen([sys.executable, "-c", UPGRADER, str(db)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, cwd=cwd)
    assert process.stdin is not None and process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def upgrade_in_subprocess(db: Path, cwd: Path) -> float:
    """Upgrade ``db`` in an upgrader process; the seconds from "go" to its end."""
    process = start_upgrader(db, cwd)
    assert process.stdin is not None
    start = time.perf_counter()
    process.stdin.write("go\n")
    process.stdin.flush()
    process.communicate(timeout=300)
    assert process.returncode == 0
    return time.perf_counter() - start


def kill_upgrades(tmp_path: Path, revision: str, kills: int, seed: int) -> dict[str, int]:
    from clparse.store.database import known_revisions

    source = OLD_SCHEMAS / f"schema-{revision}.sqlite"
    before = dump(source)
    reference = tmp_path / "reference" / "db.sqlite"
    reference.parent.mkdir()
    shutil.copyfile(source, reference)
    # The reference upgrade runs as the killed ones do (a subprocess, timed from "go" to its end), so
    # the kill moments spread over the whole upgrade, on a quiet machine and on a loaded one.
    span = upgrade_in_subprocess(reference, tmp_path)
    after = dump(reference)
    head = known_revisions()[-1]
    rng = random.Random(seed)
    seen = {"before": 0, "after": 0}
    for n in range(kills):
        db = tmp_path / f"kill{n}" / "db.sqlite"
        db.parent.mkdir()
        shutil.copyfile(source, db)
        process = start_upgrader(db, tmp_path)
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
        time.sleep(rng.uniform(0, span * 1.2))
        process.send_signal(signal.SIGKILL)
        process.wait()
        state = dump(db)
        if state == before:
            seen["before"] += 1
        else:
            assert state == after, f"kill {n}: neither as before nor fully upgraded (at {revision_of(db)})"
            seen["after"] += 1
        result = clparse("init", "--db", str(db))
        assert result.exit_code == 0, (n, result.output)
        assert dump(db) == after and revision_of(db) == head
        # every backup left is a complete copy of the old database, and none was overwritten
        for backup in db.parent.glob("db.sqlite.schema-*.bak"):
            assert dump(backup) == before, backup
        assert not list(db.parent.glob(".*")), sorted(p.name for p in db.parent.iterdir())
    return seen


def test_an_upgrade_killed_at_random_is_all_or_nothing(tmp_path: Path) -> None:
    kill_upgrades(tmp_path, "0003", kills=4, seed=25)


@pytest.mark.slow
@pytest.mark.parametrize("revision", ["0001", "0005"])
def test_many_killed_upgrades_are_all_or_nothing(tmp_path: Path, revision: str) -> None:
    seen = kill_upgrades(tmp_path, revision, kills=25, seed=int(revision))
    assert seen["before"] and seen["after"], seen  # the kills landed on both sides of the commit


def test_an_upgrade_runs_in_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure in the last migration rolls every earlier one back too: the file stays as it was."""
    from clparse.errors import DatabaseError
    from clparse.store.database import init_database

    db = tmp_path / "db.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0001.sqlite", db)
    before = dump(db)
    import alembic.runtime.migration as migration

    real = migration.HeadMaintainer.update_to_step
    steps: list[object] = []

    def failing(self: Any, step: Any) -> None:
        steps.append(step)
        if len(steps) == 4:
            raise RuntimeError("injected failure in the fourth migration")
        real(self, step)

    monkeypatch.setattr(migration.HeadMaintainer, "update_to_step", failing)
    with pytest.raises((RuntimeError, DatabaseError)):
        init_database(db)
    assert len(steps) == 4
    assert dump(db) == before


# ------------------------------------------------------------------------------ item 3: backups, misreports


def test_an_earlier_backup_is_never_overwritten(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0003.sqlite", db)
    earlier = tmp_path / "db.sqlite.schema-0003.bak"
    shutil.copyfile(OLD_SCHEMAS / "schema-0001.sqlite", earlier)  # a backup from another time
    content = earlier.read_bytes()
    result = clparse("init", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert earlier.read_bytes() == content
    numbered = tmp_path / "db.sqlite.schema-0003.1.bak"
    assert f"backup at {numbered}" in result.output
    assert dump(numbered) == dump(OLD_SCHEMAS / "schema-0003.sqlite")
    shutil.copyfile(OLD_SCHEMAS / "schema-0003.sqlite", db)
    assert "schema-0003.2.bak" in clparse("init", "--db", str(db)).output


def test_a_broken_leftover_backup_is_not_reported_as_damage_of_the_database(tmp_path: Path) -> None:
    """A partial ``.bak`` (an earlier upgrade killed while copying) made `init` say the *database* was
    damaged: the backup API wrote into the broken file and failed. Now it is left alone."""
    db = tmp_path / "db.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0003.sqlite", db)
    partial = tmp_path / "db.sqlite.schema-0003.bak"
    partial.write_bytes((OLD_SCHEMAS / "schema-0003.sqlite").read_bytes()[:5000])
    result = clparse("init", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "damaged" not in result.output
    assert partial.stat().st_size == 5000


def _leave_hot_journal(db: Path) -> None:
    """A write to a rollback-journal database killed mid-transaction (changed pages already in the file)."""
    code = f"""
import apsw, os
c = apsw.Connection({str(db)!r})
c.execute("PRAGMA cache_size = 5")
c.execute("BEGIN")
c.execute("CREATE TABLE junk(x)")
for _ in range(3000):
    c.execute("INSERT INTO junk VALUES (randomblob(1000))")
os._exit(0)
"""
    subprocess.run([sys.executable, "-c", code], check=True)
    assert Path(f"{db}-journal").exists()


def test_an_interrupted_write_on_an_old_database_is_not_called_damage(tmp_path: Path) -> None:
    """The old-schema files use a rollback journal (until the first upgrade switches them to WAL); a
    kill mid-write, e.g. during that switch, leaves a hot journal. The read-only first look used to
    fail on it ("attempt to write a readonly database") and call the file damaged; SQLite's rollback
    restores the committed state, so the file is read, checked and upgraded as it was."""
    db = tmp_path / "db.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0003.sqlite", db)
    before = dump(OLD_SCHEMAS / "schema-0003.sqlite")
    _leave_hot_journal(db)
    from clparse.store.database import quick_check

    quick_check(db)  # what `init` and every writing command run first
    result = clparse("init", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert dump(tmp_path / "db.sqlite.schema-0003.bak") == before


@pytest.mark.parametrize("revision", ["0001", "0002", "0003", "0004", "0005", "0006"])
def test_every_old_database_checks_ok_before_and_after_its_upgrade(tmp_path: Path, revision: str) -> None:
    db = tmp_path / "db.sqlite"
    shutil.copyfile(OLD_SCHEMAS / f"schema-{revision}.sqlite", db)
    from clparse.store.database import quick_check

    quick_check(db)  # the first look `init` takes, on the old schema
    for command in (["init"], ["check"], ["status"]):
        result = clparse(*command, "--db", str(db))
        assert result.exit_code == 0 and "damaged" not in result.output, (command, result.output)


def test_a_busy_database_is_not_called_damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file locked by another process for longer than the busy timeout is 'locked', not 'damaged'."""
    import clparse.store.database as database
    import clparse.store.engine as engine

    db = tmp_path / "db.sqlite"
    # a rollback journal: an exclusive lock blocks the readers too
    shutil.copyfile(OLD_SCHEMAS / "schema-0003.sqlite", db)
    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    holder = apsw.Connection(str(db))
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = clparse("check", "--db", str(db))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 1
    assert "locked" in result.output and "damaged" not in result.output, result.output

