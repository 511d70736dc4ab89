"""HTTP routes of the receipts app (mounted under ``/receipts``): validate a word, the review queue.

Thin: each route calls ``service`` and maps CaseworkError to HTTP (unknown id: 404; a shared
receipt the caller may not change: 403; bad input or a failed model: 422).

Every request gets deps scoped to its caller (``ReceiptsDeps.for_tenant``): a receipt, word or
label of another user answers 404 with the same sentence as one that does not exist.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field, TypeAdapter

from casework.apps.receipts.models import LABEL_DEFINITIONS, Label, Verdict
from casework.config import Settings
from casework.errors import CaseworkError, NotFoundError
from casework.runtime.context import (
    Caller,
    PermissionDenied,
    Role,
    current_caller,
    get_settings_dep,
    require_role,
)
from casework.runtime.decision import Evidence

__all__ = ["ReviewDecision", "ValidateRequest", "ValidateResponse", "router"]

T = TypeVar("T")


class ValidateRequest(BaseModel):
    receipt: str = Field(description="Receipt slug or key (image_id#n).")
    line_id: int
    word_id: int
    label: str = Field(
        description=f"Suggested label, e.g. {', '.join(list(LABEL_DEFINITIONS)[:4])}."
    )
    strategy: str = Field(
        default="cascade",
        description="A strategy of the app: cascade, rules, baseline, choice, agent (422 if unknown).",
    )
    model: str | None = Field(
        default=None, description="provider:name for the agent; default the specialist model."
    )
    reason: str = Field(default="", max_length=500, description="Why the label was suggested.")
    record: bool = Field(default=False, description="Append the decision to the label history.")


class ValidateResponse(BaseModel):
    """The decision, the word it is about, and how it was reached."""

    verdict: Verdict
    confidence: float
    reasoning: str
    evidence: list[Evidence] = Field(default_factory=list)
    raw_verdict: Verdict | None = None
    policy_applied: bool = False
    calibrated_confidence: float | None = None
    unavailable: list[str] = Field(default_factory=list)
    receipt: str
    line_id: int
    word_id: int
    word_text: str
    suggested_label: str
    strategy: str | None = None
    model: str | None = None
    ended_by: str | None = None
    tool_calls: list[str] = Field(default_factory=list)
    seconds: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    recorded_label_ids: list[int] = Field(default_factory=list)


class ReviewDecision(BaseModel):
    """The reviewer is the authenticated caller, never a name in the body."""

    note: str = Field(default="", max_length=1000)


class ReviewItem(Label):
    receipt: str
    instead_of: str | None = None


_REVIEW_ITEMS = TypeAdapter(list[ReviewItem])
MAX_CACHED_ANSWERS = 256


def _http(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except PermissionDenied as exc:
        raise HTTPException(status_code=403, detail=str(exc)) from exc
    except CaseworkError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc


def router(
    settings: Settings | None = None, deps_factory: Callable[[], Any] | None = None
) -> APIRouter:
    """The routes. Nothing is opened at mount time: deps are built on first use from the settings
    each request carries (``get_settings_dep``), once per database, and scoped to the caller on
    every request; ``deps_factory`` for tests."""
    api = APIRouter(tags=["receipts"])
    holder: dict[str, Any] = {}
    lock = threading.Lock()

    def build(served: Settings) -> Any:
        with lock:
            if served.db_url not in holder:
                if deps_factory is not None:
                    holder[served.db_url] = deps_factory()
                else:
                    from casework.apps.receipts.deps import build_deps

                    holder[served.db_url] = build_deps(served)
            return holder[served.db_url]

    async def deps(
        served: Settings = Depends(get_settings_dep), caller: Caller = Depends(current_caller)
    ) -> Any:
        # On the event loop: after the first request (which opens the stores on a worker
        # thread) this is a dict look-up, cheaper than the hop a plain ``def`` costs.
        shared: Any = holder.get(served.db_url)
        if shared is None:
            shared = await run_in_threadpool(build, served)
        return shared.for_tenant(caller)

    # Read routes answer from JSON cached per store version (receipts and labels are
    # append-only, so an unchanged version means an unchanged answer): a hit is one small query.
    # The version is the whole store's, so any tenant's change refreshes every tenant's answers.
    answers: dict[Hashable, tuple[tuple[int, int], bytes]] = {}

    async def cached_json(d: Any, key: Hashable, compute: Callable[[Any], bytes]) -> Response:
        # One store per database the requests are served from, one answer per tenant of it.
        tenant = d.tenant.user_id if d.tenant is not None else None
        key = (id(d.repo.engine), tenant, key)
        version = d.repo.version()
        hit = answers.get(key)
        if hit is None or hit[0] != version:
            body = await run_in_threadpool(_http, lambda: compute(d))
            if len(answers) >= MAX_CACHED_ANSWERS:
                answers.clear()
            hit = answers[key] = (version, body)
        return Response(hit[1], media_type="application/json")

    @api.get("/receipts", response_model=list[dict[str, Any]])
    async def list_receipts(merchant: str | None = None, d: Any = Depends(deps)) -> Response:
        """Imported receipts with the slugs the other routes accept."""

        def run(d: Any) -> bytes:
            rows = [
                r.model_dump(mode="json") | {"key": r.key}
                for r in d.repo.list_receipts(merchant=merchant)
            ]
            return json.dumps(rows, separators=(",", ":")).encode()

        return await cached_json(d, ("receipts", merchant), run)

    @api.post("/validate")
    def validate(body: ValidateRequest, served: Any = Depends(deps)) -> ValidateResponse:
        """Validate a suggested label for one word with one of the app's strategies."""
        from casework.apps.receipts.models import LabelInput
        from casework.apps.receipts.service import record_result
        from casework.apps.receipts.strategies import decision_json, resolve_input, strategy
        from casework.runtime.runconfig import RunConfig

        def run() -> ValidateResponse:
            d = served
            config = RunConfig.of(d.settings, body.model, caller=d.tenant)
            request = LabelInput(
                receipt=body.receipt,
                line_id=body.line_id,
                word_id=body.word_id,
                suggested_label=body.label,
                reason=body.reason,
            )
            ref = resolve_input(d, request)
            if body.record:  # refuse before the model runs, not after
                d.repo.require_writable(d.repo.get_receipt_by_key(ref.image_id, ref.receipt_id).id)
            result = strategy(body.strategy)(request, d, config)
            recorded = record_result(d, ref, result, proposed_by="api") if body.record else []
            return ValidateResponse(
                **decision_json(ref, result), recorded_label_ids=[lab.id for lab in recorded]
            )

        return _http(run)

    @api.get("/review", response_model=list[ReviewItem])
    async def review_queue(
        merchant: str | None = None, limit: int = 100, d: Any = Depends(deps)
    ) -> Response:
        """Labels waiting for a person (NEEDS_REVIEW)."""
        limit = max(1, min(limit, 500))

        def run(d: Any) -> bytes:
            queue = d.repo.review_queue(merchant=merchant, limit=limit)
            slugs = d.repo.slugs()
            replaced = d.repo.label_types(
                lab.consolidated_from_id for lab in queue if lab.consolidated_from_id
            )
            items = [
                ReviewItem(
                    **lab.model_dump(),
                    receipt=slugs.get(lab.receipt_pk, ""),
                    instead_of=replaced.get(lab.consolidated_from_id or 0),
                )
                for lab in queue
            ]
            return _REVIEW_ITEMS.dump_json(items)

        return await cached_json(d, ("review", merchant, limit), run)

    def _decide(
        d: Any, caller: Caller, label_id: int, body: ReviewDecision | None, accept: bool
    ) -> list[Label]:
        from casework.apps.receipts.service import review_decide

        note = body.note if body else ""
        return _http(
            lambda: review_decide(d, label_id, accept=accept, reviewer=caller.name, note=note)
        )

    reviewer = require_role(Role.REVIEWER)

    @api.post("/review/{label_id}/accept")
    def accept(
        label_id: int,
        body: ReviewDecision | None = None,
        d: Any = Depends(deps),
        caller: Caller = Depends(reviewer),
    ) -> list[Label]:
        """Accept: the label becomes VALID (and the one it replaces INVALID). Returns the new rows."""
        return _decide(d, caller, label_id, body, True)

    @api.post("/review/{label_id}/reject")
    def reject(
        label_id: int,
        body: ReviewDecision | None = None,
        d: Any = Depends(deps),
        caller: Caller = Depends(reviewer),
    ) -> list[Label]:
        """Reject: the label becomes INVALID. Returns the new rows."""
        return _decide(d, caller, label_id, body, False)

    @api.get("/words/{receipt}/{line_id}/{word_id}/labels")
    def word_history(
        receipt: str, line_id: int, word_id: int, d: Any = Depends(deps)
    ) -> list[Label]:
        """The audit trail of one word."""

        def run() -> list[Label]:
            r = d.repo.resolve_receipt(receipt)
            return d.repo.labels_for_word(d.repo.get_word(r.id, line_id, word_id).id)

        return _http(run)

    return api
