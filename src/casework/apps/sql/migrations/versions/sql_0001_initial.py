"""sql: loaded schemas and the databases they describe

Revision ID: sql_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "sql_0001"
down_revision = None
branch_labels = ("sql",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sql_schemas",
        sa.Column("name", sa.String(120), primary_key=True),
        sa.Column("source", sa.String(1000), nullable=False, server_default=""),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("db_url", sa.String(1000), nullable=True),
        sa.Column("loaded_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sql_schemas")
