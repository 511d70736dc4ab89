"""Strategies: ``run(input, deps) -> HedDecision``, registered by name.

``one-shot`` annotates and validates once (no loop); ``loop`` is the full state machine
(validate, evaluate, feedback); ``loop-no-eval`` loops on validation errors only. All three
run the same graph with different limits and switches, so what is compared is the loop.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from casework.apps.hed.agent import build_graph
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedAnnotationState, HedDecision, HedInput
from casework.apps.hed.rules import check_description, outcome
from casework.apps.hed.validation import check_schema
from casework.errors import CaseworkError
from casework.runtime import EndReason, Evidence, RunInfo
from casework.runtime.usage import UsageCallback

__all__ = [
    "STRATEGIES",
    "initial_state",
    "loop",
    "loop_no_eval",
    "one_shot",
    "run_graph",
    "to_decision",
]

ProgressHook = Callable[[str, HedAnnotationState], None]


def initial_state(
    input: HedInput, deps: HedDeps, *, evaluation: bool, attempts: int, iterations: int
) -> HedAnnotationState:
    return {
        "messages": [],
        "input_description": check_description(input.description),
        "schema_version": check_schema(input.schema_version),
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


def run_graph(
    state: HedAnnotationState,
    deps: HedDeps,
    *,
    strategy: str,
    on_step: ProgressHook | None = None,
) -> HedDecision:
    """Run the graph to its end and turn the last state into a decision. A model failure
    mid-run ends the run cleanly (``error:model``) with the state reached so far."""
    usage = UsageCallback()
    run_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    graph = build_graph(deps)
    last: HedAnnotationState = state
    error = ""
    limit = 4 * state["max_total_iterations"] + 10
    try:
        for node_update in graph.stream(
            state,
            config={"callbacks": [usage], "recursion_limit": limit, "run_id": uuid.uuid4()},
            stream_mode=["updates", "values"],
        ):
            mode, payload = node_update
            if mode == "values":
                last = payload
            elif on_step is not None:
                for node, update in payload.items():
                    on_step(node, {**last, **(update or {})})
    except CaseworkError as exc:
        error = str(exc)
    except Exception as exc:  # a provider SDK error: the run ends, the caller gets a decision
        error = f"{type(exc).__name__}: {exc}"
    usage.usage.wall_seconds = round(time.perf_counter() - started, 3)
    return to_decision(last, deps, strategy=strategy, run_id=run_id, usage=usage.usage, error=error)


def to_decision(
    state: HedAnnotationState,
    deps: HedDeps,
    *,
    strategy: str,
    run_id: str = "",
    usage: Any = None,
    error: str = "",
) -> HedDecision:
    is_valid = bool(state.get("is_valid"))
    result = outcome(is_valid, state.get("is_faithful"), state.get("is_complete"))
    attempts = state.get("validation_attempts", 0)
    iterations = state.get("total_iterations", 0)
    if error:
        ended_by, detail = EndReason.ERROR_MODEL, error
    elif state.get("validation_status") == "max_attempts_reached":
        ended_by = EndReason.LIMIT_MODEL_CALLS
        detail = f"max_validation_attempts ({state['max_validation_attempts']}) without valid HED"
    elif is_valid and state.get("is_faithful") is False:
        ended_by = EndReason.LIMIT_MODEL_CALLS
        detail = (
            f"max_total_iterations ({state['max_total_iterations']}) without a faithful annotation"
        )
    elif not is_valid:
        ended_by = EndReason.LIMIT_MODEL_CALLS
        detail = f"max_total_iterations ({state['max_total_iterations']}) without valid HED"
    else:
        ended_by, detail = EndReason.SUBMIT, ""
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
    spec = getattr(deps.models, "spec", None)
    decision = HedDecision(
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
    decision.run = RunInfo(
        ended_by=ended_by,
        detail=detail,
        strategy=strategy,
        model=spec("annotator") if callable(spec) else None,
        run_id=run_id,
        usage=usage,
    )
    return decision


def one_shot(input: HedInput, deps: HedDeps, on_step: ProgressHook | None = None) -> HedDecision:
    """Annotate once and validate: no feedback loop, no evaluation."""
    state = initial_state(input, deps, evaluation=False, attempts=1, iterations=1)
    return run_graph(state, deps, strategy="one-shot", on_step=on_step)


def loop(input: HedInput, deps: HedDeps, on_step: ProgressHook | None = None) -> HedDecision:
    """The full state machine: validation loop, faithfulness loop, optional assessment."""
    state = initial_state(
        input,
        deps,
        evaluation=True,
        attempts=deps.max_validation_attempts,
        iterations=deps.max_total_iterations,
    )
    return run_graph(state, deps, strategy="loop", on_step=on_step)


def loop_no_eval(
    input: HedInput, deps: HedDeps, on_step: ProgressHook | None = None
) -> HedDecision:
    """The validation loop only: the first valid annotation is the answer."""
    state = initial_state(
        input,
        deps,
        evaluation=False,
        attempts=deps.max_validation_attempts,
        iterations=deps.max_total_iterations,
    )
    return run_graph(state, deps, strategy="loop-no-eval", on_step=on_step)


STRATEGIES: dict[str, Any] = {"one-shot": one_shot, "loop": loop, "loop-no-eval": loop_no_eval}
