"""HTTP routes of the hed app, mounted under ``/hed`` behind the platform's token check:
validate, annotate, the annotation run's progress as SSE (LangGraph's ``astream_events``),
and a dataset's files: an uploaded sidecar and events file validated, or an uploaded events
file's categorical levels annotated into a sidecar (the server's guard bounds uploads).

Thin: each route calls ``service``; a CaseworkError it raises is answered by the one error
table of ``casework.apikit`` (bad input: 422; a model that cannot be configured as asked: 400).
Request headers choose the provider and model and may carry the caller's own provider key
(``ModelChoice``); the key goes to that request's provider client only: never stored, logged,
traced or echoed.
"""

from __future__ import annotations

import base64
import binascii
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Depends, File, Form, Header, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from casework.apikit import (
    DepsCache,
    ServerEvent,
    allow,
    chosen_model,
    error_body,
    error_status,
    get_settings_dep,
    sse_response,
)
from casework.apps.hed import service
from casework.apps.hed.deps import HedDeps, open_repository
from casework.apps.hed.models import (
    DEFAULT_SCHEMA,
    MAX_DESCRIPTION_CHARS,
    ROLES,
    HedInput,
    decision_json,
)
from casework.config import Settings
from casework.errors import InputError, ModelError
from casework.runtime import EndReason, RunConfig
from casework.runtime.context import Caller

__all__ = ["AnnotateRequest", "ModelChoice", "ValidateRequest", "router"]

RunFactory = Callable[["ModelChoice"], tuple[HedDeps, RunConfig]]
"""``factory(choice)`` -> the deps and the run config (models, traces) of one request."""


class ValidateRequest(BaseModel):
    hed: list[str] = Field(min_length=1, max_length=1000, description="HED strings.")
    schema_version: str = DEFAULT_SCHEMA
    validator: Literal["auto", "js", "python"] = "auto"


class AnnotateRequest(BaseModel):
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS * 2)
    schema_version: str = DEFAULT_SCHEMA
    run_assessment: bool = False
    strategy: Strategy = "cascade"
    image_base64: str | None = Field(
        default=None, description="An image for the vision agent (PNG, JPEG, GIF or WebP)."
    )


@dataclass(frozen=True)
class ModelChoice:
    """A request's model headers: ``X-Casework-Model`` (provider:name for every text role),
    ``X-Casework-Vision-Model`` and ``X-Casework-Api-Key`` (the caller's own key for the
    model's provider: used for this request's provider client, never stored or logged)."""

    model: str | None = None
    vision_model: str | None = None
    api_key: str | None = field(default=None, repr=False)


def _prepare(body: AnnotateRequest, config: RunConfig) -> tuple[HedInput, str]:
    """The request's input (``service.annotation_input``), its image decoded from base64."""
    image = None
    if body.image_base64:
        try:
            image = base64.b64decode(body.image_base64, validate=True)
        except (binascii.Error, ValueError):
            raise InputError(
                "image_base64 is not valid base64; send the image's bytes base64-encoded."
            ) from None
    return service.annotation_input(
        config,
        body.description,
        schema=body.schema_version,
        run_assessment=body.run_assessment,
        image=image,
        image_name="image_base64",
    )


async def _save(upload: UploadFile | None, folder: Path, default: str) -> Path | None:
    """An uploaded file written into ``folder`` under its own base name (``default`` without
    one); None when nothing was sent."""
    if upload is None:
        return None
    name = Path(upload.filename or default).name or default
    path = folder / name
    if path.exists():  # two uploads with one name: keep both
        path = folder / f"{len(list(folder.iterdir()))}-{name}"
    path.write_bytes(await upload.read())
    return path


Strategy = Literal["cascade", "loop", "loop-no-eval", "one-shot", "rules"]


def _choice(
    model: str | None = Header(default=None, alias="X-Casework-Model"),
    vision_model: str | None = Header(default=None, alias="X-Casework-Vision-Model"),
    api_key: str | None = Header(default=None, alias="X-Casework-Api-Key"),
    settings: Settings = Depends(get_settings_dep),
) -> ModelChoice:
    """The models a request names, each one the operator offers (``chosen_model``: 422 else)."""
    return ModelChoice(
        model=chosen_model(settings, model),
        vision_model=chosen_model(settings, vision_model),
        api_key=api_key,
    )


def router(settings: Settings, run_factory: RunFactory | None = None) -> APIRouter:
    """The routes over ``settings``; ``run_factory(choice)`` builds a request's deps and run
    config (tests pass scripted models). The model headers (``ModelChoice``) pick provider,
    model and key for one request."""
    repos = DepsCache(open_repository)  # migrated once, not on every request

    def default_factory(choice: ModelChoice) -> tuple[HedDeps, RunConfig]:
        from casework.apps.hed.deps import build_deps

        deps = build_deps(settings, repo=repos.get(settings))
        config = RunConfig.of(
            settings, choice.model, vision=choice.vision_model, api_key=choice.api_key
        )
        if choice.model:  # a model the caller named that cannot be built is a 400 now
            config.models(ROLES["annotate"])  # not an error:model mid-run
        return deps, config

    factory = run_factory or default_factory
    api = APIRouter()

    _validate_routes(api)
    _annotate_events_routes(api, factory)
    _annotate_routes(api, factory)
    return api


