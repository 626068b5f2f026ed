"""The SQLAlchemy models (clparse/store/schema.py) and the schema the migrations build are the same.

Alembic's autogenerate comparison (``compare_metadata``) is run on a database made the way clparse
makes one (``init_database``: every migration from 0001 to the head), through clparse's APSW
connections. It must report nothing: a difference means a model was changed without a migration,
or a migration without the model. The comparison also runs on every upgraded old database in
test_schema_upgrade.py (``schema_differences`` below).

``compare_metadata`` does not look at everything: it never compares primary keys, and it does not
report a unique constraint that only the database has (Alembic cannot drop an unnamed constraint,
so it stays silent). The second test covers those by reflecting a database built from the models
(``metadata.create_all``) and the migrated one with the same SQLAlchemy inspector and comparing
every table's columns, primary key, foreign keys (with ON DELETE), unique constraints and indexes:
whatever SQLite's reflection cannot see it misses on both sides alike, so it cannot invent a
difference.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from clparse.store import schema
from clparse.store.database import init_database
from clparse.store.engine import make_engine

#: Compare types and server defaults too (``compare_server_default`` is off by default in Alembic).
COMPARE_OPTIONS = {"compare_type": True, "compare_server_default": True}


def schema_differences(db: Path, metadata: sa.MetaData = schema.metadata) -> list[Any]:
    """Alembic's autogenerate diff between ``metadata`` and the database at ``db`` (empty: the same)."""
    engine = make_engine(db, readonly=True)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts=COMPARE_OPTIONS)
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def reflected(db: Path) -> dict[str, dict[str, Any]]:
    """Every clparse table of ``db`` as SQLAlchemy's inspector sees it, in a comparable form.

    Columns are keyed by name, not listed in order: a column added by a later migration (0004's
    ``completions``) comes last in a migrated table and in its declared place in a table built from
    the models. Nothing in clparse depends on column order (every statement names its columns).
    """
    engine = make_engine(db, readonly=True)
    try:
        inspector = sa.inspect(engine)
        tables = {}
        for name in inspector.get_table_names():
            if name == "alembic_version":  # Alembic's own bookkeeping, not part of the models
                continue
            tables[name] = {
                "columns": {c["name"]: (str(c["type"]), c["nullable"], c["default"], c.get("primary_key"))
                            for c in inspector.get_columns(name)},
                "primary_key": inspector.get_pk_constraint(name)["constrained_columns"],
                "foreign_keys": sorted(repr(sorted(fk.items())) for fk in inspector.get_foreign_keys(name)),
                "unique": sorted(repr(sorted(u["column_names"]))
                                 for u in inspector.get_unique_constraints(name)),
                "indexes": sorted(repr(sorted(i.items())) for i in inspector.get_indexes(name)),
                "checks": sorted(repr(sorted(c.items())) for c in inspector.get_check_constraints(name)),
            }
        return tables
    finally:
        engine.dispose()


def test_models_match_the_migrated_schema(tmp_path: Path) -> None:
    sqlite3_before = "sqlite3" in sys.modules
    db = init_database(tmp_path / "fresh.sqlite")
    assert schema_differences(db) == []
    if not sqlite3_before:  # the comparison went through APSW: Python's sqlite3 was not loaded for it
        assert "sqlite3" not in sys.modules


def test_what_autogenerate_leaves_out_matches_too(tmp_path: Path) -> None:
    migrated = init_database(tmp_path / "migrated.sqlite")
    engine = make_engine(tmp_path / "models.sqlite")
    schema.metadata.create_all(engine)
    engine.dispose()
    from_models, from_migrations = reflected(tmp_path / "models.sqlite"), reflected(migrated)
    assert sorted(from_models) == sorted(from_migrations) == sorted(schema.metadata.tables)
    for name in from_models:
        assert from_migrations[name] == from_models[name], name


def _copy_of_models() -> sa.MetaData:
    metadata = sa.MetaData()
    for table in schema.metadata.sorted_tables:
        table.to_metadata(metadata)
    return metadata


def test_the_comparison_sees_differences(tmp_path: Path) -> None:
    """The check can fail: changed models are reported (a column, a nullability, an index, a default)."""
    db = init_database(tmp_path / "fresh.sqlite")
    metadata = _copy_of_models()
    metadata.tables["runs"].append_column(sa.Column("extra", sa.Integer))
    metadata.tables["runs"].c.seconds.nullable = False
    metadata.tables["tree_nodes"].indexes.clear()
    metadata.tables["calibration_points"].c.completions.server_default = None
    kinds = sorted(str(diff[0][0] if isinstance(diff, list) else diff[0])
                   for diff in schema_differences(db, metadata))
    assert kinds == ["add_column", "modify_default", "modify_nullable", "remove_index"]
