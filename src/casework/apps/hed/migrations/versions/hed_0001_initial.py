"""hed: annotation runs (batch rows unique per batch key and row id)

Revision ID: hed_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "hed_0001"
down_revision = None
branch_labels = ("hed",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hed_annotations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(40), nullable=False, index=True),
        sa.Column("batch_key", sa.String(80), nullable=True),
        sa.Column("row_id", sa.String(200), nullable=True),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("schema_version", sa.String(20), nullable=False),
        sa.Column("strategy", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("annotation", sa.Text, nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("validation_status", sa.String(30), nullable=False),
        sa.Column("is_valid", sa.Boolean, nullable=False),
        sa.Column("is_faithful", sa.Boolean, nullable=True),
        sa.Column("is_complete", sa.Boolean, nullable=True),
        sa.Column("validation_attempts", sa.Integer, nullable=False),
        sa.Column("total_iterations", sa.Integer, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("ended_by", sa.String(40), nullable=False),
        sa.Column("result", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("batch_key", "row_id", name="uq_hed_annotations_batch_row"),
    )


def downgrade() -> None:
    op.drop_table("hed_annotations")
