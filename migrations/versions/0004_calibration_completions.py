"""Calibration points count the sentences the search finished greedily at the pop cap.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Points calibrated before 0004 could not complete greedily (they fell back to flat trees): 0 is true.
    with op.batch_alter_table("calibration_points") as batch:
        batch.add_column(sa.Column("completions", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("calibration_points") as batch:
        batch.drop_column("completions")
