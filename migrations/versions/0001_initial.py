"""The first schema: runs, treebank files, sentences, paths, vocabulary, labels, features, examples.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("clparse_version", sa.String, nullable=False),
        sa.Column("input_digest", sa.String, nullable=False, unique=True),
        sa.Column("config_json", sa.Text, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("seconds", sa.Float),
    )
    op.create_table(
        "treebank_files",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("split", sa.String, nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("sha256", sa.String, nullable=False),
        sa.Column("trees", sa.Integer, nullable=False),
    )
    op.create_table(
        "sentences",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("split", sa.String, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("length", sa.Integer, nullable=False),
        sa.Column("words", sa.Text, nullable=False),
        sa.Column("gold_tree", sa.Text, nullable=False),
        sa.Column("tree", sa.Text, nullable=False),
        sa.Column("removed_json", sa.Text, nullable=False),
        sa.Column("trained", sa.Boolean, nullable=False),
        sa.Column("skip_reason", sa.String),
        sa.UniqueConstraint("run_id", "split", "position"),
    )
    op.create_table(
        "inference_paths",
        sa.Column("sentence_id", sa.Integer, sa.ForeignKey("sentences.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("step", sa.Integer, primary_key=True),
        sa.Column("start", sa.Integer, nullable=False),
        sa.Column("end", sa.Integer, nullable=False),
        sa.Column("label", sa.String, nullable=False),
    )
    op.create_table(
        "vocabulary",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("word", sa.String, primary_key=True),
        sa.Column("count", sa.Integer, nullable=False),
    )
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String, nullable=False),
        sa.Column("candidates", sa.Integer, nullable=False),
        sa.Column("positives", sa.Integer, nullable=False),
        sa.Column("examples", sa.Integer, nullable=False),
        sa.UniqueConstraint("run_id", "name"),
    )
    op.create_table(
        "features",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("template", sa.String, nullable=False),
        sa.Column("item", sa.String, nullable=False),
        sa.Column("property", sa.String, nullable=False),
        sa.Column("value", sa.String, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("row_count", sa.Integer, nullable=False),
    )
    op.create_table(
        "feature_rows",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("chunk", sa.Integer, primary_key=True),
        sa.Column("first_row", sa.Integer, nullable=False),
        sa.Column("row_count", sa.Integer, nullable=False),
        sa.Column("indptr_int64", sa.LargeBinary, nullable=False),
        sa.Column("indices_int32", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "label_examples",
        sa.Column("label_id", sa.Integer, sa.ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("chunk", sa.Integer, primary_key=True),
        sa.Column("first_example", sa.Integer, nullable=False),
        sa.Column("example_count", sa.Integer, nullable=False),
        sa.Column("row_int32", sa.LargeBinary, nullable=False),
        sa.Column("y_int8", sa.LargeBinary, nullable=False),
        sa.Column("multiplicity_int32", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    for table in ("label_examples", "feature_rows", "features", "labels", "vocabulary", "inference_paths",
                  "sentences", "treebank_files", "runs"):
        op.drop_table(table)
