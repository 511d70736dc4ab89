"""core: the memory of verified answers (examples), per app and tenant, with their embedding

Revision ID: core_0003
Revises: core_0002
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0003"
down_revision = "core_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "casework_examples",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("app", sa.String(50), nullable=False),
        sa.Column("owner_id", sa.Integer, nullable=True),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("key_text", sa.Text, nullable=False),
        sa.Column("inputs_json", sa.Text, nullable=False),
        sa.Column("answer_json", sa.Text, nullable=False),
        sa.Column("verified_by", sa.String(200), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(10), nullable=False),
        sa.Column("run_id", sa.String(100), nullable=True),
        sa.Column("embedding", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_casework_examples_app_owner", "casework_examples", ["app", "owner_id"])
    op.create_index("ix_casework_examples_key_hash", "casework_examples", ["key_hash"])


def downgrade() -> None:
    op.drop_index("ix_casework_examples_key_hash", "casework_examples")
    op.drop_index("ix_casework_examples_app_owner", "casework_examples")
    op.drop_table("casework_examples")
