"""hed's memory of verified annotations (issue 32): a description close enough to one a
person verified takes its annotation, validated again (the ``memory`` layer, first in the
cascade); a description that differs from a verified one by a word or two takes its
annotation with those words' tags swapped (the ``memory-analogy`` layer, next; ``analogy.py``); the
bundled model's prompt shows the nearest verified annotations as its examples
(``DEMONSTRATIONS``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from casework.apps.hed.analogy import analogy, negations
from casework.apps.hed.decisions import checked_once, initial_state, to_decision
from casework.apps.hed.models import HedAnnotationState, HedDecision, HedInput
from casework.apps.hed.rules import check_description
from casework.apps.hed.validation import validate_many
from casework.apps.hed.vocabulary import load_vocabulary
from casework.runtime import EndReason, RunConfig, RunInfo
from casework.runtime.memory import Example, Memory
from casework.runtime.memory_layer import (
    MEMORY_SOURCE,
    NEIGHBOURS,
    Recall,
    memory_evidence,
    recall,
)
from casework.runtime.usage import Usage
from casework.stores import open_stores

if TYPE_CHECKING:
    from casework.apps.hed.deps import HedDeps

__all__ = [
    "ANALOGY_SOURCE",
    "ANALOGY_THRESHOLD",
    "DEMONSTRATIONS",
    "HED_MEMORY_THRESHOLD",
    "annotation_memory",
    "memory",
    "remembered",
    "sibling",
]

HED_MEMORY_THRESHOLD = 90.0
"""The memory layer's threshold until a policy is fitted (see the README's table)."""
ANALOGY_SOURCE = "memory-analogy"
"""The analogy layer's name: a memory layer (the learning curve counts what it decides as the
memory's)."""
ANALOGY_THRESHOLD = 85.0
"""The analogy layer's threshold until a policy is fitted: a sibling at similarity 0.85 with
every differing word's tag swapped (see the README's table)."""
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
        return _unsure(
            state, f"No verified description is near{said}.", "no verified description near"
        )
    annotation = str(found.answer["hed"])
    example = found.used[0][0]
    if negations(state["input_description"]) != negations(example.key_text):
        return _unsure(
            state,
            f"Example {example.id} is near but one of the two negates where the other does "
            "not: not a repeat.",
            "a verified description negated",
        )
    vocab = load_vocabulary(state["schema_version"])
    rewrite = analogy(state["input_description"], example.key_text, annotation, vocab)
    if rewrite is not None and rewrite.swaps:
        # "incorrect" sits at 0.94 from "correct": near, but a word its annotation names differs
        swapped = "; ".join(f"{old} -> {new}" for old, new in rewrite.swaps)
        return _unsure(
            state,
            f"Example {example.id} is near but differs in words its annotation names "
            f"({swapped}): the analogy layer's case.",
            "a verified sibling, not a repeat",
        )
    return _verified(
        state,
        deps,
        annotation,
        found.used,
        found.confidence,
        f"The annotation a person verified for example {_ids(found.used)} (similarity "
        f"{found.used[0][1]:.2f})",
    )


def _unsure(state: HedAnnotationState, reasoning: str, status: str) -> HedDecision:
    """The layer answers nothing (NEEDS_REVIEW at 0): the case goes on."""
    return to_decision(state).model_copy(
        update={
            "verdict": "NEEDS_REVIEW",
            "confidence": 0.0,
            "reasoning": reasoning,
            "final_status": status,
        }
    )


def _ids(used: list[tuple[Example, float]]) -> str:
    return ", ".join(str(e.id) for e, _ in used)


def _verified(
    state: HedAnnotationState,
    deps: HedDeps,
    annotation: str,
    used: list[tuple[Example, float]],
    confidence: float,
    said: str,
) -> HedDecision:
    """A decision on an annotation taken from verified examples, validated again against the
    state's schema and definitions: ``confidence`` when valid, 0 (the case goes on) when not."""
    result = validate_many(
        [annotation],
        state["schema_version"],
        validator=deps.validator,
        definitions=state["definitions"],
    )[0]
    state.update(
        checked_once(annotation, result, result.valid, {"step": "memory", "examples": _ids(used)})
    )
    decision = to_decision(state)
    decision.confidence = confidence if result.valid else 0.0
    decision.reasoning = f"{said}, " + (
        "valid against the schema." if result.valid else "no longer valid: not used."
    )
    decision.evidence = [*memory_evidence(used), *decision.evidence]
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


def sibling(input: HedInput, deps: HedDeps, config: RunConfig) -> HedDecision:
    """The analogy layer: the nearest verified description that differs from this one by a
    word or two (``analogy``) lends its annotation, those words' tags swapped, validated
    again; its confidence is the similarity, less for each differing pair the annotation does
    not name. No such sibling: NEEDS_REVIEW at 0 (the case goes on)."""
    started = time.perf_counter()
    state = initial_state(input, deps, evaluation=False, attempts=1, iterations=0)
    description = state["input_description"]
    vocab = load_vocabulary(state["schema_version"])
    decision: HedDecision | None = None
    for example, similarity in annotation_memory(deps, config).nearest(description, NEIGHBOURS):
        found = analogy(description, example.key_text, str(example.answer["hed"]), vocab)
        if found is None:
            continue
        swapped = "; ".join(f"{old} -> {new}" for old, new in found.swaps) or "no tag"
        unsaid = "".join(f"; {old} / {new} not annotated" for old, new in found.kept)
        decision = _verified(
            state,
            deps,
            found.annotation,
            [(example, similarity)],
            found.confidence(similarity),
            f"By analogy with example {example.id} (similarity {similarity:.2f}): "
            f"{swapped}{unsaid}",
        )
        break
    if decision is None:
        decision = _unsure(
            state,
            "No verified description differs from this one by a word or two.",
            "no verified sibling",
        )
    decision.run = RunInfo(
        ended_by=EndReason.RULES,
        strategy=ANALOGY_SOURCE,
        usage=Usage(wall_seconds=round(time.perf_counter() - started, 3)),
    )
    return decision
