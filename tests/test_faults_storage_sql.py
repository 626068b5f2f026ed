"""Faults a reviewer found in `clparse sql` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def test_write_of_several_statements_is_all_or_nothing(db_copy: Path) -> None:
    # the statements before a failing one were committed, and the error line did not say so
    before = invoke_cli(["sql", "--db", db_copy, "--json", "SELECT count(*) AS n FROM calibrations"]).stdout
    result = invoke_cli(["sql", "--db", db_copy, "--write", "DELETE FROM calibration_labels; "
                         "DELETE FROM calibrations; SELECT nosuch FROM labels"])
    assert result.exit_code == 1
    assert "nosuch" in result.stderr and "nothing was written" in result.stderr, result.stderr
    assert invoke_cli(["sql", "--db", db_copy, "--json", "SELECT count(*) AS n FROM calibrations"]).stdout \
        == before


def test_write_of_several_statements_commits_them_all(db_copy: Path) -> None:
    result = invoke_cli(["sql", "--db", db_copy, "--write",
                         "CREATE TABLE notes (x); INSERT INTO notes VALUES (1); -- done\n"])
    assert result.exit_code == 0, result.output
    notes = invoke_cli(["sql", "--db", db_copy, "--json", "SELECT x FROM notes"]).stdout
    assert json.loads(notes) == [{"x": 1}]


@pytest.mark.parametrize("query", ["BEGIN; CREATE TABLE notes (x); COMMIT", "CREATE TABLE notes (x); VACUUM"])
def test_write_with_its_own_transactions_or_vacuum_still_runs(db_copy: Path, query: str) -> None:
    result = invoke_cli(["sql", "--db", db_copy, "--write", query])
    assert result.exit_code == 0, result.output
    assert invoke_cli(["sql", "--db", db_copy, "SELECT count(*) FROM notes"]).exit_code == 0


def test_table_shows_a_stored_number_in_full(trained_db: Path) -> None:
    # 0.1 + 0.2 and a Θ such as 1.000835055901728 were shown to six digits (0.3, 1.00084): typed back into
    # --theta, the rounded Θ̂ gave another parser; numbers that six digits hold stay short
    result = invoke_cli(["sql", "--db", trained_db, "SELECT 0.1 + 0.2 AS a, 1.000835055901728 AS b, "
                         "2.5 AS c, 1e20 AS d, round(1234.5678, 2) AS e"])
    assert result.exit_code == 0, result.output
    values = result.stdout.splitlines()[2].split()
    assert values == ["0.30000000000000004", "1.000835055901728", "2.5", "1e+20", "1234.57"]
