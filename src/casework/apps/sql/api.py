"""HTTP routes of the sql app (mounted under ``/sql`` behind the platform's token check): ask
a question, validate a query, show the schema.

Thin: each route calls the app's functions and maps CaseworkError to HTTP (unknown schema:
404; bad input, a refused or failed query: 422). ``/ask`` returns the whole SQLQueryResponse.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, Field

from casework.apps.sql.models import SQLQueryResponse, ValidationResult
from casework.apps.sql.rules import MAX_QUESTION_CHARS
from casework.config import Settings
from casework.errors import CaseworkError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.context import get_settings_dep
from casework.runtime.runconfig import RunConfig

__all__ = ["AskRequest", "ValidateRequest", "router"]

T = TypeVar("T")


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    strategy: Literal["rules", "keyword", "semantic", "v1", "v2"] = "v2"
    execute: bool = Field(default=False, description="Run the query read-only and return rows.")


class ValidateRequest(BaseModel):
    query: str = Field(min_length=1, max_length=20_000)


def _http(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except CaseworkError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc


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
    holder: dict[str, Any] = {}
    lock = threading.Lock()

    def deps(served: Settings = Depends(get_settings_dep)) -> Any:
        with lock:
            if served.db_url not in holder:
                if deps_factory is not None:
                    holder[served.db_url] = deps_factory()
                else:
                    from casework.apps.sql.deps import build_deps

                    holder[served.db_url] = build_deps(served)
            return holder[served.db_url]

    @api.post("/ask")
    def ask(request: AskRequest, d: Any = Depends(deps)) -> SQLQueryResponse:
        from casework.apps.sql.service import ask as ask_fn

        config = RunConfig.of(d.settings)
        if models is not None:
            config = replace(config, models=models)
        return _http(
            lambda: ask_fn(
                d, request.question, config, strategy=request.strategy, execute=request.execute
            )
        )

    @api.post("/validate")
    def validate(request: ValidateRequest, d: Any = Depends(deps)) -> ValidationResult:
        from casework.apps.sql.validation import validate_sql

        return _http(lambda: validate_sql(request.query, d.schema, dialect=d.dialect))

    @api.get("/schema")
    def schema(d: Any = Depends(deps)) -> dict[str, Any]:
        return {"name": d.schema.name, "db_url": d.db_url, "tables": d.schema.to_document()}

    return api
