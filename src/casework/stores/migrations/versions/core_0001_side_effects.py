"""core: side-effect journal and review queue

Revision ID: core_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0001"
down_revision = None
branch_labels = ("core",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "casework_side_effects",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("thread_id", sa.String(100), nullable=False, index=True),
        sa.Column("action", sa.String(100), nullable=False),
        sa.Column("args_json", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("result_json", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True)),
    )


def downgrade() -> None:
    op.drop_table("casework_side_effects")