def _validate_routes(api: APIRouter) -> None:
    """Validate HED strings, and uploaded sidecars and events files."""

    @api.post("/validate", dependencies=[allow("hed.strings.validate")])
    def validate_route(body: ValidateRequest) -> list[dict[str, Any]]:
        """Validate HED strings with the JS validator (hedtools as the fallback)."""
        return [
            r.to_dict()
            for r in service.validate_strings(
                body.hed, body.schema_version, validator=body.validator
            )
        ]

    @api.post("/validate/files", dependencies=[allow("hed.files.validate")])
    async def validate_files_route(
        sidecar: UploadFile | None = File(None, description="A BIDS sidecar (events.json)."),
        events: UploadFile | None = File(None, description="A BIDS events file (events.tsv)."),
        definitions: UploadFile | None = File(
            None, description="Extra definitions: a sidecar or a text file of definitions."
        ),
        schema_version: str = Form(DEFAULT_SCHEMA),
    ) -> dict[str, Any]:
        """Validate an uploaded sidecar and/or events file as hedtools' BIDS validation does;
        each issue with its code and where it is (file, column, level, row)."""
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            side = await _save(sidecar, folder, "events.json")
            table = await _save(events, folder, "events.tsv")
            defs = await _save(definitions, folder, "definitions.txt")
            report = await run_in_threadpool(
                service.validate_dataset,
                sidecar=side,
                events=table,
                schema=schema_version,
                definitions=defs,
            )
        return report.to_dict()


def _as_caller(
    factory: RunFactory, choice: ModelChoice, caller: Caller
) -> tuple[HedDeps, RunConfig]:
    """A request's deps and run config, run as its caller: the memory's answers, the model's
    demonstrations and the novelty scaling read the caller's own verified annotations (and
    shared ones), never another user's."""
    deps, config = factory(choice)
    return deps, replace(config, caller=caller)


def _annotate_events_routes(api: APIRouter, factory: RunFactory) -> None:
    """Annotate an uploaded events file: its sidecar's HED, validated with it."""

    @api.post("/annotate/events")
    async def annotate_events_route(
        events: UploadFile = File(..., description="A BIDS events file (events.tsv)."),
        sidecar: UploadFile | None = File(
            None, description="Its sidecar so far: descriptions, definitions and HED kept."
        ),
        schema_version: str = Form(DEFAULT_SCHEMA),
        strategy: Strategy = Form("cascade"),
        choice: ModelChoice = Depends(_choice),
        caller: Caller = allow("hed.annotation.run"),
    ) -> Any:
        """The sidecar's HED for the uploaded events file's categorical levels, validated
        with the events file; 422 with the validation (``result``) when it is not valid."""
        deps, config = await run_in_threadpool(_as_caller, factory, choice, caller)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            table = await _save(events, folder, "events.tsv")
            assert table is not None
            side = await _save(sidecar, folder, "events.json")
            out = folder / "annotated-sidecar.json"
            result = await run_in_threadpool(
                lambda: service.annotate_events(
                    table,
                    deps,
                    config,
                    sidecar=side,
                    schema=schema_version,
                    strategy=strategy,
                    out=out,
                )
            )
        data = result.to_dict() | {"out": None}  # the server's temporary file: not the caller's
        if result.out is None:
            invalid = InputError(
                "The sidecar written for these events is not valid HED with them; see "
                "result.validation.errors."
            )
            return JSONResponse(
                error_body(invalid) | {"result": data}, status_code=error_status(invalid)
            )
        return data


def _annotate_routes(api: APIRouter, factory: RunFactory) -> None:
    """Annotate a description or an image: the whole state back, or streamed as SSE."""

    @api.post("/annotate")
    def annotate_route(
        body: AnnotateRequest,
        choice: ModelChoice = Depends(_choice),
        caller: Caller = allow("hed.annotation.run"),
    ) -> Any:
        """Annotate a description (or a base64 image) with a strategy; the whole state back.
        A model that fails mid-run answers 502 with the state reached (nothing is stored)."""
        deps, config = _as_caller(factory, choice, caller)
        input, image_text = _prepare(body, config)
        decision = service.annotate(input, deps, config, strategy=body.strategy)
        data = decision_json(decision)
        if image_text:
            data["image_description"] = image_text
        if decision.run is not None and decision.run.ended_by == EndReason.ERROR_MODEL:
            failed = ModelError(
                f"The model failed mid-run ({decision.run.detail}); try again or another model."
            )
            return JSONResponse(
                error_body(failed) | {"result": data}, status_code=error_status(failed)
            )
        return data

    @api.post("/annotate/stream")
    async def annotate_stream(
        body: AnnotateRequest,
        choice: ModelChoice = Depends(_choice),
        caller: Caller = allow("hed.annotation.run"),
    ) -> EventSourceResponse:
        """SSE from LangGraph's ``astream_events``: ``model`` (an agent's model starts),
        ``token`` (streamed text), ``step`` (a node finished, with the state it left), then
        ``complete`` with the decision (or ``error``)."""
        deps, config = await run_in_threadpool(_as_caller, factory, choice, caller)
        input, image_text = await run_in_threadpool(_prepare, body, config)
        stream = service.annotation_stream(input, deps, config, body.strategy)

        async def events() -> AsyncIterator[ServerEvent]:
            async for event in stream:
                if event["type"] != "complete":
                    yield ServerEvent(event, event=event["type"])
                    continue
                decision = event["decision"]  # stored by the service when it finished
                data = decision_json(decision)
                if image_text:
                    data["image_description"] = image_text
                if decision.run.ended_by == EndReason.ERROR_MODEL:
                    yield ServerEvent({"error": decision.run.detail, "result": data}, event="error")
                else:
                    yield ServerEvent(data, event="complete")

        return sse_response(events())
