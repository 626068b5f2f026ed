"""Faults a reviewer found in `clparse sql` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import invoke_cli


def test_json_keeps_every_column_of_the_same_name(trained_db: Path) -> None:
    # a join of two tables with a column of the same name gave one key per name in --json: the first
    # column's values were silently dropped; now later ones are named as SQLite names them (name:1, ...)
    result = invoke_cli(["sql", "--db", trained_db, "--json", "SELECT 1 AS a, 2 AS a, 3 AS a, 4 AS b"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"a": 1, "a:1": 2, "a:2": 3, "b": 4}]


def test_json_renaming_never_hides_a_column_named_like_the_new_name(trained_db: Path) -> None:
    result = invoke_cli(["sql", "--db", trained_db, "--json", 'SELECT 1 AS a, 3 AS a, 2 AS "a:1"'])
    assert result.exit_code == 0, result.output
    assert sorted(json.loads(result.stdout)[0].values()) == [1, 2, 3]


def test_csv_and_json_together_are_refused(trained_db: Path) -> None:
    # --csv --json printed CSV without a word
    result = invoke_cli(["sql", "--db", trained_db, "--csv", "--json", "SELECT 1"])
    assert result.exit_code == 2
    assert "--csv" in result.stderr and "--json" in result.stderr
