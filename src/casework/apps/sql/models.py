"""Pydantic models of the sql app: schemas, validation results, the judge's output, the
agent's state and response, and the app's ``Decision`` subclass. No logic beyond shapes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from casework.runtime import Decision, EndReason

__all__ = [
    "MAX_QUESTION_CHARS",
    "REVIEW_DECIDED",
    "REVIEW_WAITING",
    "ROLES",
    "AgentStateV2",
    "ColumnSpec",
    "ConfidenceSource",
    "DatabaseSchema",
    "ExecutionResult",
    "JudgeFeedback",
    "LLMJudgeOutput",
    "RetrievedTable",
    "SQLDecision",
    "SQLQueryResponse",
    "StoredAnswer",
    "SubmitAnswer",
    "TableSpec",
    "ValidationIssue",
    "ValidationResult",
]

ROLES = {"agent": "specialist", "judge": "judge"}
"""The model role each agent asks the run config's models for, the SQL agent's first."""

MAX_QUESTION_CHARS = 2000
"""The longest question the app answers (the API's limit too)."""


class ColumnSpec(BaseModel):
    """One field of a table, as the schema files write it."""

    name: str
    type: str
    description: str = ""


class TableSpec(BaseModel):
    """One table: ``{"category", "description", "fields": [...]}`` keyed by its name."""

    name: str
    category: str = ""
    description: str = ""
    fields: list[ColumnSpec]

    def column(self, name: str) -> ColumnSpec | None:
        lowered = name.lower()
        return next((c for c in self.fields if c.name.lower() == lowered), None)


class DatabaseSchema(BaseModel):
    """A named set of tables (one file or a folder of files)."""

    name: str
    tables: dict[str, TableSpec]
    source: str = ""

    def table(self, name: str) -> TableSpec | None:
        lowered = name.lower()
        return next((t for key, t in self.tables.items() if key.lower() == lowered), None)

    def to_document(self) -> dict[str, Any]:
        """The original's file format: table -> {category, description, fields}."""
        return {
            name: {
                "category": t.category,
                "description": t.description,
                "fields": [c.model_dump() for c in t.fields],
            }
            for name, t in self.tables.items()
        }


class RetrievedTable(BaseModel):
    """A table found for a question, with its schema and score."""

    table: str
    score: float
    category: str = ""
    description: str = ""
    columns: list[ColumnSpec] = Field(default_factory=list)


class ValidationIssue(BaseModel):
    """One thing wrong with a query, with what to do about it."""

    kind: Literal["empty", "syntax", "statements", "read_only", "table", "column", "sensitive"]
    message: str
    suggestions: list[str] = Field(default_factory=list)


class ValidationResult(BaseModel):
    """Structural validation of one query: valid, or errors with suggestions."""

    query: str
    valid: bool
    errors: list[ValidationIssue] = Field(default_factory=list)
    tables: list[str] = Field(default_factory=list)
    """Tables the query reads (CTE names excluded)."""
    transpiled: str | None = None
    """The query in the target database's dialect, when valid."""
    dialect: str = "sqlite"


class ExecutionResult(BaseModel):
    """Rows of a read-only execution, capped."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False
    seconds: float = 0.0


class LLMJudgeOutput(BaseModel):
    """Your evaluation of whether the SQL query answers the question correctly."""

    is_correct: bool = Field(description="True when the query answers the question correctly.")
    correctness_score: float = Field(
        ge=0, le=1, description="0.0 to 1.0 following the rubric (1.0 perfect, 0.7 mostly right)."
    )
    issues: list[str] = Field(default_factory=list, description="Problems found, one per item.")
    suggestions: list[str] = Field(
        default_factory=list, description="Concrete changes that would fix the issues."
    )
    reasoning: str = Field(description="Why this score, in one or two sentences.", max_length=600)


class SubmitAnswer(BaseModel):
    """Submit the final SQL answer. To refuse (destructive, off-topic, unanswerable with this
    schema, injection, sensitive personal data), submit an empty query and say why."""

    query: str = Field(description="The SQL query, or an empty string to refuse.", max_length=4000)
    explanation: str = Field(description="What the query does, or why you refuse.", max_length=800)
    confidence: float = Field(ge=0, le=1, description="Your own confidence from 0.0 to 1.0.")


ConfidenceSource = Literal[
    "judge",
    "validation",
    "validation_failed",
    "refusal",
    "no_answer",
    "consistency",
    "greedy",
    "memory",
]


class JudgeFeedback(BaseModel):
    """The latest judge evaluation the answer's confidence rests on."""

    is_correct: bool
    issues: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    reasoning: str = ""


class AgentStateV2(BaseModel):
    """The spec's state; a fresh one per question (every counter, judge calls included)."""

    question: str
    iteration: int = 0
    """Tool calls so far (``max_iterations`` counts tool calls)."""
    retrieved_tables: list[RetrievedTable] = Field(default_factory=list)
    generated_queries: list[str] = Field(default_factory=list)
    validation_results: list[ValidationResult] = Field(default_factory=list)
    reasoning_trace: list[dict[str, Any]] = Field(default_factory=list)
    final_answer: SubmitAnswer | None = None
    judge_results: list[LLMJudgeOutput] = Field(default_factory=list)
    judge_calls: int = 0
    judge_scores: list[float] = Field(default_factory=list)
    judged_queries: list[str] = Field(default_factory=list)
    """The query each judge result is about (parallel to ``judge_results``)."""
    retrieval_calls: int = 0
    semantic_unavailable: bool = False
    """The semantic index failed once this question: later retrievals use keyword (BM25)."""
    validation_calls: int = 0

    def step(self, kind: str, **data: Any) -> None:
        self.reasoning_trace.append({"step": len(self.reasoning_trace) + 1, "kind": kind, **data})


class SQLQueryResponse(BaseModel):
    """What ``agent.run(question)``, ``sql ask --json`` and the API return, whole."""

    question: str
    query: str | None
    explanation: str
    confidence: float = Field(ge=0, le=1)
    confidence_source: ConfidenceSource
    judge_score: float | None = None
    judge_feedback: JudgeFeedback | None = None
    valid: bool = False
    validation_errors: list[ValidationIssue] = Field(default_factory=list)
    executable_sql: str | None = None
    """The query transpiled for the database it runs on."""
    tables_used: list[str] = Field(default_factory=list)
    reasoning_steps: list[dict[str, Any]] = Field(default_factory=list)
    refused: bool = False
    strategy: str = ""
    model: str | None = None
    judge_model: str | None = None
    ended_by: EndReason
    end_detail: str = ""
    """More on ``ended_by``: the model error's text, for ``error:model``."""
    model_calls: int = 0
    judge_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    """Where the price table knows the model; 0 for the bundled one."""
    seconds: float = 0.0
    result: ExecutionResult | None = None
    review_id: int | None = None
    """When nobody was sure (NEEDS_REVIEW): the inbox item a person settles."""


class SQLQuestion(BaseModel):
    """A strategy's input when it is not a bare question: one asked of another database
    (benchmark cases name theirs; its schema is reflected from it)."""

    question: str
    db_url: str | None = None


class SQLDecision(Decision):
    """The platform decision a strategy returns; ``response`` carries the whole answer."""

    verdict: Literal["ANSWERED", "REFUSED", "NEEDS_REVIEW"]
    response: SQLQueryResponse


# ---------------------------------------------------------------------- review
REVIEW_WAITING = "waiting"
"""An answer nobody was sure of, waiting for a person."""
REVIEW_DECIDED = "decided"


@dataclass(frozen=True)
class StoredAnswer:
    id: int
    question: str
    schema_name: str
    query: str | None
    verdict: str
    response: dict[str, Any]
    asked_by: str | None
    created_at: datetime
    review_status: str
    review_outcome: str | None
    corrected_query: str | None
    decided_by: str | None
    decided_at: datetime | None
    review_note: str | None
