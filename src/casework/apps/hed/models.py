"""The hed app's typed shapes: the graph state, the structured agent outputs, the decision."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import BaseMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field

from casework.llm.roles import VISION_ROLE
from casework.runtime import Decision
from casework.runtime.cascade import LayerOutcome

__all__ = [
    "DEFAULT_SCHEMA",
    "MAX_DESCRIPTION_CHARS",
    "REVIEW_DECIDED",
    "REVIEW_WAITING",
    "ROLES",
    "AssessmentVerdict",
    "FaithfulnessVerdict",
    "HedAnnotationState",
    "HedDecision",
    "HedInput",
    "HedVerdict",
    "StoredAnnotation",
    "ValidationStatus",
    "ValidatorKind",
    "decision_json",
]

ROLES = {
    "annotate": "annotator",
    "evaluate": "judge",
    "assess": "judge",
    "summarize": "specialist",
    "vision": VISION_ROLE,
}
"""The model role each agent asks the run config's models for, the annotating agent's first."""

DEFAULT_SCHEMA = "8.3.0"
"""The HED schema version an annotation is validated against unless one is named."""
MAX_DESCRIPTION_CHARS = 2000
"""An event description longer than this is a document, not an event: the user must split it."""
ValidatorKind = Literal["auto", "js", "python"]

ValidationStatus = Literal["pending", "valid", "invalid", "max_attempts_reached"]
HedVerdict = Literal["VALID", "INVALID", "NEEDS_REVIEW"]


class HedInput(BaseModel):
    """One annotation request."""

    description: str = Field(description="The event, in natural language.")
    schema_version: str = DEFAULT_SCHEMA
    run_assessment: bool = False
    definitions: list[str] = Field(
        default_factory=list,
        description="Definition strings in context (a sidecar's): the annotation may use "
        "Def/Name and (Def/Name, Onset) groups for them, and is validated with them.",
    )


class HedAnnotationState(TypedDict, total=False):
    """The spec's state, plus the settings of the run (limits, which checks run)."""

    messages: Annotated[list[BaseMessage], add_messages]
    input_description: str
    schema_version: str
    definitions: list[str]
    """Definition strings in context: validation knows them, the grammar offers their names."""
    current_annotation: str
    validation_status: ValidationStatus
    validation_errors: list[str]
    """For the user: ``CODE: message``."""
    validation_warnings: list[str]
    validation_errors_augmented: list[str]
    """For the model: each error with what is wrong, the fix and the closest valid tags."""
    validator: str
    validator_note: str
    """Why hedtools answered although the JS validator was asked for ('' otherwise)."""
    is_valid: bool
    is_faithful: bool | None
    is_complete: bool | None
    evaluation_feedback: str
    assessment_feedback: str
    portability_warnings: list[str]
    feedback: str
    """The summariser's message for the next annotation attempt."""
    run_assessment: bool
    run_evaluation: bool
    validation_attempts: int
    total_iterations: int
    max_validation_attempts: int
    max_total_iterations: int
    first_try_valid: bool | None
    history: Annotated[list[dict[str, Any]], operator.add]
    """One entry per attempt: annotation, validity, error codes, faithfulness."""


class FaithfulnessVerdict(BaseModel):
    """Your judgement of the annotation against the description."""

    faithful: bool = Field(
        description="True when the annotation says what the description says, nothing false."
    )
    feedback: str = Field(
        default="",
        max_length=600,
        description="What is wrong or missing, naming the tags to add, change or remove.",
    )


class AssessmentVerdict(BaseModel):
    """Your completeness check of the final annotation."""

    complete: bool = Field(description="True when no important dimension of the event is missing.")
    missing: list[str] = Field(
        default_factory=list,
        max_length=6,
        description="Missing dimensions (e.g. 'colour of the stimulus', 'response hand').",
    )
    feedback: str = Field(default="", max_length=600, description="One or two sentences.")


class HedDecision(Decision):
    """The outcome of one annotation run; ``--json`` and the API return it."""

    verdict: HedVerdict = Field(description="VALID, INVALID or NEEDS_REVIEW.")
    description: str = ""
    annotation: str = ""
    schema_version: str = "8.3.0"
    validation_status: ValidationStatus = "pending"
    validation_errors: list[str] = Field(default_factory=list)
    validation_warnings: list[str] = Field(default_factory=list)
    validation_errors_augmented: list[str] = Field(default_factory=list)
    validator: str = ""
    validator_note: str = ""
    is_valid: bool = False
    is_faithful: bool | None = None
    is_complete: bool | None = None
    evaluation_feedback: str = ""
    assessment_feedback: str = ""
    portability_warnings: list[str] = Field(default_factory=list)
    validation_attempts: int = 0
    total_iterations: int = 0
    first_try_valid: bool | None = None
    final_status: str = ""
    """Which checks held, in words: 'valid, faithful, complete' or 'valid but not faithful'."""
    history: list[dict[str, Any]] = Field(default_factory=list)


def decision_json(decision: HedDecision) -> dict[str, Any]:
    """The decision as one JSON document: its fields plus how the run ended."""
    data = decision.model_dump(mode="json")
    run = decision.run
    if run is not None:
        usage = run.usage
        data["run"] = {
            "ended_by": str(run.ended_by),
            "detail": run.detail,
            "strategy": run.strategy,
            "model": run.model,
            "run_id": run.run_id,
            "usage": usage.to_dict() if hasattr(usage, "to_dict") else None,
            "decided_by": run.decided_by,  # in a cascade: the layer whose answer stood
            "layers": [LayerOutcome.model_validate(o).brief() for o in run.layers],
        }
    return data


# ---------------------------------------------------------------------- review
REVIEW_WAITING = "waiting"
"""An answer nobody was sure of, waiting for a person."""
REVIEW_DECIDED = "decided"


@dataclass(frozen=True)
class StoredAnnotation:
    """One stored run as the review face reads it."""

    id: int
    run_id: str
    description: str
    annotation: str
    schema_version: str
    verdict: str
    strategy: str
    model: str | None
    result: dict[str, Any]
    created_at: datetime
    review_status: str | None
    review_outcome: str | None
    corrected_annotation: str | None
    decided_by: str | None
    decided_at: datetime | None
    review_note: str | None
