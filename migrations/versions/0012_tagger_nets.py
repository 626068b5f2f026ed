"""The tagger net beside the CRF (clparse train-tagger), and which tagger a tag chooser was fitted with.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tagger_nets",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model_blob", sa.LargeBinary, nullable=False),
        sa.Column("crf_weight", sa.Float, nullable=False),
        sa.Column("train_sentences", sa.Integer, nullable=False),
        sa.Column("epochs", sa.Integer, nullable=False),
        sa.Column("kept_epoch", sa.Integer, nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("net_dev_accuracy", sa.Float),
        sa.Column("dev_accuracy", sa.Float),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("clparse_version", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
    )
    # every chooser stored before was fitted on the CRF's taggings: there was no other tagger
    with op.batch_alter_table("tag_choosers") as batch:
        batch.add_column(sa.Column("tagger", sa.String, nullable=False, server_default="crf"))


def downgrade() -> None:
    with op.batch_alter_table("tag_choosers") as batch:
        batch.drop_column("tagger")
    op.drop_table("tagger_nets")
