"""One description annotated: the request checked, the model loaded, the input (an image
the vision agent describes first), the run, or its events as a stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from casework.apps.hed.agent import (
    EVALUATE,
    VALIDATE,
    route_after_evaluation,
    route_after_validation,
)
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import (
    DEFAULT_SCHEMA,
    ROLES,
    HedAnnotationState,
    HedDecision,
    HedInput,
)
from casework.apps.hed.rules import check_description
from casework.apps.hed.strategies import GRAPH_STRATEGIES, STRATEGIES, astream_run, strategy_state
from casework.apps.hed.validation import check_schema
from casework.apps.hed.vision import describe_image
from casework.errors import InputError
from casework.registry import strategy_named
from casework.runtime import EndReason, RunConfig

__all__ = [
    "annotate",
    "annotation_input",
    "annotation_stream",
    "check_request",
    "load_annotation_model",
    "next_node",
]


def check_request(schema: str, strategy: str, description: str | None = None) -> None:
    """Refuse an unknown strategy or schema, and an unusable description, before any deps
    are built."""
    strategy_named(STRATEGIES, strategy)
    check_schema(schema)
    if description is not None:
        check_description(description)


def load_annotation_model(config: RunConfig, strategy: str) -> None:
    """Build the annotation model of ``config`` a graph strategy needs now, so a model that
    cannot be built is one sentence before the run rather than an error mid-run."""
    if strategy in GRAPH_STRATEGIES:
        config.models(ROLES["annotate"])


def annotation_input(
    config: RunConfig,
    description: str,
    *,
    schema: str = DEFAULT_SCHEMA,
    run_assessment: bool = False,
    image: bytes | None = None,
    image_name: str = "the image",
) -> tuple[HedInput, str]:
    """One annotation's input, checked before anything runs: the description, with the
    vision agent's description of ``image`` appended when one is given; and that image
    description ("" without an image)."""
    image_text = ""
    if image is not None:
        image_text = describe_image(image, config, name=image_name)
        description = " ".join(filter(None, [description, image_text]))
    check_description(description)
    check_schema(schema)
    input = HedInput(description=description, schema_version=schema, run_assessment=run_assessment)
    return input, image_text


def next_node(after: str, state: HedAnnotationState) -> str:
    """Where the annotation graph goes from ``state`` after the ``validate`` or ``evaluate``
    node: its own routers decide."""
    if after == VALIDATE:
        return route_after_validation(state)
    if after == EVALUATE:
        return route_after_evaluation(state)
    raise InputError(f"A routing case's 'after' must be validate or evaluate, not {after!r}.")


def annotation_stream(
    input: HedInput, deps: HedDeps, config: RunConfig, strategy: str = "cascade"
) -> AsyncIterator[dict[str, Any]]:
    """One strategy's run as events: for a graph strategy LangGraph's (``model``, ``token``,
    ``step``), then ``complete`` with the ``decision``, stored when the run finished (not when
    a model error cut it short). The strategy and the input are checked before the first
    event."""
    run = strategy_named(STRATEGIES, strategy)
    state = strategy_state(strategy, input, deps) if strategy in GRAPH_STRATEGIES else None

    async def events() -> AsyncIterator[dict[str, Any]]:
        if state is None:  # no graph to stream: the decision is the only event
            decision = await asyncio.to_thread(run, input, deps, config)
            stream: AsyncIterator[dict[str, Any]] = _complete(decision)
        else:
            stream = astream_run(state, deps, config, strategy=strategy)
        async for event in stream:
            if event["type"] == "complete":
                if "result" in event:  # the harness's end: its RunResult carries the decision
                    event = {"type": "complete", "decision": event["result"].decision}
                finished = event["decision"].run.ended_by != EndReason.ERROR_MODEL
                if deps.repo is not None and finished:
                    await asyncio.to_thread(deps.repo.save, event["decision"])
            yield event

    return events()


async def _complete(decision: HedDecision) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "complete", "decision": decision}


def annotate(
    input: HedInput,
    deps: HedDeps,
    config: RunConfig,
    *,
    strategy: str = "cascade",
    batch_key: str | None = None,
    row_id: str | None = None,
) -> HedDecision:
    """Run one strategy under ``config`` and store the finished run (a run cut short by a
    model error is not stored as finished, so a batch retries it)."""
    decision = strategy_named(STRATEGIES, strategy)(input, deps, config)
    if deps.repo is not None and decision.run and decision.run.ended_by != EndReason.ERROR_MODEL:
        deps.repo.save(decision, batch_key=batch_key, row_id=row_id)
    return decision
