"""core: side-effect journal keeps intents, attempts and how completion was known

Revision ID: core_0002
Revises: core_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0002"
down_revision = "core_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("casework_side_effects") as batch:
        batch.add_column(sa.Column("attempts", sa.Integer, nullable=False, server_default="1"))
        batch.add_column(sa.Column("completed_by", sa.String(20)))
    op.execute("UPDATE casework_side_effects SET status = 'intent' WHERE status = 'started'")
    op.execute("UPDATE casework_side_effects SET completed_by = 'effect' WHERE status = 'done'")


def downgrade() -> None:
    op.execute("UPDATE casework_side_effects SET status = 'started' WHERE status = 'intent'")
    with op.batch_alter_table("casework_side_effects") as batch:
        batch.drop_column("completed_by")
        batch.drop_column("attempts")
