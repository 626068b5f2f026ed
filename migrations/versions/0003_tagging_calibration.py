"""Tagger and calibration: taggers, calibrations, calibration_points, calibration_labels.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _calibration_fk() -> sa.Column:
    return sa.Column("calibration_id", sa.Integer, sa.ForeignKey("calibrations.id", ondelete="CASCADE"),
                     primary_key=True)


def upgrade() -> None:
    op.create_table(
        "taggers",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model_json", sa.Text, nullable=False),
        sa.Column("train_sentences", sa.Integer, nullable=False),
        sa.Column("dev_accuracy", sa.Float),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
    )
    op.create_table(
        "calibrations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("settings_digest", sa.String, nullable=False, unique=True),
        sa.Column("settings_json", sa.Text, nullable=False),
        sa.Column("best_theta", sa.Float),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("updated_at", sa.String, nullable=False),
    )
    op.create_table(
        "calibration_points",
        _calibration_fk(),
        sa.Column("theta", sa.Float, primary_key=True),
        sa.Column("trees", sa.Integer, nullable=False),
        sa.Column("splits", sa.Integer, nullable=False),
        sa.Column("sentences", sa.Integer, nullable=False),
        sa.Column("fallbacks", sa.Integer, nullable=False),
        sa.Column("recall", sa.Float, nullable=False),
        sa.Column("precision", sa.Float, nullable=False),
        sa.Column("f1", sa.Float, nullable=False),
        sa.Column("exact", sa.Float, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("finished_at", sa.String, nullable=False),
    )
    op.create_table(
        "calibration_labels",
        _calibration_fk(),
        sa.Column("theta", sa.Float, primary_key=True),
        sa.Column("label", sa.String, primary_key=True),
        sa.Column("gold", sa.Integer, nullable=False),
        sa.Column("test", sa.Integer, nullable=False),
        sa.Column("matched", sa.Integer, nullable=False),
        sa.Column("recall", sa.Float, nullable=False),
        sa.Column("precision", sa.Float, nullable=False),
        sa.Column("f1", sa.Float, nullable=False),
    )


def downgrade() -> None:
    for table in ("calibration_labels", "calibration_points", "calibrations", "taggers"):
        op.drop_table(table)
