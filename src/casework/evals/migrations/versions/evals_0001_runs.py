"""evals: evaluation runs and their per-case results

Revision ID: evals_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "evals_0001"
down_revision = None
branch_labels = ("evals",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "eval_runs",
        sa.Column("id", sa.String(120), primary_key=True),
        sa.Column("app", sa.String(80), nullable=False, index=True),
        sa.Column("strategy", sa.String(80), nullable=False),
        sa.Column("model", sa.String(300)),
        sa.Column("judge_model", sa.String(300)),
        sa.Column("dataset", sa.String(1000), nullable=False),
        sa.Column("dataset_sha256", sa.String(64), nullable=False, index=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("n_cases", sa.Integer, nullable=False),
        sa.Column("n_errors", sa.Integer, nullable=False),
        sa.Column("accuracy", sa.Float),
        sa.Column("targets_met", sa.Boolean),
        sa.Column("wall_seconds", sa.Float, nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("run_dir", sa.String(1000)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("metrics_json", sa.Text, nullable=False),
        sa.Column("details_json", sa.Text, nullable=False),
        sa.Column("targets_json", sa.Text, nullable=False),
        sa.Column("config_json", sa.Text, nullable=False),
    )
    op.create_table(
        "eval_case_results",
        sa.Column(
            "run_id",
            sa.String(120),
            sa.ForeignKey(
                "eval_runs.id", ondelete="CASCADE", name="fk_eval_case_results_run_id_eval_runs"
            ),
            primary_key=True,
        ),
        sa.Column("case_id", sa.String(300), primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("verdict", sa.String(200)),
        sa.Column("expected_verdict", sa.String(200)),
        sa.Column("correct", sa.Boolean),
        sa.Column("confidence", sa.Float),
        sa.Column("error", sa.Text),
        sa.Column("ended_by", sa.String(60)),
        sa.Column("wall_seconds", sa.Float, nullable=False),
        sa.Column("cost_usd", sa.Float),
        sa.Column("total_tokens", sa.Integer, nullable=False),
        sa.Column("judge_score", sa.Float),
        sa.Column("trace", sa.String(1000)),
        sa.Column("result_json", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("eval_case_results")
    op.drop_table("eval_runs")
