"""hed's memory of verified annotations (issue 32): a description close enough to one a
person verified takes its annotation, validated again (the ``memory`` layer, first in the
cascade); the bundled model's prompt shows the nearest verified annotations as its examples
(``DEMONSTRATIONS``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from casework.apps.hed.decisions import checked_once, initial_state, to_decision
from casework.apps.hed.models import HedDecision, HedInput
from casework.apps.hed.rules import check_description
from casework.apps.hed.validation import validate_many
from casework.runtime import EndReason, RunConfig, RunInfo
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import MEMORY_SOURCE, Recall, memory_evidence, recall
from casework.runtime.usage import Usage
from casework.stores import open_stores

if TYPE_CHECKING:
    from casework.apps.hed.deps import HedDeps

__all__ = ["DEMONSTRATIONS", "HED_MEMORY_THRESHOLD", "annotation_memory", "memory", "remembered"]

HED_MEMORY_THRESHOLD = 90.0
"""The memory layer's threshold until a policy is fitted (see the README's table)."""
DEMONSTRATIONS = 2
"""Verified (description, annotation) pairs shown to the bundled model."""


def annotation_memory(deps: HedDeps, config: RunConfig) -> Memory:
    """The verified annotations in the deps' store, as the run's caller sees them."""
    return Memory(open_stores(deps.settings).engine, "hed", config.caller)


def remembered(input: HedInput, deps: HedDeps, found: Recall | None) -> HedDecision:
    """The memory layer's decision on what ``recall`` found: the verified annotation validated
    again against the input's schema and definitions (VALID at the recall's confidence;
    INVALID at 0, so the case goes on), or NEEDS_REVIEW when no example is near."""
    state = initial_state(input, deps, evaluation=False, attempts=1, iterations=0)
    if found is None or found.answer is None:
        nearest = found.neighbours[0][1] if found and found.neighbours else None
        said = f" (the nearest at {nearest:.2f})" if nearest is not None else ""
        decision = to_decision(state)
        return decision.model_copy(
            update={
                "verdict": "NEEDS_REVIEW",
                "confidence": 0.0,
                "reasoning": f"No verified description is near{said}.",
                "final_status": "no verified description near",
            }
        )
    annotation = str(found.answer["hed"])
    result = validate_many(
        [annotation],
        state["schema_version"],
        validator=deps.validator,
        definitions=input.definitions,
    )[0]
    ids = ", ".join(str(e.id) for e, _ in found.used)
    state.update(
        checked_once(annotation, result, result.valid, {"step": "memory", "examples": ids})
    )
    decision = to_decision(state)
    decision.confidence = found.confidence if result.valid else 0.0
    decision.reasoning = (
        f"The annotation a person verified for example {ids} (similarity "
        f"{found.used[0][1]:.2f}), "
        + ("valid against the schema." if result.valid else "no longer valid: not used.")
    )
    decision.evidence = [*memory_evidence(found.used), *decision.evidence]
    return decision


def memory(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """Answer from the verified annotations (see ``remembered``); an empty memory answers at
    once (no embedding)."""
    started = time.perf_counter()
    store = annotation_memory(deps, config)
    description = check_description(input.description)
    decision = remembered(input, deps, recall(store, description) if store.count() else None)
    decision.run = RunInfo(
        ended_by=EndReason.RULES,
        strategy=MEMORY_SOURCE,
        usage=Usage(wall_seconds=round(time.perf_counter() - started, 3)),
    )
    return decision
