"""What a run produces: one ``CaseResult`` per case and an ``EvalRun`` around them.

Both are plain dataclasses that round-trip through JSON (``to_dict`` / ``from_dict``), so the
report, the store and ``compare`` all read the same shape.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = ["CaseResult", "EvalRun", "TargetResult"]


@dataclass
class CaseResult:
    """One case: what went in, what came out, and every score it got."""

    case_id: str
    index: int
    """Position in the dataset (0-based); reports and judge caps follow this order."""
    inputs: dict[str, Any] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    output: dict[str, Any] | None = None
    error: str | None = None
    """``Type: message`` when the strategy failed (after retries); the case then counts as wrong."""
    attempts: int = 1
    verdict: str | None = None
    expected_verdict: str | None = None
    correct: bool | None = None
    """Verdict match when a verdict is expected, else exact match of the expected fields;
    None when there is nothing to compare."""
    confidence: float | None = None
    """The output's confidence as a probability (0..1)."""
    ended_by: str | None = None
    decided_by: str | None = None
    """In a cascade: the layer whose answer stood."""
    layers: list[dict[str, Any]] = field(default_factory=list)
    """In a cascade: what each layer said (``LayerOutcome``), with ``right`` filled."""
    fields: dict[str, bool] = field(default_factory=dict)
    """Field match per expected field."""
    exact_match: bool | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    trajectory: dict[str, Any] | None = None
    tool_choice: dict[str, Any] | None = None
    efficiency: dict[str, Any] = field(default_factory=dict)
    domain: dict[str, Any] = field(default_factory=dict)
    """The app's own evaluators' scores."""
    judge: dict[str, Any] | None = None
    """``{"score", "passed", "rationale"}`` or ``{"error"}``; None when not judged."""
    trace: str | None = None
    """The case's JSONL trace, relative to the run directory."""
    wall_seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error is not None or self.correct is False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class TargetResult:
    metric: str
    op: str
    """``>=`` or ``<=``."""
    target: float
    value: float | None
    met: bool | None
    """None when the run has no value for the metric."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EvalRun:
    """One evaluation run of an app's strategy on a dataset."""

    run_id: str
    app: str
    strategy: str
    dataset: str
    dataset_sha256: str
    created_at: str
    """ISO 8601, UTC."""
    model: str | None = None
    judge_model: str | None = None
    concurrency: int = 1
    wall_seconds: float = 0.0
    """From the first case started to the last case scored (reports and storage excluded)."""
    run_dir: str | None = None
    status: str = "complete"
    """``complete``, or ``interrupted`` when the run was stopped before every case ran."""
    labels: list[str] = field(default_factory=list)
    targets: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    target_results: list[TargetResult] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    """How the run was made: record / replay, limit, retries, rate limits, judge cap, ..."""
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def failed_cases(self) -> list[CaseResult]:
        return [c for c in self.cases if c.failed]

    @property
    def targets_met(self) -> bool | None:
        """True when every target with a value is met; None when there are no targets."""
        judged = [t.met for t in self.target_results if t.met is not None]
        return all(judged) if judged else None

    @property
    def path(self) -> Path | None:
        return Path(self.run_dir) if self.run_dir else None

    def case(self, case_id: str) -> CaseResult | None:
        return next((c for c in self.cases if c.case_id == case_id), None)

    def to_dict(self, *, with_cases: bool = True) -> dict[str, Any]:
        data = asdict(self)
        if not with_cases:
            data.pop("cases")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalRun:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values["target_results"] = [TargetResult(**t) for t in values.get("target_results", [])]
        values["cases"] = [CaseResult.from_dict(c) for c in values.get("cases", [])]
        return cls(**values)
