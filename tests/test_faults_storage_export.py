"""Faults a reviewer found in `clparse export` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import invoke_cli


def test_an_output_directory_that_cannot_be_written_is_named(trained_db: Path) -> None:
    # "trained.sqlite: database error: unable to open database file: /proc/..x.sqlite.<pid>...creating"
    # blamed the run and named a scratch file
    out = Path("/proc/clparse-export.sqlite")
    result = invoke_cli(["export", "--db", trained_db, "-o", out])
    assert result.exit_code == 1
    error = result.stderr.strip()
    assert error.startswith(f"Error: {out}: cannot write") and "creating" not in error, error
    assert "exporting" not in error
    assert f"{trained_db}:" not in error
