"""docs/schema.md is what clparse.store.schema_doc renders from the schema's comments, and every table
and column has one: a schema change without its documentation, or a hand edit of the generated
file, fails here. (Its SQL examples run in test_readme_examples.py, like the README's.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sqlalchemy as sa

from clparse.store import schema
from clparse.store.schema_doc import REGENERATE, main, render, revisions

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "schema.md"


def test_docs_schema_md_is_current() -> None:
    rendered = render()
    assert DOC.read_text(encoding="utf-8") == rendered, (
        f"docs/schema.md is stale: regenerate it from the repository root with `.venv/bin/{REGENERATE}` "
        "(edit the comments in clparse/store/schema.py or the prose in clparse/store/schema_doc.py, "
        "not the file)")


def test_every_table_and_column_is_documented() -> None:
    missing = [t.name for t in schema.metadata.tables.values() if not (t.comment or "").strip()]
    missing += [f"{t.name}.{c.name}" for t in schema.metadata.tables.values() for c in t.columns
                if not (c.comment or "").strip()]
    assert missing == [], f"give these a comment= in clparse/store/schema.py: {', '.join(missing)}"


def test_every_table_and_column_is_in_the_document() -> None:
    text = render()
    for table in schema.metadata.tables.values():
        assert f"### `{table.name}`" in text
        section = text.split(f"### `{table.name}`", 1)[1].split("\n### ", 1)[0]
        for column in table.columns:
            assert f"| `{column.name}` |" in section, f"{table.name}.{column.name}"


def test_the_document_names_the_newest_revision() -> None:
    from clparse.store.database import known_revisions

    history = revisions()
    assert [rev for rev, _ in history] == known_revisions()
    assert history[-1][0] == schema.SCHEMA_REVISION
    assert f"The newest schema revision is **{schema.SCHEMA_REVISION}**" in render()
    assert all(doc.strip() for _, doc in history), "every migration needs a docstring"


def _named(comment: str | None, keys: list[str]) -> list[str]:
    return [key for key in keys if key not in (comment or "")]


def test_stored_settings_are_documented() -> None:
    """The keys of the JSON settings columns are named in their comments (a new setting needs a word)."""
    from clparse.boost.booster import BoostSettings
    from clparse.calibrate.run import CalibrationSettings
    from clparse.examples.prepare import PrepareSettings

    assert _named(schema.runs.c.config_json.comment, list(PrepareSettings().to_dict())) == []
    assert _named(schema.label_training.c.settings_json.comment, list(BoostSettings().to_dict())) == []
    assert _named(schema.calibrations.c.settings_json.comment,
                  [f.name for f in dataclasses.fields(CalibrationSettings)] + ["dev"]) == []


def test_the_check_fails_on_a_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A changed comment changes the document; --check reports a stale file with the command to run."""
    changed = sa.MetaData()
    for table in schema.metadata.tables.values():
        table.to_metadata(changed)
    changed.tables["runs"].c.status.comment = "something else"
    assert render(changed) != render()
    written = tmp_path / "schema.md"
    assert main(["--write", str(written)]) == 0
    assert main(["--check", str(written)]) == 0
    written.write_text(written.read_text(encoding="utf-8") + "a hand edit\n", encoding="utf-8")
    assert main(["--check", str(written)]) == 1
    assert REGENERATE in capsys.readouterr().err
