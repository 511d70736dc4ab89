"""receipts: owner_id on receipts and places (tenant-scoped stores, #9 part 3)

Rows that exist before this revision stay shared (owner NULL): they were imported by the
local operator. Lines, words and labels carry no owner of their own; they belong to the owner
of their receipt, and the repository filters them through it.

Revision ID: receipts_0002
Revises: receipts_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "receipts_0002"
down_revision = "receipts_0001"
branch_labels = None
depends_on = None

_TABLES = ("receipts_receipts", "receipts_places")


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(table, sa.Column("owner_id", sa.Integer, nullable=True))
        op.create_index(f"ix_{table}_owner_id", table, ["owner_id"])


def downgrade() -> None:
    for table in _TABLES:
        op.drop_index(f"ix_{table}_owner_id", table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("owner_id")
