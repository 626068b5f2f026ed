"""Faults a reviewer found in `clparse backup` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.errors import DatabaseError
from clparse.store import database
from tests.conftest import invoke_cli


def test_a_target_that_cannot_be_written_is_named(trained_db: Path) -> None:
    # "trained.sqlite: database error: unable to open database file" named the database being copied, not
    # the backup file that could not be made
    target = Path("/proc/clparse-backup.sqlite")
    result = invoke_cli(["backup", "--db", trained_db, target])
    assert result.exit_code == 1
    assert str(target) in result.stderr and f"{trained_db}:" not in result.stderr, result.stderr


def test_a_backup_never_replaces_a_file_that_appeared_meanwhile(trained_db: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # the copy was renamed over the target with os.replace: a file made there while the copy ran (another
    # backup to the same name) was replaced, though "a backup never overwrites"
    target = tmp_path / "copy.sqlite"
    copy = database._backup

    def slow_copy(source: Path, scratch: Path) -> None:
        copy(source, scratch)
        target.write_bytes(b"another backup")

    monkeypatch.setattr(database, "_backup", slow_copy)
    with pytest.raises(DatabaseError, match="already exists"):
        database.backup_database(trained_db, target)
    assert target.read_bytes() == b"another backup"
    assert [p.name for p in tmp_path.iterdir()] == ["copy.sqlite"]  # no scratch file left


def test_two_backups_do_not_share_a_scratch_file(trained_db: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # both wrote into the one scratch name .NAME.copying, so one copied into the other's half-made file
    seen: list[Path] = []
    copy = database._backup

    def recording(source: Path, scratch: Path) -> None:
        seen.append(scratch)
        copy(source, scratch)

    monkeypatch.setattr(database, "_backup", recording)
    database.backup_database(trained_db, tmp_path / "a.sqlite")
    (tmp_path / "a.sqlite").rename(tmp_path / "b.sqlite")
    database.backup_database(trained_db, tmp_path / "a.sqlite")
    assert seen[0] != seen[1]
