"""Faults found in the commands around a trained database (report, explain, sql, browse, export, check,
init, quickstart) by a demanding user, one test each (each failed before its fix)."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from tests.conftest import invoke_cli

OLD_SCHEMAS = Path(__file__).parent / "data" / "old_schemas"


def _listing(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


def test_export_of_an_older_schema_names_the_init_that_upgrades_it(tmp_path: Path) -> None:
    # "old run.sqlite: schema 0008 is older than 0009; run `clparse init`": that init, without --db, makes a
    # new db/clparse.sqlite and leaves the run as it was; export never said it only reads its --db
    old = tmp_path / "old run.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0008.sqlite", old)
    before = _listing(tmp_path)
    result = invoke_cli(["export", "--db", old, "-o", tmp_path / "parser.sqlite"])
    assert result.exit_code == 1, result.output
    error = result.stderr.strip()
    assert error.startswith(f"Error: {old}: schema 0008 is older than"), error
    assert f"`clparse init --db {shlex.quote(str(old))}`" in error, error
    assert "\n" not in error and "Traceback" not in result.output
    assert _listing(tmp_path) == before  # neither upgraded nor written beside
