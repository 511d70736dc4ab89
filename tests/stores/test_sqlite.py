import pytest
from sqlalchemy import text

from casework.stores.sql import get_engine, migrate, migration_status, session_scope


def test_sqlite_migrations_and_atomic_sessions(tmp_path):
    engine = get_engine(f"sqlite:///{tmp_path}/c.db")
    migrate(engine)
    applied, expected = migration_status(engine)
    assert applied == expected
    with pytest.raises(RuntimeError), session_scope(engine) as s:
        s.execute(
            text(
                "INSERT INTO casework_side_effects (key, thread_id, action, args_json, status, created_at) VALUES ('k','t','a','{}','done', CURRENT_TIMESTAMP)"
            )
        )
        raise RuntimeError("boom")
    with engine.connect() as conn:
        assert (
            conn.execute(text("SELECT COUNT(*) FROM casework_side_effects")).scalar_one() == 0
        )  # nothing half-written


def test_unsupported_url_is_one_sentence():
    from casework.errors import ConfigError

    with pytest.raises(ConfigError, match="Unsupported database URL"):
        get_engine("mysql://x")
