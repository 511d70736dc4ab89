"""web: live runs started from the UI and their events, numbered for re-attaching

Revision ID: web_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "web_0001"
down_revision = None
branch_labels = ("web",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("app", sa.String(80), nullable=False, index=True),
        sa.Column("title", sa.String(400), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("started_by", sa.String(80), nullable=False),
        sa.Column("params_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "web_run_events",
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("web_runs.id", ondelete="CASCADE", name="fk_web_run_events_run_id"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("data_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "web_run_items",
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("web_runs.id", ondelete="CASCADE", name="fk_web_run_items_run_id"),
            primary_key=True,
        ),
        sa.Column("app", sa.String(80), primary_key=True),
        sa.Column("item_id", sa.String(200), primary_key=True),
    )
    op.create_index("ix_web_run_items_item", "web_run_items", ["app", "item_id"])


def downgrade() -> None:
    op.drop_table("web_run_items")
    op.drop_table("web_run_events")
    op.drop_table("web_runs")
