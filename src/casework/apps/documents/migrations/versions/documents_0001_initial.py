"""documents: documents, OCR results, extractions, runs + events, stacks; PostgreSQL field functions

Revision ID: documents_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "documents_0001"
down_revision = None
branch_labels = ("documents",)
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)

# The spec's functions: surgical edits with jsonb_set / #-, filtered on id AND user id.
UPDATE_FN = """
CREATE OR REPLACE FUNCTION update_extraction_field(
    p_extraction_id INTEGER,
    p_user_id INTEGER,
    p_field_path TEXT[],
    p_value JSONB,
    p_confidence FLOAT
) RETURNS VOID AS $$
BEGIN
    UPDATE documents_extractions
    SET
        fields = jsonb_set(fields, p_field_path, p_value),
        confidence_scores = jsonb_set(confidence_scores, p_field_path, to_jsonb(p_confidence)),
        updated_at = NOW()
    WHERE id = p_extraction_id AND owner_id = p_user_id;
END;
$$ LANGUAGE plpgsql;
"""

REMOVE_FN = """
CREATE OR REPLACE FUNCTION remove_extraction_field(
    p_extraction_id INTEGER,
    p_user_id INTEGER,
    p_field_path TEXT[]
) RETURNS VOID AS $$
BEGIN
    UPDATE documents_extractions
    SET
        fields = fields #- p_field_path,
        confidence_scores = confidence_scores #- p_field_path,
        updated_at = NOW()
    WHERE id = p_extraction_id AND owner_id = p_user_id;
END;
$$ LANGUAGE plpgsql;
"""


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.Integer, nullable=False, index=True),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("media_type", sa.String(60), nullable=False),
        sa.Column("size_bytes", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "documents_ocr_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.Integer, nullable=False, index=True),
        sa.Column(
            "document_id",
            sa.Integer,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("raw_text", sa.Text, nullable=False),
        sa.Column("page_count", sa.Integer, nullable=False),
        sa.Column("pages", JSON, nullable=False),
        sa.Column("engine", sa.String(80), nullable=False),
        sa.Column("ocr_pages", sa.Integer, nullable=False, server_default="0"),
        sa.Column("seconds", sa.Float, nullable=False, server_default="0"),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "documents_extractions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.Integer, nullable=False, index=True),
        sa.Column(
            "document_id",
            sa.Integer,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("mode", sa.String(10), nullable=False, server_default="auto"),
        sa.Column("requested_fields", JSON, nullable=True),
        sa.Column("document_type", sa.String(80), nullable=True),
        sa.Column("fields", JSON, nullable=False),
        sa.Column("confidence_scores", JSON, nullable=False),
        sa.Column("method", sa.String(20), nullable=False, server_default="agent"),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.CheckConstraint("status IN ('in_progress', 'completed', 'failed')", name="status_known"),
    )
    op.create_table(
        "documents_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner_id", sa.Integer, nullable=False, index=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("extraction_id", sa.Integer, nullable=True),
        sa.Column("stack_id", sa.Integer, nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False, server_default="0"),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_table(
        "documents_run_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("documents_runs.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.UniqueConstraint("run_id", "seq"),
    )
    op.create_table(
        "documents_stacks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.Integer, nullable=False, index=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "documents_stack_documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "stack_id",
            sa.Integer,
            sa.ForeignKey("documents_stacks.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column(
            "document_id",
            sa.Integer,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.UniqueConstraint("stack_id", "document_id"),
    )
    op.create_table(
        "documents_stack_tables",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "stack_id",
            sa.Integer,
            sa.ForeignKey("documents_stacks.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("columns", JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "documents_stack_table_rows",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "table_id",
            sa.Integer,
            sa.ForeignKey("documents_stack_tables.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column(
            "document_id",
            sa.Integer,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("cells", JSON, nullable=False),
        sa.Column("confidences", JSON, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.UniqueConstraint("table_id", "document_id"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(UPDATE_FN)
        op.execute(REMOVE_FN)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION IF EXISTS update_extraction_field(INTEGER, INTEGER, TEXT[], JSONB, FLOAT)"
        )
        op.execute("DROP FUNCTION IF EXISTS remove_extraction_field(INTEGER, INTEGER, TEXT[])")
    for table in (
        "documents_stack_table_rows",
        "documents_stack_tables",
        "documents_stack_documents",
        "documents_stacks",
        "documents_run_events",
        "documents_runs",
        "documents_extractions",
        "documents_ocr_results",
        "documents",
    ):
        op.drop_table(table)
