"""vanpool: the audit log names the caller who caused each row

Revision ID: vanpool_0003
Revises: vanpool_0002_optional_shift

Rows written before it keep a null caller: the log is append-only (its triggers refuse
UPDATE), and nobody knows who caused them.
"""

import sqlalchemy as sa
from alembic import op

revision = "vanpool_0003"
down_revision = "vanpool_0002_optional_shift"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("vanpool_audit_log", sa.Column("caller", sa.String(120), nullable=True))


def downgrade() -> None:
    # Native DROP COLUMN (SQLite 3.35+): a batch rebuild would drop the append-only triggers.
    op.drop_column("vanpool_audit_log", "caller")
