"""Per-label Θ̂ calibration: every coordinate-ascent trial of a calibration, in order.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "label_theta_steps",
        sa.Column("calibration_id", sa.Integer, sa.ForeignKey("calibrations.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("step", sa.Integer, primary_key=True),
        sa.Column("label", sa.String, nullable=False),
        sa.Column("theta", sa.Float, nullable=False),
        sa.Column("f1", sa.Float, nullable=False),
        sa.Column("accepted", sa.Boolean, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("finished_at", sa.String, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("label_theta_steps")
