"""Tag choosers record the aggregator their dev parses were scored with (sum became parse's default).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # every chooser stored before was fitted on max-min parses (calibrate-tags refused the sum aggregator)
    with op.batch_alter_table("tag_choosers") as batch:
        batch.add_column(sa.Column("aggregator", sa.String, nullable=False, server_default="maxmin"))


def downgrade() -> None:
    with op.batch_alter_table("tag_choosers") as batch:
        batch.drop_column("aggregator")
