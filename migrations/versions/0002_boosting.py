"""Boosting state: per-label training state, iterations, tree nodes, margin checkpoints.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _label_fk() -> sa.Column:
    return sa.Column("label_id", sa.Integer, sa.ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True)


def upgrade() -> None:
    op.create_table(
        "label_training",
        _label_fk(),
        sa.Column("settings_json", sa.Text, nullable=False),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("iteration", sa.Integer, nullable=False),
        sa.Column("theta", sa.Float),
        sa.Column("loss", sa.Float, nullable=False),
        sa.Column("splits", sa.Integer, nullable=False),
        sa.Column("examples_per_second", sa.Float),
        sa.Column("message", sa.Text),
        sa.Column("pid", sa.Integer),
        sa.Column("started_at", sa.String, nullable=False),
        sa.Column("updated_at", sa.String, nullable=False),
        sa.Column("margins_float64", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "iterations",
        _label_fk(),
        sa.Column("iteration", sa.Integer, primary_key=True),
        sa.Column("theta", sa.Float, nullable=False),
        sa.Column("root_gain", sa.Float, nullable=False),
        sa.Column("loss_before", sa.Float, nullable=False),
        sa.Column("loss_after", sa.Float, nullable=False),
        sa.Column("z", sa.Float, nullable=False),
        sa.Column("splits", sa.Integer, nullable=False),
        sa.Column("leaves", sa.Integer, nullable=False),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("weight_positive", sa.Float, nullable=False),
        sa.Column("weight_negative", sa.Float, nullable=False),
        sa.Column("weight_max", sa.Float, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("search_seconds", sa.Float, nullable=False),
        sa.Column("finished_at", sa.String, nullable=False),
    )
    op.create_table(
        "tree_nodes",
        _label_fk(),
        sa.Column("iteration", sa.Integer, primary_key=True),
        sa.Column("node", sa.Integer, primary_key=True),
        sa.Column("parent", sa.Integer),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("feature_id", sa.Integer),
        sa.Column("gain", sa.Float),
        sa.Column("best_gain", sa.Float, nullable=False),
        sa.Column("w_positive", sa.Float, nullable=False),
        sa.Column("w_negative", sa.Float, nullable=False),
        sa.Column("examples", sa.Integer, nullable=False),
        sa.Column("candidates", sa.Integer, nullable=False),
        sa.Column("confidence", sa.Float),
        sa.Column("true_child", sa.Integer),
        sa.Column("false_child", sa.Integer),
    )
    op.create_index("tree_nodes_by_feature", "tree_nodes", ["feature_id"])
    op.create_table(
        "margin_checkpoints",
        _label_fk(),
        sa.Column("iteration", sa.Integer, primary_key=True),
        sa.Column("margins_float64", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    for table in ("margin_checkpoints", "tree_nodes", "iterations", "label_training"):
        op.drop_table(table)
