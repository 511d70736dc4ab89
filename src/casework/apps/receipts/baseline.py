"""The similarity validator the agent replaces: edge cases, then neighbour votes.

This is the spec's ``_validate_suggestion_with_similarity`` as a non-LLM decision with the
agent's decision type, so the two can be compared on one dataset. It keeps the old behaviour
on purpose: an edge-case match rejects at once; otherwise a single vector query decides by
how many similar words carry the suggested label; when the vector store fails, validation
fails (NEEDS_REVIEW at confidence 0) — the weakness the agent is meant to fix.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from casework.apps.receipts import evidence
from casework.apps.receipts.models import LabelDecision, Verdict, WordRef
from casework.apps.receipts.policy import apply_policy
from casework.apps.receipts.vectors import Neighbour, VectorsUnavailable
from casework.runtime.calibration import Calibration
from casework.runtime.decision import EndReason, RunInfo, ToolCallRecord
from casework.runtime.usage import Usage

if TYPE_CHECKING:
    from casework.apps.receipts.deps import ReceiptsDeps

__all__ = ["NEIGHBOURS", "baseline_decide", "vote"]

NEIGHBOURS = 10
VALID_SHARE = 0.6
INVALID_SHARE = 0.2


def vote(found: list[Neighbour], label: str) -> float:
    """Similarity-weighted share of neighbours carrying ``label`` as VALID/PENDING (an
    INVALID ``label`` counts against it; unlabelled words count as other)."""
    support = sum(
        max(nb.similarity, 0.0)
        for nb in found
        if nb.label == label and nb.status in ("VALID", "PENDING")
    )
    total = sum(max(nb.similarity, 0.0) for nb in found)
    return support / total if total > 0 else 0.0


def baseline_decide(
    deps: ReceiptsDeps, ref: WordRef, *, calibration: Calibration | None = None
) -> LabelDecision:
    """Edge cases, then the neighbour vote; the policy applied, ``decision.run`` filled."""
    started = time.perf_counter()
    calls = [ToolCallRecord("check_edge_cases", {}, "baseline-1")]
    unavailable: list[str] = []
    edge = evidence.check_edge_cases(deps, ref)
    decision: Verdict
    if edge["known_invalid"]:
        decision, confidence = "INVALID", 95.0
        reasoning = f"Edge case: {edge['matches'][0]['reason']}"
    else:
        calls.append(ToolCallRecord("search_similar_words", {"n": NEIGHBOURS}, "baseline-2"))
        try:
            found = evidence.neighbours(deps, ref, n=NEIGHBOURS)
        except VectorsUnavailable as exc:
            found = None
            unavailable.append("search_similar_words")
            calls[-1] = ToolCallRecord(
                "search_similar_words", {"n": NEIGHBOURS}, "baseline-2", ok=False, output=str(exc)
            )
            decision, confidence = "NEEDS_REVIEW", 0.0
            reasoning = f"Similarity validation failed: {exc}."
        if found is not None:
            share = vote(found, ref.suggested_label)
            with_label = sum(nb.label == ref.suggested_label for nb in found)
            if not found:
                decision, confidence, reasoning = "NEEDS_REVIEW", 0.0, "No similar words found."
            elif share >= VALID_SHARE:
                decision, confidence = "VALID", round(50 + 50 * share, 1)
                reasoning = f"{with_label} of {len(found)} similar words carry {ref.suggested_label} (weighted share {share:.2f})."
            elif share <= INVALID_SHARE:
                decision, confidence = "INVALID", round(50 + 50 * (1 - share), 1)
                reasoning = f"Only {with_label} of {len(found)} similar words carry {ref.suggested_label} (weighted share {share:.2f})."
            else:
                decision, confidence = "NEEDS_REVIEW", 50.0
                reasoning = f"Similar words disagree: {with_label} of {len(found)} carry {ref.suggested_label} (weighted share {share:.2f})."
    final, confidence, downgraded = apply_policy(decision, confidence, calibration)
    usage = Usage(tool_calls=len(calls), wall_seconds=time.perf_counter() - started)
    return LabelDecision(
        verdict=final,
        confidence=confidence,
        reasoning=reasoning,
        raw_verdict=decision,
        policy_applied=downgraded,
        calibrated_confidence=round(calibration.apply(confidence), 2)
        if calibration is not None
        else None,
        unavailable=unavailable,
        run=RunInfo(ended_by=EndReason.RULES, strategy="baseline", tool_calls=calls, usage=usage),
    )
