"""`clparse browse`: faults noticed in an earlier session, one test each (each failed before its fix)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clparse import browse
from tests.conftest import invoke_cli


def test_check_says_when_datasette_cut_a_query_at_its_row_limit(db_copy: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # --check printed "100000 rows" for a query Datasette had cut at max_returned_rows, as if that were all
    pytest.importorskip("datasette")
    monkeypatch.setattr(browse, "MAX_ROWS", 2)
    result = invoke_cli(["browse", "--db", db_copy, "--check"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    rows = [int(re.search(r"\.json\?\S*: (\d+) rows", line).group(1)) for line in lines]  # type: ignore[union-attr]
    said = "cut at Datasette's limit of 2 rows: the query has more"
    cut = [n for n, line in zip(rows, lines) if said in line]
    assert cut and set(cut) == {2} and max(rows) <= 2
    assert any(n < 2 for n in rows)  # a query with fewer rows is not said to be cut
    assert all("cut at" not in line for n, line in zip(rows, lines) if n < 2)


def test_check_without_a_cut_says_nothing_more(db_copy: Path) -> None:
    pytest.importorskip("datasette")
    result = invoke_cli(["browse", "--db", db_copy, "--check"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() and "cut at" not in result.stdout


def test_the_page_names_what_kind_of_database_it_shows(trained_db: Path, tmp_path: Path) -> None:
    # every file was "A clparse training database", a parser exported from one included
    assert browse.build_metadata(trained_db)["description"].startswith("A clparse training database,")
    exported = tmp_path / "parser.sqlite"
    assert invoke_cli(["export", "--db", trained_db, "-o", exported]).exit_code == 0
    description = browse.build_metadata(exported)["description"]
    assert description.startswith("A clparse parser database (exported by `clparse export`), read-only.")
