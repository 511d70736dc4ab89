"""vanpool: shifts, employees, vanpools, riders, cases, email threads, messages, audit log

Revision ID: vanpool_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "vanpool_0001"
down_revision = None
branch_labels = ("vanpool",)
depends_on = None

_TZ = sa.DateTime(timezone=True)


def _fk(table: str, column: str, target: str) -> sa.Column:
    return sa.Column(
        column,
        sa.Integer,
        sa.ForeignKey(f"{target}.id", name=f"fk_{table}_{column}_{target}"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "vanpool_shifts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("shift_id", sa.String(40), nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("spec", sa.String(400), nullable=False),
        sa.Column("timezone", sa.String(60), nullable=False),
        sa.UniqueConstraint("shift_id", name="uq_vanpool_shifts_shift_id"),
    )
    op.create_table(
        "vanpool_employees",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("employee_id", sa.String(20), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(200), nullable=False),
        sa.Column("home_zip", sa.String(10), nullable=False),
        sa.Column("home_lat", sa.Float, nullable=False),
        sa.Column("home_lng", sa.Float, nullable=False),
        sa.Column("site", sa.String(120), nullable=False),
        _fk("vanpool_employees", "shift_pk", "vanpool_shifts"),
        sa.Column("pto", sa.String(400), nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.UniqueConstraint("employee_id", name="uq_vanpool_employees_employee_id"),
    )
    op.create_index("ix_vanpool_employees_shift_pk", "vanpool_employees", ["shift_pk"])
    op.create_table(
        "vanpool_vanpools",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("vanpool_id", sa.String(20), nullable=False),
        sa.Column("work_site", sa.String(120), nullable=False),
        sa.Column("pickup_zip", sa.String(10), nullable=False),
        sa.Column("pickup_lat", sa.Float, nullable=False),
        sa.Column("pickup_lng", sa.Float, nullable=False),
        sa.Column("departure_time", sa.String(5), nullable=False),
        sa.Column("return_time", sa.String(5), nullable=False),
        sa.Column("timezone", sa.String(60), nullable=False),
        sa.Column("max_commute_miles", sa.Float, nullable=False),
        sa.UniqueConstraint("vanpool_id", name="uq_vanpool_vanpools_vanpool_id"),
    )
    op.create_table(
        "vanpool_riders",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("vanpool_riders", "vanpool_pk", "vanpool_vanpools"),
        _fk("vanpool_riders", "employee_pk", "vanpool_employees"),
        sa.Column("joined_at", _TZ, nullable=False),
        sa.Column("removed_at", _TZ, nullable=True),
        sa.UniqueConstraint("vanpool_pk", "employee_pk", name="uq_vanpool_riders_member"),
    )
    op.create_index("ix_vanpool_riders_vanpool_pk", "vanpool_riders", ["vanpool_pk"])
    op.create_index("ix_vanpool_riders_employee_pk", "vanpool_riders", ["employee_pk"])
    op.create_table(
        "vanpool_cases",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("case_id", sa.String(20), nullable=False),
        _fk("vanpool_cases", "vanpool_pk", "vanpool_vanpools"),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("meta", sa.Text, nullable=False),
        sa.Column("outcome", sa.String(20), nullable=True),
        sa.Column("resolved_at", _TZ, nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.Column("due_at", _TZ, nullable=True),
        sa.UniqueConstraint("case_id", name="uq_vanpool_cases_case_id"),
    )
    op.create_index("ix_vanpool_cases_vanpool_pk", "vanpool_cases", ["vanpool_pk"])
    op.create_index("ix_vanpool_cases_status", "vanpool_cases", ["status"])
    op.create_table(
        "vanpool_email_threads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("thread_id", sa.String(20), nullable=False),
        _fk("vanpool_email_threads", "case_pk", "vanpool_cases"),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("recipients", sa.Text, nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.UniqueConstraint("thread_id", name="uq_vanpool_email_threads_thread_id"),
    )
    op.create_index("ix_vanpool_email_threads_case_pk", "vanpool_email_threads", ["case_pk"])
    op.create_table(
        "vanpool_messages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("message_id", sa.String(20), nullable=False),
        _fk("vanpool_messages", "thread_pk", "vanpool_email_threads"),
        sa.Column("direction", sa.String(10), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("sender", sa.String(200), nullable=False),
        sa.Column("recipients", sa.Text, nullable=False),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("headers", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("bucket", sa.String(20), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("next_attempt_at", _TZ, nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("sent_at", _TZ, nullable=True),
        sa.UniqueConstraint("message_id", name="uq_vanpool_messages_message_id"),
    )
    op.create_index("ix_vanpool_messages_thread_pk", "vanpool_messages", ["thread_pk"])
    op.create_index("ix_vanpool_messages_status", "vanpool_messages", ["status"])
    op.create_table(
        "vanpool_audit_log",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", _TZ, nullable=False),
        sa.Column("actor", sa.String(80), nullable=False),
        sa.Column("action", sa.String(80), nullable=False),
        sa.Column("case_id", sa.String(20), nullable=True),
        sa.Column("vanpool_id", sa.String(20), nullable=True),
        sa.Column("detail", sa.Text, nullable=False),
    )
    for column in ("at", "case_id", "vanpool_id"):
        op.create_index(f"ix_vanpool_audit_log_{column}", "vanpool_audit_log", [column])
    _append_only("vanpool_audit_log")


def _append_only(table: str) -> None:
    """Refuse UPDATE and DELETE on the audit log, in the database itself."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION vanpool_append_only() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'the vanpool audit log is append-only'; END $$ LANGUAGE plpgsql"
        )
        op.execute(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION vanpool_append_only()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'the vanpool audit log is append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS vanpool_audit_log_append_only ON vanpool_audit_log")
        op.execute("DROP FUNCTION IF EXISTS vanpool_append_only()")
    for table in (
        "vanpool_audit_log",
        "vanpool_messages",
        "vanpool_email_threads",
        "vanpool_cases",
        "vanpool_riders",
        "vanpool_vanpools",
        "vanpool_employees",
        "vanpool_shifts",
    ):
        op.drop_table(table)
