"""Strategies: ``run(input, deps, config) -> HedDecision``, registered by name.

``one-shot`` annotates and validates once (no loop); ``loop`` is the full state machine
(validate, evaluate, feedback); ``loop-no-eval`` loops on validation errors only. Those three
run the same graph with different limits and switches, so what is compared is the loop.
``rules`` is the no-model floor: the vocabulary look-up baseline, validated. ``memory``
takes the annotation a person verified for a description close enough to this one, validated
again. ``memory-analogy`` takes the annotation of a verified description that differs from this one
by a word or two, those words' tags swapped. ``cascade`` (the default) answers from the memory
when it is sure, else by analogy with a verified sibling, else keeps the look-up where it
accounts for the description's words, else asks the bundled model once under
the schema's grammar (a short prompt: the rules and the schema entries the case points to;
the look-up shown as a draft, the nearest verified annotations as its examples), else, when
a remote model is configured (``--model``), runs the full loop on it. Once the caller has verified annotations, the look-up and the models are less sure of a
description far from all of them (``novelty_confidence``), so it reaches a person. A finished
node is an event for the run config's sink (``{"type": "step", "node", ...}``: the CLI's
status line).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from langchain_core.runnables import RunnableConfig

from casework.apps.hed.agent import build_graph
from casework.apps.hed.analogy import negations
from casework.apps.hed.baseline import coverage, lookup_annotation
from casework.apps.hed.decisions import checked_once, end_reason, initial_state, to_decision
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.memory import (
    ANALOGY_SOURCE,
    ANALOGY_THRESHOLD,
    DEMONSTRATIONS,
    HED_MEMORY_THRESHOLD,
    annotation_memory,
    memory,
    sibling,
)
from casework.apps.hed.models import ROLES, HedAnnotationState, HedDecision, HedInput
from casework.apps.hed.rules import check_description, split_top_level
from casework.apps.hed.validation import check_schema, validate_many
from casework.apps.hed.vocabulary import load_vocabulary
from casework.errors import CaseworkError, InputError
from casework.llm.roles import LOCAL_ROLE
from casework.runtime import (
    EndReason,
    Event,
    Run,
    RunConfig,
    RunInfo,
    RunResult,
)
from casework.runtime.cascade import Cascade, Layer, LayerOutcome, mark_for_review
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import (
    MEMORY_SOURCE,
    NEIGHBOURS,
    demonstration_evidence,
    demonstrations,
    novelty_confidence,
)
from casework.runtime.usage import Usage

__all__ = [
    "GRAPH_STRATEGIES",
    "STRATEGIES",
    "astream_run",
    "cascade",
    "loop",
    "loop_no_eval",
    "one_shot",
    "rules",
    "run_graph",
    "step_summary",
    "strategy_state",
]


def _start(
    state: HedAnnotationState, config: RunConfig, strategy: str
) -> tuple[Run, RunnableConfig]:
    """The harness's run of the graph (its trace in the run config's trace folder, if any)
    and its LangGraph config. The trace holds the prompts and answers; never a provider key
    (those stay in the models)."""
    run = config.run(
        "hed",
        ROLES["annotate"],
        strategy=strategy,
        payload={
            "description": state["input_description"],
            "schema_version": state["schema_version"],
        },
    )
    return run, run.config(recursion_limit=4 * state["max_total_iterations"] + 10)


def _step(run: Run, node: str, last: HedAnnotationState, update: dict[str, Any] | None) -> Event:
    """Record a finished node: its step event, as traced (for the sink and a stream)."""
    view: HedAnnotationState = {**last, **(update or {})}  # type: ignore[typeddict-item]
    return run.record({"type": "step", **step_summary(node, view)})


def _end(run: Run, state: HedAnnotationState, error: str = "") -> RunResult[HedDecision]:
    """The decision the state stands for, its ``run`` filled by the harness."""
    ended_by, detail = end_reason(state, error)
    decision = to_decision(state, error=error)
    return run.end(decision, ended_by, detail, messages=list(state.get("messages", [])))


def step_summary(node: str, state: HedAnnotationState) -> dict[str, Any]:
    """What a progress event says about a finished node (CLI status, SSE, trace)."""
    return {
        "node": node,
        "annotation": state.get("current_annotation", ""),
        "validation_status": state.get("validation_status"),
        "validation_errors": state.get("validation_errors", []),
        "is_faithful": state.get("is_faithful"),
        "total_iterations": state.get("total_iterations", 0),
        "validation_attempts": state.get("validation_attempts", 0),
    }


def _error_text(exc: Exception) -> str:
    if isinstance(exc, CaseworkError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"  # a provider SDK error: the run ends with a decision


def run_graph(
    state: HedAnnotationState, deps: HedDeps, config: RunConfig, *, strategy: str
) -> HedDecision:
    """Run the graph to its end and turn the last state into a decision; each finished node
    is a step event for the config's sink. A model failure mid-run ends the run cleanly
    (``error:model``) with the state reached so far, or propagates when ``deps.raise_errors``
    (the evaluation harness retries it)."""
    run, graph_config = _start(state, config, strategy)
    last, error = state, ""
    try:
        for mode, payload in build_graph(deps, config).stream(
            state, config=graph_config, stream_mode=["updates", "values"]
        ):
            if mode == "values":
                last = payload
                continue
            for node, update in payload.items():
                config.emit(_step(run, node, last, update))
    except Exception as exc:
        error = _error_text(exc)
        if deps.raise_errors:
            _end(run, last, error)
            raise
    decision = _end(run, last, error).decision
    assert decision is not None  # to_decision always gives one
    return decision


async def astream_run(
    state: HedAnnotationState, deps: HedDeps, config: RunConfig, *, strategy: str
) -> AsyncIterator[Event]:
    """The run as events from LangGraph's ``astream_events``: ``model`` when an agent's model
    starts, ``token`` for streamed text, ``step`` when a node finishes (also the config's
    sink's), and last ``complete`` with the run's ``RunResult`` (its ``decision``: the
    ``HedDecision``)."""
    run, graph_config = _start(state, config, strategy)
    last, error = state, ""
    try:
        async for event in build_graph(deps, config).astream_events(
            state, graph_config, version="v2"
        ):
            kind, name = event["event"], event.get("name", "")
            node = (event.get("metadata") or {}).get("langgraph_node", "")
            if kind == "on_chain_end" and not event.get("parent_ids"):
                output = event["data"].get("output")
                if isinstance(output, dict):
                    last = output  # type: ignore[assignment]  # the graph's final state
            elif kind == "on_chain_end" and name == node and name in NODES:
                output = event["data"].get("output")
                step = _step(run, node, last, output if isinstance(output, dict) else None)
                last = _merge(last, output if isinstance(output, dict) else {})
                config.emit(step)
                yield step
            elif kind == "on_chat_model_start":
                yield {"type": "model", "node": node, "role": ROLE_OF_NODE.get(node, "")}
            elif kind == "on_chat_model_stream":
                text = getattr(event["data"].get("chunk"), "content", "")
                if isinstance(text, str) and text:
                    yield {"type": "token", "node": node, "text": text}
    except Exception as exc:
        error = _error_text(exc)
    except (GeneratorExit, asyncio.CancelledError):  # the client went away: close the trace
        _end(run, last, "the stream was closed before the run ended")
        raise
    yield {"type": "complete", "result": _end(run, last, error)}


def _merge(state: HedAnnotationState, update: dict[str, Any]) -> HedAnnotationState:
    """The state after a node's update, with the reducers of the accumulating fields (a run
    cut short keeps its history)."""
    merged: dict[str, Any] = {**state, **update}
    for key in ("history", "messages"):
        if key in update:
            merged[key] = [*state.get(key, []), *update[key]]
    return merged  # type: ignore[return-value]


def strategy_state(name: str, input: HedInput, deps: HedDeps) -> HedAnnotationState:
    """The graph's first state for a graph strategy: which checks run and with which limits."""
    if name == "one-shot":
        return initial_state(input, deps, evaluation=False, attempts=1, iterations=1)
    if name not in ("loop", "loop-no-eval"):
        raise InputError(f"{name!r} is not a strategy of the annotation graph.")
    return initial_state(
        input,
        deps,
        evaluation=name == "loop",
        attempts=deps.max_validation_attempts,
        iterations=deps.max_total_iterations,
    )


