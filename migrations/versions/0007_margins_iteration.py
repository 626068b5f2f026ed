"""The iteration the stored margin vector of a label belongs to.

``label_training.margins_iteration``: ``margins_float64`` holds Q after that many trees. Training
now writes the margin vector only at a margin checkpoint and when a label stops, pauses or
converges (issue 13), so it may lag ``iteration``; resume and weight replay add the stored trees
margins_iteration+1..iteration to it. Every row written before this revision holds the margins
after its last committed iteration, so existing rows get ``margins_iteration = iteration``.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("label_training", sa.Column("margins_iteration", sa.Integer))
    op.execute("UPDATE label_training SET margins_iteration = iteration")
    with op.batch_alter_table("label_training") as batch:  # SQLite changes nullability by copying the table
        batch.alter_column("margins_iteration", existing_type=sa.Integer, nullable=False)


def downgrade() -> None:
    # Code before 0007 reads margins_float64 as Q after ``iteration``: a row whose margins lag cannot go
    # back without replaying trees, which a migration cannot do. Refuse instead of corrupting resumes.
    behind = op.get_bind().execute(sa.text(
        "SELECT count(*) FROM label_training WHERE margins_iteration != iteration")).scalar()
    if behind:
        raise RuntimeError(f"{behind} label(s) have margins stored behind their last iteration; run "
                           "`clparse train` until they pause or stop before downgrading")
    with op.batch_alter_table("label_training") as batch:
        batch.drop_column("margins_iteration")
