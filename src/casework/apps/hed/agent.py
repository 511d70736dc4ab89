"""The annotation state machine on LangGraph: wiring only; the steps live in ``steps``.

annotate -> validate -> (invalid -> summarize_feedback -> annotate | max_attempts -> END |
valid -> evaluate) -> (not faithful -> summarize_feedback -> annotate | faithful -> assess
if requested -> END). The iteration cap ends an unfaithful loop at END (or at assess when
assessment was requested).
"""

from __future__ import annotations

from typing import Any, Final, Literal, cast

from langgraph.graph import END, START, StateGraph

from casework.apps.hed import steps
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedAnnotationState
from casework.runtime.runconfig import RunConfig

__all__ = [
    "ANNOTATE",
    "ASSESS",
    "EVALUATE",
    "SUMMARIZE",
    "VALIDATE",
    "build_graph",
    "route_after_evaluation",
    "route_after_validation",
]

# Final: each name is its Literal node name, so the routers' return types check.
ANNOTATE: Final = "annotate"
VALIDATE: Final = "validate"
EVALUATE: Final = "evaluate"
ASSESS: Final = "assess"
SUMMARIZE: Final = "summarize_feedback"
# langgraph types END as plain str; the routers return it as its Literal.
STOP = cast(Literal["__end__"], END)


def route_after_validation(
    state: HedAnnotationState,
) -> Literal["evaluate", "assess", "summarize_feedback", "__end__"]:
    status = state.get("validation_status")
    if status == "valid":
        if state.get("run_evaluation", True):
            return EVALUATE
        return ASSESS if state.get("run_assessment") else STOP
    if status == "max_attempts_reached":
        return STOP
    if state.get("total_iterations", 0) >= state.get("max_total_iterations", 10):
        return STOP
    return SUMMARIZE


def route_after_evaluation(
    state: HedAnnotationState,
) -> Literal["assess", "summarize_feedback", "__end__"]:
    at_limit = state.get("total_iterations", 0) >= state.get("max_total_iterations", 10)
    # None: the judge gave no usable verdict; looping on it would only repeat the question.
    if state.get("is_faithful") is not False or at_limit:
        return ASSESS if state.get("run_assessment") else STOP
    return SUMMARIZE


def build_graph(deps: HedDeps, config: RunConfig, *, checkpointer: Any = None) -> Any:
    """Compile the state machine over ``deps`` (validator, vocabulary) and the run's models."""
    graph = StateGraph(HedAnnotationState)
    graph.add_node(ANNOTATE, lambda s: steps.annotate(s, deps, config))
    graph.add_node(VALIDATE, lambda s: steps.validate(s, deps))
    graph.add_node(EVALUATE, lambda s: steps.evaluate(s, deps, config))
    graph.add_node(ASSESS, lambda s: steps.assess(s, deps, config))
    graph.add_node(SUMMARIZE, lambda s: steps.summarize_feedback(s, deps, config))
    graph.add_edge(START, ANNOTATE)
    graph.add_edge(ANNOTATE, VALIDATE)
    graph.add_conditional_edges(
        VALIDATE, route_after_validation, [EVALUATE, ASSESS, SUMMARIZE, END]
    )
    graph.add_conditional_edges(EVALUATE, route_after_evaluation, [ASSESS, SUMMARIZE, END])
    graph.add_edge(SUMMARIZE, ANNOTATE)
    graph.add_edge(ASSESS, END)
    return graph.compile(checkpointer=checkpointer)
