"""vanpool: an employee's shift may be empty (an HR export leaves it blank for employees who
ride no vanpool; no audit reads it)

SQLite cannot drop a NOT NULL in place, and rebuilding ``vanpool_employees`` (Alembic's batch
mode) fails while riders reference it with foreign keys on. Dropping a NOT NULL changes no
stored row, so SQLite's documented shortcut for it is used instead: edit the table's
``CREATE TABLE`` text in the schema and bump the schema version
(https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes").

Revision ID: vanpool_0002_optional_shift
Revises: vanpool_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "vanpool_0002_optional_shift"
down_revision = "vanpool_0001"
branch_labels = None
depends_on = None

_TABLE = "vanpool_employees"
_STRICT = "shift_pk INTEGER NOT NULL"
_LOOSE = "shift_pk INTEGER"


def _sqlite_column(before: str, after: str) -> None:
    bind = op.get_bind()
    sql = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (_TABLE,)
    ).scalar_one()
    if before not in sql:
        raise RuntimeError(f"{_TABLE} has no column written {before!r}; its schema is: {sql}")
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    bind.exec_driver_sql(
        "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?",
        (sql.replace(before, after, 1), _TABLE),
    )
    bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema = OFF")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_column(_STRICT, _LOOSE)
    else:
        op.alter_column(_TABLE, "shift_pk", existing_type=sa.Integer, nullable=True)


def downgrade() -> None:
    # Refused by the database while an employee has no shift: give them one first.
    if op.get_bind().dialect.name == "sqlite":
        if (
            op.get_bind()
            .exec_driver_sql(f"SELECT count(*) FROM {_TABLE} WHERE shift_pk IS NULL")
            .scalar_one()
        ):
            raise RuntimeError(f"{_TABLE} has employees without a shift; give them one first.")
        _sqlite_column(_LOOSE + ",", _STRICT + ",")
    else:
        op.alter_column(_TABLE, "shift_pk", existing_type=sa.Integer, nullable=False)
