"""HTTP routes of the receipts app (mounted under ``/receipts``): validate a word, the review queue.

Thin: each route calls ``service`` and maps CaseworkError to HTTP (unknown id: 404; bad input
or a failed model: 422).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from casework.apps.receipts.models import LABEL_DEFINITIONS, Label, Verdict
from casework.errors import CaseworkError, NotFoundError
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
        default="agent", description="A strategy of the app: agent, baseline, ... (422 if unknown)."
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
    reviewer: str = Field(default="reviewer", max_length=100)
    note: str = Field(default="", max_length=1000)


class ReviewItem(Label):
    receipt: str
    instead_of: str | None = None


def _http(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except CaseworkError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc


def router(deps_factory: Callable[[], Any] | None = None) -> APIRouter:
    """The routes; ``deps_factory`` (tests) defaults to deps on the configured stores, built once."""
    api = APIRouter(tags=["receipts"])
    holder: dict[str, Any] = {}
    lock = threading.Lock()

    def deps() -> Any:
        with lock:
            if "deps" not in holder:
                if deps_factory is not None:
                    holder["deps"] = deps_factory()
                else:
                    from casework.apps.receipts.deps import build_deps

                    holder["deps"] = build_deps()
            return holder["deps"]

    @api.get("/receipts")
    def list_receipts(merchant: str | None = None) -> list[dict[str, Any]]:
        """Imported receipts with the slugs the other routes accept."""
        return _http(
            lambda: [
                r.model_dump(mode="json") | {"key": r.key}
                for r in deps().repo.list_receipts(merchant=merchant)
            ]
        )

    @api.post("/validate")
    def validate(body: ValidateRequest) -> ValidateResponse:
        """Validate a suggested label for one word with one of the app's strategies."""
        from casework.apps.receipts.deps import settings_models
        from casework.apps.receipts.models import LabelInput
        from casework.apps.receipts.service import record_result
        from casework.apps.receipts.strategies import decision_json, resolve_input, strategy

        def run() -> ValidateResponse:
            d = deps()
            if body.model:
                d = d.with_models(settings_models(d.settings, body.model))
            request = LabelInput(
                receipt=body.receipt,
                line_id=body.line_id,
                word_id=body.word_id,
                suggested_label=body.label,
                reason=body.reason,
            )
            ref = resolve_input(d, request)
            result = strategy(body.strategy)(request, d)
            recorded = record_result(d, ref, result, proposed_by="api") if body.record else []
            return ValidateResponse(
                **decision_json(ref, result), recorded_label_ids=[lab.id for lab in recorded]
            )

        return _http(run)

    @api.get("/review")
    def review_queue(merchant: str | None = None, limit: int = 100) -> list[ReviewItem]:
        """Labels waiting for a person (NEEDS_REVIEW)."""

        def run() -> list[ReviewItem]:
            d = deps()
            slugs = {r.id: r.slug for r in d.repo.list_receipts()}
            items = []
            for lab in d.repo.review_queue(merchant=merchant, limit=max(1, min(limit, 500))):
                instead = (
                    d.repo.get_label(lab.consolidated_from_id).label_type
                    if lab.consolidated_from_id
                    else None
                )
                items.append(
                    ReviewItem(
                        **lab.model_dump(),
                        receipt=slugs.get(lab.receipt_pk, ""),
                        instead_of=instead,
                    )
                )
            return items

        return _http(run)

    def _decide(label_id: int, body: ReviewDecision | None, accept: bool) -> list[Label]:
        from casework.apps.receipts.service import review_decide

        body = body or ReviewDecision()
        return _http(
            lambda: review_decide(
                deps(), label_id, accept=accept, reviewer=body.reviewer, note=body.note
            )
        )

    @api.post("/review/{label_id}/accept")
    def accept(label_id: int, body: ReviewDecision | None = None) -> list[Label]:
        """Accept: the label becomes VALID (and the one it replaces INVALID). Returns the new rows."""
        return _decide(label_id, body, True)

    @api.post("/review/{label_id}/reject")
    def reject(label_id: int, body: ReviewDecision | None = None) -> list[Label]:
        """Reject: the label becomes INVALID. Returns the new rows."""
        return _decide(label_id, body, False)

    @api.get("/words/{receipt}/{line_id}/{word_id}/labels")
    def word_history(receipt: str, line_id: int, word_id: int) -> list[Label]:
        """The audit trail of one word."""

        def run() -> list[Label]:
            d = deps()
            r = d.repo.resolve_receipt(receipt)
            return d.repo.labels_for_word(d.repo.get_word(r.id, line_id, word_id).id)

        return _http(run)

    return api
