"""Checksums of every stored tree and blob row, so that damage is found instead of silently used.

``iterations.sha256`` is the SHA-256 of the iteration's tree (its theta and its ``tree_nodes`` rows
in node order); ``feature_rows``, ``label_examples`` and ``margin_checkpoints`` get ``sha256`` and
``label_training`` gets ``margins_sha256``, each over the row's key and blobs. Training and prepare
write them with the rows; loading a model, training and ``clparse check`` verify them. Existing rows
get the checksum of what they hold now (damage already there is not detected by the checksum, but by
the decoders' checks of lengths and index ranges).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# The packing below is a copy of clparse.store.blobs.checksum and clparse.store.verify.tree_checksum as
# of this revision (a migration never imports live code: the stored format is fixed here).
_INT = struct.Struct("<q")
_HEAD = struct.Struct("<qqd")
_NODE = struct.Struct("<H8q5d")
_INTS = 8  # of the 13 node values, the first 8 are integers, the last 5 floats

#: The tables this revision reads and writes, declared here with the columns it needs.
_BLOB_TABLES = {
    "feature_rows": (sa.table("feature_rows", *(sa.column(c) for c in (
        "run_id", "chunk", "first_row", "row_count", "indptr_int64", "indices_int32", "sha256"))), 2),
    "label_examples": (sa.table("label_examples", *(sa.column(c) for c in (
        "label_id", "chunk", "first_example", "example_count", "row_int32", "y_int8", "multiplicity_int32",
        "sha256"))), 2),
    "margin_checkpoints": (sa.table("margin_checkpoints", *(sa.column(c) for c in (
        "label_id", "iteration", "margins_float64", "sha256"))), 2),
    "label_training": (sa.table("label_training", *(sa.column(c) for c in (
        "label_id", "margins_iteration", "margins_float64", "margins_sha256"))), 1),
}  # table, and how many of its leading columns are its key; the last column is the checksum
_NODE_COLUMNS = ("node", "parent", "depth", "feature_id", "true_child", "false_child", "examples",
                 "candidates", "gain", "best_gain", "w_positive", "w_negative", "confidence")
_iterations = sa.table("iterations", sa.column("label_id"), sa.column("iteration"), sa.column("theta"),
                       sa.column("sha256"))
_tree_nodes = sa.table("tree_nodes", sa.column("label_id"), sa.column("iteration"),
                       *(sa.column(c) for c in _NODE_COLUMNS))


def _checksum(parts: Iterable[int | bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, (bytes, bytearray, memoryview)):
            h.update(_INT.pack(len(part)))
            h.update(part)
        else:
            h.update(_INT.pack(int(part)))
    return h.hexdigest()


def _tree_checksum(label_id: int, iteration: int, theta: float, nodes: Iterable[Sequence[Any]]) -> str:
    h = hashlib.sha256(_HEAD.pack(label_id, iteration, float(theta) + 0.0))
    for node in nodes:
        mask, values = 0, []
        for i, value in enumerate(node):
            real = i >= _INTS
            if value is None or (real and math.isnan(value)):
                mask |= 1 << i
                values.append(0.0 if real else 0)
            else:
                values.append(float(value) + 0.0 if real else int(value))
        h.update(_NODE.pack(mask, *values))
    return h.hexdigest()


def upgrade() -> None:
    connection = op.get_bind()
    for name, (table, keys) in _BLOB_TABLES.items():
        columns = list(table.c)
        checksum = columns[-1]
        op.add_column(name, sa.Column(checksum.name, sa.String))
        key, covered = columns[:keys], columns[:-1]
        for values in connection.execute(sa.select(*key)).all():  # a row at a time: a chunk is ~30 MB
            where = [k == v for k, v in zip(key, values)]
            row = connection.execute(sa.select(*covered).where(*where)).one()
            connection.execute(table.update().where(*where).values({checksum.name: _checksum(row)}))
    op.add_column("iterations", sa.Column("sha256", sa.String))
    it, tn = _iterations.c, _tree_nodes.c
    for label_id in connection.execute(sa.select(it.label_id).distinct()).scalars().all():
        nodes: dict[int, list[Sequence[Any]]] = {}
        for iteration, *node in connection.execute(
                sa.select(tn.iteration, *(tn[c] for c in _NODE_COLUMNS)).where(tn.label_id == label_id)
                .order_by(tn.iteration, tn.node)):
            nodes.setdefault(iteration, []).append(node)
        for iteration, theta in connection.execute(sa.select(it.iteration, it.theta)
                                                   .where(it.label_id == label_id)).all():
            connection.execute(_iterations.update().where(it.label_id == label_id, it.iteration == iteration)
                               .values(sha256=_tree_checksum(label_id, iteration, theta,
                                                             nodes.get(iteration, []))))
    for name, (table, _) in [*_BLOB_TABLES.items(), ("iterations", (_iterations, 0))]:
        with op.batch_alter_table(name) as batch:  # SQLite changes nullability by copying the table
            batch.alter_column(list(table.c)[-1].name, existing_type=sa.String, nullable=False)


def downgrade() -> None:
    for name, (table, _) in [("iterations", (_iterations, 0)), *_BLOB_TABLES.items()]:
        with op.batch_alter_table(name) as batch:
            batch.drop_column(list(table.c)[-1].name)
