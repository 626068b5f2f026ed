"""``docs/schema.md``, rendered from the schema itself (``python -m clparse.store.schema_doc``).

Every table and column of :data:`clparse.store.schema.metadata` carries its documentation as a
``comment``; :func:`render` turns them into markdown (per table: its comment, then each column's
type, nullability, key or foreign key, server default and meaning; unique constraints and indexes),
with the schema revisions read from the migrations. ``tests/test_schema_doc.py`` fails when
``docs/schema.md`` differs from what :func:`render` gives now, so the document cannot go stale.

The prose that is not about one column (how a database is recognized and upgraded, the blobs, the
SQL functions and the ``clparse_weights`` virtual table, example queries) is kept here, in
:data:`INTRODUCTION` and :data:`AFTER_TABLES`, and the whole file is generated. That is simpler than
markers in ``docs/schema.md`` between which a generated part is spliced: the test is one string
comparison of the whole file (no marker parsing, and no hand edit anywhere in the file survives
unnoticed), ``--write`` cannot lose prose to a mistyped marker, and the module prints the complete
document without reading any file (``docs/`` is not in the wheel). The price is editing a little
markdown inside a Python string, which changes rarely.

The SQL examples are fenced ``sql`` blocks, so ``tests/test_readme_examples.py`` runs each one with
``clparse sql`` on a quickstart database, as it does for the README.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Column, Index, MetaData, Table, UniqueConstraint
from sqlalchemy.dialects import sqlite

from clparse.store.schema import metadata as schema_metadata

#: The command that rewrites the document (the test's failure message quotes it).
REGENERATE = "python -m clparse.store.schema_doc --write docs/schema.md"

HEADER = (f"<!-- Generated from the comments in clparse/store/schema.py by `{REGENERATE}`;\n"
          "     edit those (or the prose in clparse/store/schema_doc.py), not this file. -->\n")

INTRODUCTION = """\
# The training database

One SQLite file per run (default `db/clparse.sqlite`), declared once in `clparse/store/schema.py`
(SQLAlchemy Core), migrated by Alembic (`migrations/`, shipped in the wheel). Every connection is
an APSW connection — SQLAlchemy's and Alembic's too, through the DB-API adapter
`clparse/store/dbapi.py` — so Python's `sqlite3` is never loaded (two SQLite copies in one
process break each other's POSIX locks; a test checks `sys.modules`). WAL mode, 20 s busy
timeout, foreign keys on.

**Recognizing a database.** `PRAGMA application_id` is `0x636C7061` and `alembic_version` holds
the schema revision. Opening refuses (and leaves untouched) a non-SQLite file, a SQLite file of
another application, a newer schema, and an unreadable/damaged file. A command that writes upgrades an
older schema; one that only reads refuses it and names the `clparse init --db PATH` that upgrades that
file, except `sql` without `--write`, `check` (from schema 0008, which brought checksums) and `backup`,
which read it as it is. An upgrade comes after a consistent backup copy (`NAME.schema-REV.bak`, or
`.schema-REV.1.bak`, ... when that name is taken: a backup is never overwritten), made with SQLite's
backup API. A new database is built
under a scratch name of its own and linked into place (exclusively: two creators leave one
database), and all migrations of an upgrade run inside one `BEGIN IMMEDIATE` transaction (an
upgrade is all or nothing). See docs/reliability.md.

Conventions: times are text, UTC, ISO 8601 to the second; booleans are 0 or 1; `*_json` columns
hold JSON text (SQLite's `json_extract` and `json_each` read them); a blob column's name ends in
its element type. Θ is stored as a finite number: a label with no iteration yet has `theta` NULL,
which means Θ = ∞.
"""

AFTER_TABLES = """\
## Arrays in blobs

Blobs are little-endian arrays; the element type ends the column's name (`indptr_int64`,
`y_int8`, `margins_float64`: `clparse/store/blobs.py`, numpy `frombuffer`), never pickles, so a
file moves between machines as it is. Feature rows are shared by all labels: a label's example
points at a row (its features depend on the label only through the head child, so most rows serve
many labels). Both `feature_rows` and `label_examples` are cut into chunks of 65,536 rows, well
under SQLite's 1 GB blob limit.

