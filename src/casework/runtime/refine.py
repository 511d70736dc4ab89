"""Refinement loop builder: generate -> validate -> evaluate -> feedback, with an attempt cap.

The loop accepts a candidate once it validates and (when an evaluator is given) evaluates as
good; otherwise it turns the errors into feedback (optionally summarised) and generates
again, up to ``max_attempts``. Every attempt is kept in ``history`` for the trace.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

__all__ = ["Check", "RefineState", "build_refinement_loop"]


@dataclass
class Check:
    """The outcome of a validation or evaluation step."""

    ok: bool
    errors: list[str] = field(default_factory=list)
    score: float | None = None


class RefineState(TypedDict, total=False):
    request: Any
    candidate: Any
    attempts: int
    validation: Check | None
    evaluation: Check | None
    feedback: str
    history: Annotated[list[dict[str, Any]], operator.add]
    status: Literal["accepted", "max_attempts"]


GENERATE, VALIDATE, EVALUATE, FEEDBACK = "generate", "validate", "evaluate", "feedback"


def build_refinement_loop(
    *,
    generate: Callable[[Any, str], Any],
    validate: Callable[[Any, Any], Check],
    evaluate: Callable[[Any, Any], Check] | None = None,
    summarize: Callable[[list[str]], str] | None = None,
    max_attempts: int = 3,
    checkpointer: Any = None,
) -> Any:
    """Compile the loop. ``generate(request, feedback)`` returns a candidate;
    ``validate``/``evaluate(candidate, request)`` return a ``Check``; ``summarize(errors)``
    condenses the errors into the feedback text for the next attempt."""

    def generate_node(state: RefineState) -> dict[str, Any]:
        candidate = generate(state["request"], state.get("feedback", ""))
        return {
            "candidate": candidate,
            "attempts": state.get("attempts", 0) + 1,
            "validation": None,
            "evaluation": None,
        }

    def validate_node(state: RefineState) -> dict[str, Any]:
        check = validate(state["candidate"], state["request"])
        update: dict[str, Any] = {"validation": check}
        if not check.ok or evaluate is None:
            update["history"] = [_attempt(state, check, None)]
        return update

    def evaluate_node(state: RefineState) -> dict[str, Any]:
        assert evaluate is not None
        check = evaluate(state["candidate"], state["request"])
        return {"evaluation": check, "history": [_attempt(state, state["validation"], check)]}

    def feedback_node(state: RefineState) -> dict[str, Any]:
        validation, evaluation = state.get("validation"), state.get("evaluation")
        errors = list(validation.errors if validation and not validation.ok else [])
        if evaluation and not evaluation.ok:
            errors += evaluation.errors
        text = summarize(errors) if summarize else "\n".join(f"- {e}" for e in errors)
        return {"feedback": text}

    def after_validate(state: RefineState) -> str:
        validation = state.get("validation")
        if validation is not None and validation.ok:
            return EVALUATE if evaluate is not None else END
        return FEEDBACK if state["attempts"] < max_attempts else END

    def after_evaluate(state: RefineState) -> str:
        evaluation = state.get("evaluation")
        if (evaluation is not None and evaluation.ok) or state["attempts"] >= max_attempts:
            return END
        return FEEDBACK

    def finish(state: RefineState) -> dict[str, Any]:
        validation, evaluation = state.get("validation"), state.get("evaluation")
        ok = (
            validation is not None
            and validation.ok
            and (evaluate is None or (evaluation is not None and evaluation.ok))
        )
        return {"status": "accepted" if ok else "max_attempts"}

    graph = StateGraph(RefineState)
    graph.add_node(GENERATE, generate_node)
    graph.add_node(VALIDATE, validate_node)
    graph.add_node(FEEDBACK, feedback_node)
    graph.add_node("finish", finish)
    graph.add_edge(START, GENERATE)
    graph.add_edge(GENERATE, VALIDATE)
    graph.add_conditional_edges(
        VALIDATE,
        after_validate,
        {EVALUATE: EVALUATE, FEEDBACK: FEEDBACK, END: "finish"}
        if evaluate
        else {FEEDBACK: FEEDBACK, END: "finish"},
    )
    if evaluate is not None:
        graph.add_node(EVALUATE, evaluate_node)
        graph.add_conditional_edges(EVALUATE, after_evaluate, {FEEDBACK: FEEDBACK, END: "finish"})
    graph.add_edge(FEEDBACK, GENERATE)
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)


def _attempt(
    state: RefineState, validation: Check | None, evaluation: Check | None
) -> dict[str, Any]:
    return {
        "attempt": state.get("attempts", 0),
        "candidate": state.get("candidate"),
        "valid": validation.ok if validation else None,
        "validation_errors": validation.errors if validation else [],
        "evaluation_ok": evaluation.ok if evaluation else None,
        "score": evaluation.score if evaluation else None,
        "evaluation_errors": evaluation.errors if evaluation else [],
    }
