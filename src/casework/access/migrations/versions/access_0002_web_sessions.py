"""access: server-side web sessions (sign-out, a password change or disabling ends them)

Revision ID: access_0002
Revises: access_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "access_0002"
down_revision = "access_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "user_id",
            sa.Integer,
            sa.ForeignKey("users.id", ondelete="CASCADE", name="fk_web_sessions_user_id_users"),
            nullable=False,
            index=True,
        ),
        sa.Column("id_hash", sa.String(64), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("address", sa.String(64)),
        sa.UniqueConstraint("id_hash", name="uq_web_sessions_id_hash"),
        # Ids are never reused, so `--revoke ID` from an old listing cannot end a newer one.
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("web_sessions")
