"""HTTP routes of the receipts app (mounted under ``/receipts``): validate a word, the review queue.

Thin: each route calls ``service``; a CaseworkError it raises is answered by the one error
table of ``casework.apikit`` (unknown id: 404; a shared receipt the caller may not change: 403;
bad input: 422; a failed model: 502).

Every request gets deps scoped to its caller (``ReceiptsDeps.for_tenant``): a receipt, word or
label of another user answers 404 with the same sentence as one that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from fastapi import APIRouter, Depends, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field, TypeAdapter

from casework.apikit import DepsCache, allow, chosen_model, current_caller
from casework.apps.receipts import service
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.models import LABEL_DEFINITIONS, Label, LabelInput, Verdict
from casework.config import Settings
from casework.runtime.context import Caller, Role
from casework.runtime.decision import Evidence
from casework.runtime.runconfig import RunConfig

__all__ = ["ReviewDecision", "ValidateRequest", "ValidateResponse", "router"]


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
Deps = Callable[..., Awaitable[Any]]
"""The deps of a request, scoped to its caller."""
CachedJson = Callable[[Any, Hashable, Callable[[Any], bytes]], Awaitable[Response]]
"""A read route's JSON answer, cached per store version."""


def router(
    settings: Settings | None = None, deps_factory: Callable[[], Any] | None = None
) -> APIRouter:
    """The routes. Nothing is opened at mount time: deps are built on first use from the settings
    each request carries (``get_settings_dep``), once per database, and scoped to the caller on
    every request; ``deps_factory`` for tests."""
    api = APIRouter(tags=["receipts"])
    cache = DepsCache(build_deps, deps_factory)

    async def deps(
        shared: Any = Depends(cache.dependency), caller: Caller = Depends(current_caller)
    ) -> Any:
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
            body = await run_in_threadpool(compute, d)
            if len(answers) >= MAX_CACHED_ANSWERS:
                answers.clear()
            hit = answers[key] = (version, body)
        return Response(hit[1], media_type="application/json")

    _receipt_routes(api, deps, cached_json)
    _review_routes(api, deps, cached_json)
    return api


def _receipt_routes(api: APIRouter, deps: Deps, cached_json: CachedJson) -> None:
    """List receipts; validate a suggested label."""
    own_reads = allow("receipts.receipts.read", Role.USER, own=True)

    @api.get("/receipts", response_model=list[dict[str, Any]], dependencies=[own_reads])
    async def list_receipts(merchant: str | None = None, d: Any = Depends(deps)) -> Response:
        """Imported receipts with the slugs the other routes accept."""

        def run(d: Any) -> bytes:
            rows = [
                r.model_dump(mode="json") | {"key": r.key}
                for r in d.repo.list_receipts(merchant=merchant)
            ]
            return json.dumps(rows, separators=(",", ":")).encode()

        return await cached_json(d, ("receipts", merchant), run)

    @api.post("/validate", dependencies=[allow("receipts.label.validate", Role.USER, own=True)])
    def validate(body: ValidateRequest, served: Any = Depends(deps)) -> ValidateResponse:
        """Validate a suggested label for one word with one of the app's strategies."""
        d = served
        model = chosen_model(d.settings, body.model)
        config = RunConfig.of(d.settings, model, caller=d.tenant)
        request = LabelInput(
            receipt=body.receipt,
            line_id=body.line_id,
            word_id=body.word_id,
            suggested_label=body.label,
            reason=body.reason,
        )
        done = service.validate_word(
            d, request, config, body.strategy, record=body.record, proposed_by=d.tenant.name
        )
        return ValidateResponse(
            **done.to_json(), recorded_label_ids=[lab.id for lab in done.recorded]
        )


def _review_routes(api: APIRouter, deps: Deps, cached_json: CachedJson) -> None:
    """The review queue, a person's decision on a label, and a word's history."""

    @api.get(
        "/review",
        response_model=list[ReviewItem],
        dependencies=[allow("receipts.review.list", Role.USER, own=True)],
    )
    async def review_queue(
        merchant: str | None = None, limit: int = 100, d: Any = Depends(deps)
    ) -> Response:
        """Labels waiting for a person (NEEDS_REVIEW)."""
        limit = max(1, min(limit, 500))

        def run(d: Any) -> bytes:
            items = [
                ReviewItem(**e.label.model_dump(), receipt=e.receipt, instead_of=e.instead_of)
                for e in service.review_entries(d, merchant=merchant, limit=limit)
            ]
            return _REVIEW_ITEMS.dump_json(items)

        return await cached_json(d, ("review", merchant, limit), run)

    @api.post("/review/{label_id}/accept")
    def accept(
        label_id: int,
        body: ReviewDecision | None = None,
        d: Any = Depends(deps),
        caller: Caller = allow("receipts.review.decide", Role.REVIEWER, own=True),
    ) -> list[Label]:
        """Accept: the label becomes VALID (and the one it replaces INVALID). Returns the new rows."""
        return _decide(d, caller, label_id, body, True)

    @api.post("/review/{label_id}/reject")
    def reject(
        label_id: int,
        body: ReviewDecision | None = None,
        d: Any = Depends(deps),
        caller: Caller = allow("receipts.review.decide", Role.REVIEWER, own=True),
    ) -> list[Label]:
        """Reject: the label becomes INVALID. Returns the new rows."""
        return _decide(d, caller, label_id, body, False)

    @api.get(
        "/words/{receipt}/{line_id}/{word_id}/labels",
        dependencies=[allow("receipts.word.history", Role.USER, own=True)],
    )
    def word_history(
        receipt: str, line_id: int, word_id: int, d: Any = Depends(deps)
    ) -> list[Label]:
        """The audit trail of one word."""
        return service.word_history(d, receipt, line_id, word_id).labels


def _decide(
    d: Any, caller: Caller, label_id: int, body: ReviewDecision | None, accept: bool
) -> list[Label]:
    note = body.note if body else ""
    return service.review_decide(d, label_id, accept=accept, reviewer=caller.name, note=note)
