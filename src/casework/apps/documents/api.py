"""HTTP routes of the documents app (mounted under ``/documents`` behind the token check).

Thin: each route reads through the repository or calls ``service`` for the authenticated
caller; a CaseworkError they raise is answered by the one error table of ``casework.apikit``.
Another user's document, extraction, stack or run answers exactly like one that does not exist (404).
Runs stream the spec's flat events as SSE with ids; a client that reconnects with
``Last-Event-ID`` gets what it missed, and a run goes on when nobody listens.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Depends, File, Header, UploadFile
from fastapi.responses import Response
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from casework.apikit import DepsCache, ServerEvent, allow, safe_upload_name, sse_response
from casework.apikit import last_event_id as parse_last_event_id
from casework.apps.documents import service
from casework.apps.documents.deps import DocumentsDeps
from casework.config import Settings
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller, Role
from casework.runtime.runconfig import RunConfig

__all__ = ["router"]

Deps = Callable[..., Awaitable[DocumentsDeps]]
"""The per-database deps dependency of the routes."""
ConfigFor = Callable[[DocumentsDeps, Caller], RunConfig]
"""The run's config for a caller."""


class ExtractRequest(BaseModel):
    document_id: int
    fields: list[str] | None = Field(default=None, description="Custom mode: exactly these names.")
    strategy: Literal["cascade", "rules", "fields", "agent"] = "cascade"


class CorrectRequest(BaseModel):
    extraction_id: int
    instruction: str = Field(min_length=1, max_length=2000)


