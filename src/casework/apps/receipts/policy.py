"""The decision policy, enforced after the agent (not only asked for in the prompt).

* A strategy may answer VALID or INVALID only with confidence above 80; anything else
  becomes NEEDS_REVIEW (``apply_policy``). When a calibration was fitted on an evaluation run
  (``casework eval calibrate RUN``), the 80 applies to the calibrated confidence.
* The harmoniser applies a fix by confidence, as the spec's ``apply_fixes_from_results``:
  a validated suggestion creates the new label; a validation below 50 marks the old label
  INVALID (wrong, but the right one is unknown); everything in between goes to review
  (``fix_outcome``).
"""

from __future__ import annotations

from casework.apps.receipts.models import DECISION_THRESHOLD, FixOutcome, Verdict
from casework.runtime.calibration import Calibration

__all__ = ["INVALIDATE_BELOW", "apply_policy", "fix_outcome"]
INVALIDATE_BELOW = 50.0
"""Below this validation confidence an outlier's label is marked INVALID."""


def apply_policy(
    decision: Verdict, confidence: float, calibration: Calibration | None = None
) -> tuple[Verdict, float, bool]:
    """(decision, confidence, downgraded). Confidence is clamped to 0-100; with a
    ``calibration`` the threshold acts on the calibrated confidence (how often decisions
    stated at this confidence were right), the returned confidence stays the stated one."""
    confidence = max(0.0, min(100.0, float(confidence)))
    effective = calibration.apply(confidence) if calibration is not None else confidence
    if decision in ("VALID", "INVALID") and effective <= DECISION_THRESHOLD:
        return "NEEDS_REVIEW", confidence, True
    return decision, confidence, False


def fix_outcome(
    decision: Verdict, confidence: float, *, has_suggestion: bool = True, decided: bool = True
) -> FixOutcome:
    """What to do with an outlier given the validation of its suggested replacement.

    With a suggestion (the spec's three outcomes): VALID above the threshold -> RELABEL;
    confidence below 50 -> MARK_INVALID; otherwise -> REVIEW.
    Without one, the outlier's current label was validated instead: VALID above the
    threshold -> KEEP; INVALID above it or confidence below 50 -> MARK_INVALID; else REVIEW.
    A validation that did not decide (a run that hit a limit) always goes to REVIEW: a
    person, not a failed run, marks a label invalid.
    """
    if not decided:
        return FixOutcome.REVIEW
    decision, confidence, _ = apply_policy(decision, confidence)
    if has_suggestion:
        if decision == "VALID":
            return FixOutcome.RELABEL
        if confidence < INVALIDATE_BELOW:
            return FixOutcome.MARK_INVALID
        return FixOutcome.REVIEW
    if decision == "VALID":
        return FixOutcome.KEEP
    if decision == "INVALID" or confidence < INVALIDATE_BELOW:
        return FixOutcome.MARK_INVALID
    return FixOutcome.REVIEW
