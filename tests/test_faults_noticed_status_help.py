"""`clparse status --help` said SQLite's quick check runs first; `api.status(check=True)` runs it after
reading (so damage met while reading is told as such): the help now says so."""

from __future__ import annotations

from click.testing import CliRunner

from clparse.cli import main


def test_status_help_says_when_the_quick_check_runs() -> None:
    result = CliRunner().invoke(main, ["status", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "quick check first" not in text
    assert "After the table is read, the file gets SQLite's quick check" in text
