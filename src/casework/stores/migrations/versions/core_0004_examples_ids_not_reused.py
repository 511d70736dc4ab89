"""core: an example's id is never given again after it is deleted (SQLite AUTOINCREMENT)

A decision cites the examples it used by id. SQLite's plain integer key hands the highest id
back out once that row is deleted, so a decision could come to cite an example it never
saw. The table is rebuilt with AUTOINCREMENT there (rows and indexes kept); PostgreSQL's
sequences never reuse an id, so nothing changes on it.

Revision ID: core_0004
Revises: core_0003
"""

from alembic import op

revision = "core_0004"
down_revision = "core_0003"
branch_labels = None
depends_on = None


def _rebuild(autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table(
        "casework_examples",
        recreate="always",
        table_kwargs={"sqlite_autoincrement": autoincrement},
    ):
        pass


def upgrade() -> None:
    _rebuild(True)


def downgrade() -> None:
    _rebuild(False)
