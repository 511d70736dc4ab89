"""HTTP routes of the hed app (to be mounted under ``/hed``): validate, annotate, and the
annotation run's progress as SSE.

Thin: each route calls ``validation`` / ``service`` and maps CaseworkError to HTTP (bad input:
422, missing model configuration: 400). Not registered in the AppSpec yet: the router
signature is being settled on the platform branch.
"""

from __future__ import annotations

import base64
import binascii
import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

from fastapi import APIRouter, Header, HTTPException
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedInput
from casework.apps.hed.rules import MAX_DESCRIPTION_CHARS
from casework.apps.hed.validation import DEFAULT_SCHEMA
from casework.errors import CaseworkError, ConfigError, InputError

__all__ = ["AnnotateRequest", "ValidateRequest", "router"]

DepsFactory = Callable[[str | None], HedDeps]
"""``factory(model_override)`` -> deps for one request."""


class ValidateRequest(BaseModel):
    hed: list[str] = Field(min_length=1, max_length=1000, description="HED strings.")
    schema_version: str = DEFAULT_SCHEMA
    validator: Literal["auto", "js", "python"] = "auto"


class AnnotateRequest(BaseModel):
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS * 2)
    schema_version: str = DEFAULT_SCHEMA
    run_assessment: bool = False
    strategy: Literal["loop", "loop-no-eval", "one-shot"] = "loop"
    image_base64: str | None = Field(
        default=None, description="An image for the vision agent (PNG, JPEG, GIF or WebP)."
    )


def _default_deps(model: str | None) -> HedDeps:
    from casework.apps.hed.deps import build_deps

    return build_deps(model=model)


def _http(exc: CaseworkError) -> HTTPException:
    return HTTPException(status_code=400 if isinstance(exc, ConfigError) else 422, detail=str(exc))


def _prepare(body: AnnotateRequest, deps: HedDeps) -> tuple[HedInput, str]:
    description, image_text = body.description, ""
    if body.image_base64:
        from casework.apps.hed.vision import describe_image

        try:
            data = base64.b64decode(body.image_base64, validate=True)
        except (binascii.Error, ValueError):
            raise InputError(
                "image_base64 is not valid base64; send the image's bytes base64-encoded."
            ) from None
        image_text = describe_image(data, deps, name="image_base64")
        description = " ".join(filter(None, [description, image_text]))
    return (
        HedInput(
            description=description,
            schema_version=body.schema_version,
            run_assessment=body.run_assessment,
        ),
        image_text,
    )


def router(deps_factory: DepsFactory | None = None) -> APIRouter:
    """The routes; ``deps_factory`` builds a request's deps (tests pass scripted models).
    The ``X-Casework-Model`` header picks the model for one request."""
    from casework.apps.hed.repository import decision_json
    from casework.apps.hed.service import annotate

    factory = deps_factory or _default_deps
    api = APIRouter()

    @api.post("/validate")
    def validate_route(body: ValidateRequest) -> list[dict[str, Any]]:
        from casework.apps.hed.validation import validate_many

        try:
            return [
                r.to_dict()
                for r in validate_many(body.hed, body.schema_version, validator=body.validator)
            ]
        except CaseworkError as exc:
            raise _http(exc) from exc

    @api.post("/annotate")
    def annotate_route(
        body: AnnotateRequest, x_casework_model: str | None = Header(default=None)
    ) -> dict[str, Any]:
        try:
            deps = factory(x_casework_model)
            input, image_text = _prepare(body, deps)
            data = decision_json(annotate(input, deps, strategy=body.strategy))
        except CaseworkError as exc:
            raise _http(exc) from exc
        if image_text:
            data["image_description"] = image_text
        return data

    @api.post("/annotate/stream")
    def annotate_stream(
        body: AnnotateRequest, x_casework_model: str | None = Header(default=None)
    ) -> EventSourceResponse:
        """SSE: one ``step`` event per finished node, then ``complete`` (or ``error``)."""
        try:
            deps = factory(x_casework_model)
            input, image_text = _prepare(body, deps)
            from casework.apps.hed.rules import check_description
            from casework.apps.hed.validation import check_schema

            check_description(input.description)
            check_schema(input.schema_version)
        except CaseworkError as exc:
            raise _http(exc) from exc
        events: queue.Queue[dict[str, Any] | None] = queue.Queue()

        def on_step(node: str, state: Any) -> None:
            events.put(
                {
                    "event": "step",
                    "data": {
                        "node": node,
                        "annotation": state.get("current_annotation", ""),
                        "validation_status": state.get("validation_status"),
                        "is_faithful": state.get("is_faithful"),
                        "total_iterations": state.get("total_iterations", 0),
                        "validation_attempts": state.get("validation_attempts", 0),
                    },
                }
            )

        def work() -> None:
            try:
                decision = annotate(input, deps, strategy=body.strategy, on_step=on_step)
                data = decision_json(decision)
                if image_text:
                    data["image_description"] = image_text
                events.put({"event": "complete", "data": data})
            except CaseworkError as exc:
                events.put({"event": "error", "data": {"error": str(exc)}})
            finally:
                events.put(None)

        threading.Thread(target=work, daemon=True).start()

        def stream() -> Iterator[dict[str, str]]:
            while (item := events.get()) is not None:
                yield {"event": item["event"], "data": json.dumps(item["data"], default=str)}

        return EventSourceResponse(stream())

    return api
