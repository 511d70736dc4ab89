"""hed: annotations a person reviews (status, who decided, the corrected annotation)

Revision ID: hed_0002
Revises: hed_0001

A stored annotation whose verdict is not VALID waits for a person in the inbox
(``review_status`` "waiting"); a reviewer accepts it, corrects it (the correction validated
before it is kept) or rejects it. Rows stored before this revision that were not VALID wait too.
"""

import sqlalchemy as sa
from alembic import op

revision = "hed_0002"
down_revision = "hed_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("hed_annotations") as batch:
        batch.add_column(sa.Column("review_status", sa.String(20), nullable=True))
        batch.add_column(sa.Column("review_outcome", sa.String(20), nullable=True))
        batch.add_column(sa.Column("corrected_annotation", sa.Text, nullable=True))
        batch.add_column(sa.Column("decided_by", sa.String(120), nullable=True))
        batch.add_column(sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("review_note", sa.Text, nullable=True))
        batch.create_index("ix_hed_annotations_review", ["review_status", "created_at"])
    op.execute("UPDATE hed_annotations SET review_status = 'waiting' WHERE verdict <> 'VALID'")


def downgrade() -> None:
    with op.batch_alter_table("hed_annotations") as batch:
        batch.drop_index("ix_hed_annotations_review")
        for name in (
            "review_note",
            "decided_at",
            "decided_by",
            "corrected_annotation",
            "review_outcome",
            "review_status",
        ):
            batch.drop_column(name)
