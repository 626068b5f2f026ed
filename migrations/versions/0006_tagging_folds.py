"""Taggers stored as bytes of any kind (the CRF), and jackknifed training tags per sentence.

``taggers.kind`` says which tagger a row holds (``perceptron``: JSON text in ``model_json``, as
before; ``crf``: CRFsuite bytes behind clparse's header in ``model_blob``). ``sentences.fold`` is the
jackknife fold of a training sentence (NULL: gold tags) and ``sentences.tags`` the POS tags its
training tree carries, as the fold's tagger predicted them (space-separated, one per token).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("taggers") as batch:  # SQLite changes nullability by copying the table
        batch.add_column(sa.Column("kind", sa.String, nullable=False, server_default="perceptron"))
        batch.add_column(sa.Column("model_blob", sa.LargeBinary))
        batch.alter_column("model_json", existing_type=sa.Text, nullable=True)
    op.add_column("sentences", sa.Column("fold", sa.Integer))
    op.add_column("sentences", sa.Column("tags", sa.Text))


def downgrade() -> None:
    op.drop_column("sentences", "tags")
    op.drop_column("sentences", "fold")
    with op.batch_alter_table("taggers") as batch:
        batch.alter_column("model_json", existing_type=sa.Text, nullable=False)
        batch.drop_column("model_blob")
        batch.drop_column("kind")