class StackRequest(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class StackDocs(BaseModel):
    document_ids: list[int] = Field(min_length=1, max_length=500)


def _sse(deps: DocumentsDeps, caller: Caller, run_id: str, after: int) -> EventSourceResponse:
    """The run's stored events after ``after``, each with its sequence number as its id."""
    deps.repo.get_run(caller.user_id, run_id)  # 404 before the stream starts
    followed = service.follow_run(deps, caller.user_id, run_id, after=after)
    events = (ServerEvent(data, id=seq) for seq, data in followed)
    return sse_response(events, headers={"X-Run-Id": run_id})


def router(
    settings: Settings | None = None,
    deps_factory: Callable[[], DocumentsDeps] | None = None,
    *,
    models: RoleModels | None = None,
) -> APIRouter:
    """The routes; deps are built on first use per database, and each run's config on the
    settings' models for the caller. ``deps_factory`` and ``models`` (scripted ones) for
    tests."""
    api = APIRouter(tags=["documents"])
    deps = DepsCache(service.build_deps, deps_factory).dependency

    def run_config(d: DocumentsDeps, caller: Caller) -> RunConfig:
        config = RunConfig.of(d.settings, caller=caller)
        return replace(config, models=models) if models is not None else config

    _document_routes(api, deps)
    _run_routes(api, deps, run_config)
    _agent_routes(api, deps, run_config)
    _stack_routes(api, deps, run_config)
    return api


def _document_routes(api: APIRouter, deps: Deps) -> None:
    """Upload, list and read documents and their extractions."""

    @api.post("/documents", status_code=201)
    async def upload(
        file: UploadFile = File(...),
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.document.add", Role.USER, own=True),
    ) -> dict[str, Any]:
        """Add a PDF, PNG or JPEG: its text is read (OCR for scans) before this answers."""
        name = safe_upload_name(file.filename)  # a 422 before anything is read or written
        data = await file.read()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            doc = await asyncio.to_thread(service.add_file, d, caller.user_id, path)
        return doc.to_dict()

    @api.get("/documents")
    def list_documents(
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.documents.list", Role.USER, own=True),
    ) -> list[dict[str, Any]]:
        return [doc.to_dict() for doc in d.repo.list_documents(caller.user_id)]

    @api.get("/documents/{document_id}")
    def show_document(
        document_id: int,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.document.read", Role.USER, own=True),
    ) -> dict[str, Any]:
        doc = d.repo.get_document(caller.user_id, document_id)
        return doc.to_dict() | {
            "extractions": [e.to_dict() for e in d.repo.extractions_of(caller.user_id, document_id)]
        }

    @api.get("/extractions/{extraction_id}")
    def show_extraction(
        extraction_id: int,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.extraction.read", Role.USER, own=True),
    ) -> dict[str, Any]:
        return d.repo.get_extraction(caller.user_id, extraction_id).to_dict()


def _run_routes(api: APIRouter, deps: Deps, run_config: ConfigFor) -> None:
    """Start an extraction or a correction; read a run and stream its events."""

    @api.post("/extractions", status_code=202)
    def extract(
        body: ExtractRequest,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.extraction.start", Role.USER, own=True),
    ) -> dict[str, Any]:
        """Create the extraction and start the run; follow it at ``/runs/{run_id}/events``."""
        handle = service.start_extraction(
            d,
            caller,
            body.document_id,
            fields=body.fields,
            strategy=body.strategy,
            config=run_config(d, caller),
        )
        return {"run_id": handle.run_id, "extraction_id": handle.extraction_id}

    @api.post("/extractions/{extraction_id}/correct", status_code=202)
    def correct(
        extraction_id: int,
        body: CorrectRequest,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.extraction.correct", Role.USER, own=True),
    ) -> dict[str, Any]:
        handle = service.start_correction(
            d, caller, extraction_id, body.instruction, config=run_config(d, caller)
        )
        return {"run_id": handle.run_id, "extraction_id": extraction_id}

    @api.get("/runs/{run_id}")
    def show_run(
        run_id: str,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.run.read", Role.USER, own=True),
    ) -> dict[str, Any]:
        return d.repo.get_run(caller.user_id, run_id)

    @api.get("/runs/{run_id}/events")
    def run_events(
        run_id: str,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.run.read", Role.USER, own=True),
        last_event_id: str | None = Header(default=None),
    ) -> EventSourceResponse:
        """The run's events as SSE from ``Last-Event-ID`` on (all of them without it)."""
        return _sse(d, caller, run_id, parse_last_event_id(last_event_id))


def _agent_routes(api: APIRouter, deps: Deps, run_config: ConfigFor) -> None:
    """The spec's agent routes: create the extraction, then stream the run."""

    @api.post("/api/agent/extract")
    def agent_extract(
        body: ExtractRequest,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.extraction.start", Role.USER, own=True),
    ) -> EventSourceResponse:
        handle = service.start_extraction(
            d,
            caller,
            body.document_id,
            fields=body.fields,
            strategy=body.strategy,
            config=run_config(d, caller),
        )
        return _sse(d, caller, handle.run_id, 0)

    @api.post("/api/agent/correct")
    def agent_correct(
        body: CorrectRequest,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.extraction.correct", Role.USER, own=True),
    ) -> EventSourceResponse:
        handle = service.start_correction(
            d, caller, body.extraction_id, body.instruction, config=run_config(d, caller)
        )
        return _sse(d, caller, handle.run_id, 0)


def _stack_routes(api: APIRouter, deps: Deps, run_config: ConfigFor) -> None:
    """Create, fill, read, build and export stacks."""

    @api.post("/stacks", status_code=201)
    def create_stack(
        body: StackRequest,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.stack.create", Role.USER, own=True),
    ) -> dict[str, Any]:
        return service.create_stack(d, caller.user_id, body.name).to_dict()

    @api.get("/stacks")
    def list_stacks(
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.stacks.list", Role.USER, own=True),
    ) -> list[dict[str, Any]]:
        return [s.to_dict() for s in d.repo.list_stacks(caller.user_id)]

    @api.post("/stacks/{stack_id}/documents")
    def add_to_stack(
        stack_id: int,
        body: StackDocs,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.stack.edit", Role.USER, own=True),
    ) -> dict[str, Any]:
        return service.add_to_stack(d, caller.user_id, stack_id, body.document_ids).to_dict()

    @api.get("/stacks/{stack_id}")
    def show_stack(
        stack_id: int,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.stack.read", Role.USER, own=True),
    ) -> dict[str, Any]:
        return d.repo.get_stack(caller.user_id, stack_id).to_dict()

    @api.post("/stacks/{stack_id}/build", status_code=202)
    def build_stack(
        stack_id: int,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.stack.build", Role.USER, own=True),
    ) -> dict[str, Any]:
        handle = service.start_stack_build(d, caller, stack_id, config=run_config(d, caller))
        return {"run_id": handle.run_id, "stack_id": stack_id}

    @api.get("/stacks/{stack_id}/export.csv")
    def export_stack(
        stack_id: int,
        d: DocumentsDeps = Depends(deps),
        caller: Caller = allow("documents.stack.export", Role.USER, own=True),
    ) -> Response:
        text, _ = service.stack_csv(d, caller.user_id, stack_id)
        return Response(text, media_type="text/csv")
