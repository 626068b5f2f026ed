"""Parser combinations (Chen & Kit 2012 §3): a combination's settings and fitted parameters, and its members.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "combinations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("k", sa.Integer, nullable=False),
        sa.Column("beam", sa.Integer, nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.Column("temperature", sa.Float, nullable=False),
        sa.Column("dev_f1", sa.Float, nullable=False),
        sa.Column("dev_sentences", sa.Integer, nullable=False),
        sa.Column("dev_json", sa.Text, nullable=False),
        sa.Column("evaluations", sa.Integer, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("clparse_version", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
    )
    op.create_table(
        "combination_members",
        sa.Column("combination_id", sa.Integer, sa.ForeignKey("combinations.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("theta", sa.String),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("dev_f1", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("combination_members")
    op.drop_table("combinations")
