"""sql fixtures: the bundled security schema and one synthetic SQLite database per session."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from casework.apps.sql.database import create_database
from casework.apps.sql.deps import BUNDLED_SCHEMA
from casework.apps.sql.models import DatabaseSchema
from casework.apps.sql.schemas import load_schema

ANCHOR = datetime(2026, 11, 1)


@pytest.fixture(scope="session")
def security() -> DatabaseSchema:
    return load_schema(BUNDLED_SCHEMA, name="security")


@pytest.fixture(scope="session")
def security_db(security: DatabaseSchema, tmp_path_factory: pytest.TempPathFactory) -> str:
    """sqlite URL of the security schema with 60 rows per table (read-only use)."""
    path: Path = tmp_path_factory.mktemp("sqldb") / "security.sqlite"
    url = f"sqlite:///{path.as_posix()}"
    create_database(security, url, rows=60, seed=7)
    return url


@pytest.fixture
def make_deps(security, security_db, settings):
    """Deps and a run config with scripted models per role: ``make_deps(agent=[...],
    judge=[...])`` -> (deps, config, agent model, judge model)."""
    from casework.apps.sql.deps import SQLConfig, SQLDeps
    from casework.llm import RoleModels, ScriptedChatModel
    from casework.runtime import RunConfig

    def build(agent=(), judge=(), **config):
        models = {
            "specialist": ScriptedChatModel(steps=list(agent), model_name="scripted-agent"),
            "judge": ScriptedChatModel(steps=list(judge), model_name="scripted-judge"),
        }
        deps = SQLDeps(
            schema=security,
            settings=settings,
            db_url=security_db,
            config=SQLConfig(retrieval_type="keyword", **config),
        )
        run = RunConfig(models=RoleModels.given(models))
        return deps, run, models["specialist"], models["judge"]

    return build