def one_shot(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """Annotate once and validate: no feedback loop, no evaluation."""
    state = strategy_state("one-shot", input, deps)
    return run_graph(state, deps, config, strategy="one-shot")


def loop(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """The full state machine: validation loop, faithfulness loop, optional assessment."""
    return run_graph(strategy_state("loop", input, deps), deps, config, strategy="loop")


def loop_no_eval(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """The validation loop only: the first valid annotation is the answer."""
    state = strategy_state("loop-no-eval", input, deps)
    return run_graph(state, deps, config, strategy="loop-no-eval")


def rules(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """No model: the vocabulary look-up baseline (``baseline.py``), validated; tags the
    validator rejects are dropped and the rest validated again."""
    started = time.perf_counter()
    state = initial_state(input, deps, evaluation=False, attempts=1, iterations=0)
    schema = state["schema_version"]
    vocab = load_vocabulary(schema)
    annotation = lookup_annotation(state["input_description"], vocab)
    definitions = input.definitions
    result = validate_many([annotation], schema, validator=deps.validator, definitions=definitions)[
        0
    ]
    first_valid = result.valid
    if not result.valid:
        rejected = {i.tag.strip().lower() for i in result.errors if i.tag}
        kept = [t for t in split_top_level(annotation) if t.lower() not in rejected]
        annotation = ", ".join(kept)
        result = validate_many(
            [annotation], schema, validator=deps.validator, definitions=definitions
        )[0]
    checked = checked_once(annotation, result, first_valid, {"step": "validate", "iteration": 0})
    state.update(checked)
    config.emit({"type": "step", **step_summary("validate", state)})
    decision = to_decision(state)
    decision.run = RunInfo(
        ended_by=EndReason.RULES,
        detail="" if result.valid else "the look-up's annotation is not valid HED",
        strategy="rules",
        usage=Usage(wall_seconds=round(time.perf_counter() - started, 3)),
    )
    return decision


# -- the cascade -------------------------------------------------------------------------

RULES_THRESHOLD = 50.0
"""Until a policy is fitted: the look-up decides when it accounts for half of the words. On 30
gold cases (``--sample 30 --seed 2``, every layer run) with the look-up of 26 Nov 2026, the
bundled model's annotations were no better than the look-up's above that coverage: tag F1
0.666 with the model on 7 % of cases (the same at 30 % coverage; 0.663 at 70 % with it on
33 %, and 0.663 with the model on every case; the look-up alone 0.664)."""
LOCAL_THRESHOLD = 60.0
"""Until a policy is fitted: a valid annotation of the bundled model decides."""


def _rules_layer(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """The look-up, with the share of the description's words it accounts for as its
    confidence (an invalid look-up is not sure of anything)."""
    decided = rules(input, deps, config)
    schema = decided.schema_version or check_schema(input.schema_version)
    share = coverage(decided.description or input.description, load_vocabulary(schema))
    decided.confidence = round(100.0 * share, 1) if decided.is_valid else 0.0
    return _familiar(decided, input, deps, config)


def _familiar(
    decided: HedDecision, input: HedInput, deps: HedDeps, config: RunConfig
) -> HedDecision:
    """A layer's decision, less sure when the caller has verified annotations and none is
    near this description (``novelty_confidence``): early unfamiliar cases reach a person
    and become examples. Without any verified annotation the confidence is as it was."""
    description = check_description(input.description)
    nearest, negated = _nearest_alike(annotation_memory(deps, config), description)
    scaled = novelty_confidence(decided.confidence, nearest)
    if scaled != decided.confidence:
        why = f"the nearest verified description is at similarity {nearest:.2f}"
        if negated:
            why = (
                f"the nearest verified description that negates as this one does is at "
                f"similarity {nearest:.2f}"
                if nearest
                else "each of the nearest verified descriptions negates where this one does not"
            )
        decided.reasoning = (
            f"{decided.reasoning} Confidence {decided.confidence:g} -> {scaled:g}: {why}."
        )[:1200]
        decided.confidence = scaled
    return decided


def _nearest_alike(store: Memory, description: str) -> tuple[float | None, bool]:
    """(The similarity of the nearest verified description that negates as often as this
    one, whether nearer ones were passed over for negating otherwise); None: no verified
    annotation. MiniLM puts "which DIDN'T change" at 0.97 from "which changed": a negated
    neighbour makes a description no more familiar, and when all of the nearest are negated,
    it counts as far from everything (0)."""
    nearest = store.nearest(description, NEIGHBOURS)  # no example: no embedding, []
    if not nearest:
        return None, False
    said = negations(description)
    alike = [s for e, s in nearest if negations(e.key_text) == said]
    if not alike:
        return 0.0, True
    return alike[0], alike[0] != nearest[0][1]


def _local_layer(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """One annotation by the bundled model under the schema's grammar, validated, from the
    short prompt (the rules and the schema entries the case and its examples point to,
    ``shortprompt.py``); its examples are the nearest verified annotations
    (``DEMONSTRATIONS``, recorded as the decision's ``memory`` evidence) when the memory has
    any, else the prompt's generic two."""
    on_local = replace(config, models=config.models.routed({ROLES["annotate"]: LOCAL_ROLE}))
    description = check_description(input.description)
    shown = demonstrations(annotation_memory(deps, config), description, DEMONSTRATIONS)
    # Least similar first: the nearest example sits next to the event it should inform.
    pairs = tuple((d.key_text, str(d.answer["hed"])) for d in reversed(shown))
    local_deps = replace(deps, grammar=True, draft=True, short_prompt=True, demonstrations=pairs)
    decided = one_shot(input, local_deps, on_local)
    decided.evidence = [*demonstration_evidence(shown), *decided.evidence]
    if decided.run is not None:
        decided.run.strategy = "local"
    return _familiar(decided, input, deps, config)


def _review(last: HedDecision, said: str, outcomes: list[LayerOutcome]) -> HedDecision:
    """No layer was sure: the last valid annotation goes to a person. A later layer's invalid
    one (a tag repeated in a group, which the grammar cannot forbid, with no remote layer to
    repair it) never replaces an earlier valid one: the look-up's is valid by construction."""
    if not last.is_valid:
        for outcome in reversed(outcomes):
            if outcome.output.get("is_valid"):
                last = HedDecision.model_validate(outcome.output)
                said += f"; the {outcome.layer} layer's valid annotation stands"
                break
    return mark_for_review(last, said, outcomes)


def _no_annotation(said: str, outcomes: list[LayerOutcome]) -> HedDecision:
    raise InputError(f"No layer could annotate the description: {said}.")


cascade: Cascade[HedDecision] = Cascade(
    "hed",
    [
        Layer(MEMORY_SOURCE, memory, default_threshold=HED_MEMORY_THRESHOLD),
        Layer(ANALOGY_SOURCE, sibling, default_threshold=ANALOGY_THRESHOLD),
        Layer("rules", _rules_layer, default_threshold=RULES_THRESHOLD),
        Layer("local", _local_layer, default_threshold=LOCAL_THRESHOLD),
        Layer("agent", loop, default_threshold=LOCAL_THRESHOLD, remote=True),
    ],
    decision=HedDecision,
    role=ROLES["annotate"],
    review=_review,
    no_answer=_no_annotation,
)


STRATEGIES: dict[str, Any] = {
    "one-shot": one_shot,
    "loop": loop,
    "loop-no-eval": loop_no_eval,
    "rules": rules,
    "memory": memory,
    ANALOGY_SOURCE: sibling,
    "cascade": cascade,
}
GRAPH_STRATEGIES = ("loop", "loop-no-eval", "one-shot")
NODES = frozenset({"annotate", "validate", "evaluate", "assess", "summarize_feedback"})
ROLE_OF_NODE = {
    "annotate": ROLES["annotate"],
    "evaluate": ROLES["evaluate"],
    "assess": ROLES["assess"],
    "summarize_feedback": ROLES["summarize"],
}
