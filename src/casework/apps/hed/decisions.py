"""A HED run's state and decision: the state a run starts from (``initial_state``) and, from
the state its graph reached, how the run ended (the loop's caps read as limits) and the
verdict, confidence and evidence of the annotation it left."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from casework.apps.hed.models import HedAnnotationState, HedDecision, HedInput
from casework.apps.hed.rules import check_description, outcome
from casework.apps.hed.validation import check_schema
from casework.runtime import EndReason, Evidence

if TYPE_CHECKING:
    from casework.apps.hed.deps import HedDeps
    from casework.apps.hed.validation import ValidationResult

__all__ = ["checked_once", "end_reason", "initial_state", "to_decision"]


def end_reason(state: HedAnnotationState, error: str = "") -> tuple[EndReason, str]:
    """How a graph run ended, from the state it reached: the loop's caps read as limits."""
    is_valid = bool(state.get("is_valid"))
    if error:
        return EndReason.ERROR_MODEL, error
    if state.get("validation_status") == "max_attempts_reached":
        attempts = state["max_validation_attempts"]
        return (
            EndReason.LIMIT_MODEL_CALLS,
            f"max_validation_attempts ({attempts}) without valid HED",
        )
    iterations = state.get("max_total_iterations")
    if is_valid and state.get("is_faithful") is False:
        return (
            EndReason.LIMIT_MODEL_CALLS,
            f"max_total_iterations ({iterations}) without a faithful annotation",
        )
    if not is_valid:
        return EndReason.LIMIT_MODEL_CALLS, f"max_total_iterations ({iterations}) without valid HED"
    return EndReason.SUBMIT, ""


def to_decision(state: HedAnnotationState, *, error: str = "") -> HedDecision:
    """The decision the state stands for (its ``run`` is the harness's, or the rules')."""
    is_valid = bool(state.get("is_valid"))
    result = outcome(is_valid, state.get("is_faithful"), state.get("is_complete"))
    attempts = state.get("validation_attempts", 0)
    iterations = state.get("total_iterations", 0)
    annotation = state.get("current_annotation", "")
    reasoning = (
        f"{result.final_status.capitalize()} after {attempts} validation attempt(s) and "
        f"{iterations} annotation(s)"
        + (f" ({state.get('validator')} validator)" if state.get("validator") else "")
        + "."
    )
    if error:
        reasoning += f" The run stopped early: {error}"
    evidence = [
        Evidence(
            source=f"validator:{state.get('validator') or 'none'}",
            ref=f"HED {state.get('schema_version', '')}",
            summary=(
                f"{len(state.get('validation_errors', []))} error(s), "
                f"{len(state.get('validation_warnings', []))} warning(s)"
            ),
            fields={"annotation": annotation, "errors": state.get("validation_errors", [])},
        )
    ]
    if state.get("evaluation_feedback"):
        evidence.append(
            Evidence(
                source="evaluation",
                ref=f"iteration {iterations}",
                summary=state["evaluation_feedback"][:400],
                fields={"faithful": state.get("is_faithful")},
            )
        )
    if state.get("assessment_feedback"):
        evidence.append(
            Evidence(
                source="assessment",
                ref=f"iteration {iterations}",
                summary=state["assessment_feedback"][:400],
                fields={"complete": state.get("is_complete")},
            )
        )
    return HedDecision(
        verdict=result.verdict,  # type: ignore[arg-type]
        confidence=result.confidence,
        reasoning=reasoning[:1200],
        evidence=evidence,
        description=state.get("input_description", ""),
        annotation=annotation,
        schema_version=state.get("schema_version", ""),
        validation_status=state.get("validation_status", "pending"),
        validation_errors=state.get("validation_errors", []),
        validation_warnings=state.get("validation_warnings", []),
        validation_errors_augmented=state.get("validation_errors_augmented", []),
        validator=state.get("validator", ""),
        validator_note=state.get("validator_note", ""),
        is_valid=is_valid,
        is_faithful=state.get("is_faithful"),
        is_complete=state.get("is_complete"),
        evaluation_feedback=state.get("evaluation_feedback", ""),
        assessment_feedback=state.get("assessment_feedback", ""),
        portability_warnings=state.get("portability_warnings", []),
        validation_attempts=attempts,
        total_iterations=iterations,
        first_try_valid=state.get("first_try_valid"),
        final_status=result.final_status,
        history=state.get("history", []),
    )


def initial_state(
    input: HedInput, deps: HedDeps, *, evaluation: bool, attempts: int, iterations: int
) -> HedAnnotationState:
    """The state a run starts from: the checked input, nothing tried yet."""
    return {
        "messages": [],
        "input_description": check_description(input.description),
        "schema_version": check_schema(input.schema_version),
        "definitions": list(input.definitions),
        "current_annotation": "",
        "validation_status": "pending",
        "validation_errors": [],
        "validation_warnings": [],
        "validation_errors_augmented": [],
        "is_valid": False,
        "is_faithful": None,
        "is_complete": None,
        "evaluation_feedback": "",
        "assessment_feedback": "",
        "portability_warnings": [],
        "feedback": "",
        "run_assessment": input.run_assessment,
        "run_evaluation": evaluation,
        "validation_attempts": 0,
        "total_iterations": 0,
        "max_validation_attempts": attempts,
        "max_total_iterations": iterations,
        "first_try_valid": None,
        "history": [],
    }


def checked_once(
    annotation: str, result: ValidationResult, first_valid: bool | None, history: dict[str, Any]
) -> HedAnnotationState:
    """The state after one validation of ``annotation`` (the rules' look-up or a remembered
    annotation): its status, errors and warnings, and ``history`` as the one step taken."""
    return {
        "current_annotation": annotation,
        "validation_status": "valid" if result.valid else "max_attempts_reached",
        "is_valid": result.valid,
        "validation_errors": [f"{i.code}: {i.message}" for i in result.errors],
        "validation_warnings": [f"{i.code}: {i.message}" for i in result.warnings],
        "validator": result.validator,
        "validator_note": result.fallback_reason,
        "validation_attempts": 1,
        "first_try_valid": first_valid,
        "history": [
            {**history, "annotation": annotation, "valid": result.valid, "codes": result.codes}
        ],
    }