**Deduplication.** Identical (feature set, y) pairs of a label are stored once with a
multiplicity. Exact for boosting: examples with the same features always share a margin, so they
always share a weight; the trainer multiplies by the multiplicity.

**Weights within a size budget.** The latest margin vector (8 bytes per distinct example: 5 MB for
GUM's NP) is written to `label_training` only at each checkpoint and when a label stops, pauses or
converges; in between it lags (`margins_iteration`), and resuming or `clparse_weights` adds the trees
since, with the same additions. It is kept in `margin_checkpoints` every `checkpoint_every`
iterations (default 50: about 0.1 MB per iteration for GUM's NP). Every other iteration is rebuilt
on demand from the nearest checkpoint by adding the stored trees with the same floating-point
additions training made, so the rebuilt margins (and the weights computed from them) are
bit-identical to what the trainer had.

## SQL functions and the `clparse_weights` virtual table

Nothing below is stored in the file: `clparse sql` (queries and its interactive shell) registers
these on its own connection, so another SQLite client does not have them.

* `clparse_row_features(row)`: the feature ids of a distinct feature row, as a JSON array
  (`clparse/store/sql.py` decodes the `feature_rows` chunk holding it);
* `clparse_example(label, n)`: the n-th distinct example of a label (from 0), as JSON
  `{"row", "y", "multiplicity"}`;
* `clparse_weights(label, t)`: a table-valued function, i.e. an eponymous virtual table (an APSW
  virtual-table module made by `apsw.ext.make_virtual_module`, registered by `clparse/query.py`),
  with columns `example`, `row`, `y`, `multiplicity`, `margin`, `weight`: one row per distinct
  example, its margin Q^(t−1) and the weight w^t that grew tree t (t from 1 to one past the last
  stored tree). Its rows are computed when the query runs, by the trainer's replay
  (`clparse/train/weights.py`): the nearest kept margin vector plus the stored trees since.

With `json_each` they make every example and every iteration's weights reachable from plain SQL.
`clparse sql` opens the database read-only unless given `--write`.

## Example queries

Paste any of them between the double quotes of `clparse sql --db db/quickstart.sqlite "..."`.

```sql
-- the settings prepare ran with
SELECT s.key, s.value FROM runs, json_each(runs.config_json, '$.settings') AS s ORDER BY s.key;

-- how each label is boosted, and how far its stored margins lag its last iteration
SELECT l.name, json_extract(t.settings_json, '$.rule') AS rule,
       json_extract(t.settings_json, '$.smoothing') AS smoothing, t.state, t.iteration,
       t.iteration - t.margins_iteration AS trees_to_replay
FROM label_training AS t JOIN labels AS l ON l.id = t.label_id ORDER BY l.name;

-- the stored POS tagger
SELECT kind, length(model_json) AS json_characters, length(model_blob) AS blob_bytes, train_sentences,
       round(100 * dev_accuracy, 2) AS dev_accuracy_pct FROM taggers;

-- training sentences per jackknife fold (fold NULL: trained on gold tags)
SELECT fold, count(*) AS sentences, sum(trained) AS trained FROM sentences WHERE split = 'train'
GROUP BY fold ORDER BY fold;

-- NP's weights at its first iteration, by class
SELECT y, count(*) AS examples, sum(multiplicity) AS candidates, round(sum(weight), 3) AS weight
FROM clparse_weights('NP', 1) GROUP BY y;

-- each calibration point, best first
SELECT c.id, json_extract(c.settings_json, '$.beam') AS beam, p.theta, p.trees, p.f1,
       p.theta = c.best_theta AS best
FROM calibration_points AS p JOIN calibrations AS c ON c.id = p.calibration_id ORDER BY p.f1 DESC;
```
"""


def _cell(text: object) -> str:
    """Text safe inside a markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _key(column: Column, table: Table) -> str:
    parts = []
    if column.primary_key:
        parts.append("PK")
    for fk in sorted(column.foreign_keys, key=lambda fk: fk.target_fullname):
        cascade = f", on delete {fk.ondelete.lower()}" if fk.ondelete else ""
        parts.append(f"→ `{fk.target_fullname}`{cascade}")
    if any(isinstance(c, UniqueConstraint) and [col.name for col in c.columns] == [column.name]
           for c in table.constraints):
        parts.append("unique")
    return ", ".join(parts)


def _default(column: Column) -> str:
    default = column.server_default
    arg = getattr(default, "arg", None)
    return "" if arg is None else f"`{arg}`"


def _names(columns: Sequence[str]) -> str:
    return ", ".join(f"`{name}`" for name in columns)


def render_table(table: Table) -> str:
    """One table: its comment, its columns, then unique constraints and indexes over several columns."""
    dialect = sqlite.dialect()
    lines = [f"### `{table.name}`", "", _cell(table.comment or ""), "",
             "| column | type | null | key | default | meaning |", "|---|---|---|---|---|---|"]
    for column in table.columns:
        lines.append(f"| `{column.name}` | {column.type.compile(dialect=dialect)} | "
                     f"{'yes' if column.nullable else 'no'} | {_key(column, table)} | {_default(column)} | "
                     f"{_cell(column.comment or '')} |")
    extra = []
    primary = [c.name for c in table.primary_key.columns]
    if len(primary) > 1:
        extra.append(f"- Primary key: ({_names(primary)}).")
    for constraint in sorted((c for c in table.constraints if isinstance(c, UniqueConstraint)),
                             key=lambda c: [col.name for col in c.columns]):
        names = [col.name for col in constraint.columns]
        if len(names) > 1:
            extra.append(f"- Unique: ({_names(names)}).")
    for index in sorted(table.indexes, key=lambda i: str(i.name)):
        extra.append(_index(index))
    if extra:
        lines += [""] + extra
    return "\n".join(lines) + "\n"


def _index(index: Index) -> str:
    kind = "Unique index" if index.unique else "Index"
    return f"- {kind} `{index.name}` on ({_names([c.name for c in index.columns])})."


def revisions() -> list[tuple[str, str]]:
    """(revision, first paragraph of its migration's docstring) of every schema revision, oldest first.

    Read through Alembic from the migrations clparse ships (wherever ``clparse.store.database`` finds them).
    """
    from alembic.script import ScriptDirectory

    from clparse.store.database import _alembic_config

    script = ScriptDirectory.from_config(_alembic_config())
    return [(rev.revision, rev.doc) for rev in reversed(list(script.walk_revisions()))]


def render(metadata: MetaData = schema_metadata, history: Sequence[tuple[str, str]] | None = None) -> str:
    """The whole of ``docs/schema.md``."""
    history = revisions() if history is None else history
    tables = list(metadata.tables.values())
    parts = [HEADER, INTRODUCTION]
    head = history[-1][0] if history else "none"
    revision_lines = [
        "## Revisions", "",
        (f"The newest schema revision is **{head}** (the value `alembic_version` holds in a current "
        "database). Opening an older database with `clparse init` (or any writing command) upgrades it "
        "after a backup copy; read-only commands ask for the upgrade instead of doing it."), "",
        "| revision | change |", "|---|---|"]
    revision_lines += [f"| {rev} | {_cell(doc)} |" for rev, doc in history]
    parts.append("\n".join(revision_lines) + "\n")
    index = ["## Tables", "", "| table | what it holds |", "|---|---|"]
    index += [f"| [`{t.name}`](#{t.name}) | {_cell(t.comment or '')} |" for t in tables]
    parts.append("\n".join(index) + "\n")
    parts += [render_table(t) for t in tables]
    parts.append(AFTER_TABLES)
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clparse.store.schema_doc",
                                     description="Render docs/schema.md from the schema's comments.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="PATH", type=Path, help="write the document to PATH")
    group.add_argument("--check", metavar="PATH", type=Path,
                       help="exit with status 1 if PATH differs from the rendered document")
    args = parser.parse_args(argv)
    text = render()
    if args.write is not None:
        args.write.write_text(text, encoding="utf-8")
    elif args.check is not None:
        current = args.check.read_text(encoding="utf-8") if args.check.exists() else ""
        if current != text:
            print(f"{args.check} is out of date; regenerate it with `{REGENERATE}`", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
