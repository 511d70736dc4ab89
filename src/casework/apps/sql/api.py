"""HTTP routes of the sql app (mounted under ``/sql`` behind the platform's token check): ask
a question, validate a query, show the schema.

Thin: each route calls ``service``; a CaseworkError they raise is answered by the one
error table of ``casework.apikit`` (unknown schema: 404; bad input, a refused or failed query:
422). ``/ask`` returns the whole SQLQueryResponse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from casework.apikit import DepsCache, allow
from casework.apps.sql import service
from casework.apps.sql.deps import build_deps
from casework.apps.sql.models import MAX_QUESTION_CHARS, SQLQueryResponse, ValidationResult
from casework.config import Settings
from casework.llm.roles import RoleModels
from casework.redact import redact_url
from casework.runtime.context import Caller, Role
from casework.runtime.runconfig import RunConfig

__all__ = ["AskRequest", "ValidateRequest", "router"]


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    strategy: Literal["cascade", "rules", "keyword", "semantic", "v1", "v2", "consistency"] = (
        "cascade"
    )
    execute: bool = Field(default=False, description="Run the query read-only and return rows.")


class ValidateRequest(BaseModel):
    query: str = Field(min_length=1, max_length=20_000)


def router(
    settings: Settings | None = None,
    deps_factory: Callable[[], Any] | None = None,
    *,
    models: RoleModels | None = None,
) -> APIRouter:
    """The routes. Nothing is opened at mount time: deps are built on first use from the
    settings each request carries (``get_settings_dep``), once per database (the newest stored
    schema, else the bundled one); each question runs on the settings' models. ``deps_factory``
    and ``models`` (scripted ones) for tests."""
    api = APIRouter(tags=["sql"])
    deps = DepsCache(build_deps, deps_factory).dependency

    @api.post("/ask")
    def ask(
        request: AskRequest, d: Any = Depends(deps), caller: Caller = allow("sql.question.ask")
    ) -> SQLQueryResponse:
        config = RunConfig.of(d.settings, caller=caller)
        if models is not None:
            config = replace(config, models=models)
        return service.ask(
            d, request.question, config, strategy=request.strategy, execute=request.execute
        )

    @api.post("/validate", dependencies=[allow("sql.query.validate")])
    def validate(request: ValidateRequest, d: Any = Depends(deps)) -> ValidationResult:
        return service.validate_query(d, request.query)

    @api.get("/schema", dependencies=[allow("sql.schema.read", Role.ADMIN)])
    def schema(d: Any = Depends(deps)) -> dict[str, Any]:
        """The schema questions are asked against; its database URL with the password hidden."""
        return {
            "name": d.schema.name,
            "db_url": redact_url(d.db_url) if d.db_url else None,
            "tables": d.schema.to_document(),
        }

    return api
