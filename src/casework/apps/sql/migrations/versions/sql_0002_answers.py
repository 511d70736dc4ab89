"""sql: answers nobody was sure of, waiting for a person

Revision ID: sql_0002
Revises: sql_0001

A question whose answer is NEEDS_REVIEW is kept with its draft query; a reviewer accepts the
draft, corrects it (the correction executed read-only before it is kept) or rejects it.
"""

import sqlalchemy as sa
from alembic import op

revision = "sql_0002"
down_revision = "sql_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sql_answers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("schema_name", sa.String(120), nullable=False),
        sa.Column("query", sa.Text, nullable=True),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("response", sa.JSON, nullable=False),
        sa.Column("asked_by", sa.String(120), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("review_status", sa.String(20), nullable=False),
        sa.Column("review_outcome", sa.String(20), nullable=True),
        sa.Column("corrected_query", sa.Text, nullable=True),
        sa.Column("decided_by", sa.String(120), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("review_note", sa.Text, nullable=True),
    )
    op.create_index("ix_sql_answers_review", "sql_answers", ["review_status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_sql_answers_review", table_name="sql_answers")
    op.drop_table("sql_answers")
