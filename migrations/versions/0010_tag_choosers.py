"""Tag choosers: how parse chooses among the taggings of untagged input, fitted on dev at one Θ̂.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tag_choosers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("theta", sa.String, nullable=False),
        sa.Column("beam", sa.Integer, nullable=False),
        sa.Column("max_pops", sa.Integer, nullable=False),
        sa.Column("alternatives", sa.Integer, nullable=False),
        sa.Column("weights_json", sa.Text, nullable=False),
        sa.Column("sentences", sa.Integer, nullable=False),
        sa.Column("pairs", sa.Integer, nullable=False),
        sa.Column("f1_best", sa.Float, nullable=False),
        sa.Column("f1_rule", sa.Float, nullable=False),
        sa.Column("f1_chooser", sa.Float, nullable=False),
        sa.Column("f1_two_fold", sa.Float, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("clparse_version", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tag_choosers")
