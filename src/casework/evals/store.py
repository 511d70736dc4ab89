"""Evaluation runs in the relational store: save, list, load, resolve an id.

Tables ``eval_runs`` (one row per run: summary metrics, details, targets, config) and
``eval_case_results`` (one row per case: the columns ``list`` and ``compare`` filter on, plus
the whole ``CaseResult`` as JSON). They come from the ``evals`` Alembic branch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    delete,
    select,
)
from sqlalchemy.orm import Mapped, mapped_column

from casework.config import Settings, get_settings
from casework.errors import InputError, NotFoundError
from casework.evals.results import CaseResult, EvalRun, TargetResult
from casework.stores.sql import Base, get_engine, migrate, session_scope

__all__ = [
    "CaseRow",
    "RunRow",
    "RunSummary",
    "delete_run",
    "list_runs",
    "load_run",
    "resolve_run_id",
    "save_run",
]


class RunRow(Base):
    __tablename__ = "eval_runs"

    id: Mapped[str] = mapped_column(String(120), primary_key=True)
    app: Mapped[str] = mapped_column(String(80), index=True)
    strategy: Mapped[str] = mapped_column(String(80))
    model: Mapped[str | None] = mapped_column(String(300))
    judge_model: Mapped[str | None] = mapped_column(String(300))
    dataset: Mapped[str] = mapped_column(String(1000))
    dataset_sha256: Mapped[str] = mapped_column(String(64), index=True)
    status: Mapped[str] = mapped_column(String(20))
    n_cases: Mapped[int] = mapped_column(Integer)
    n_errors: Mapped[int] = mapped_column(Integer)
    accuracy: Mapped[float | None] = mapped_column(Float)
    targets_met: Mapped[bool | None] = mapped_column(Boolean)
    wall_seconds: Mapped[float] = mapped_column(Float)
    concurrency: Mapped[int] = mapped_column(Integer)
    run_dir: Mapped[str | None] = mapped_column(String(1000))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    metrics_json: Mapped[str] = mapped_column(Text)
    details_json: Mapped[str] = mapped_column(Text)
    targets_json: Mapped[str] = mapped_column(Text)
    config_json: Mapped[str] = mapped_column(Text)


class CaseRow(Base):
    __tablename__ = "eval_case_results"

    run_id: Mapped[str] = mapped_column(
        String(120), ForeignKey("eval_runs.id", ondelete="CASCADE"), primary_key=True
    )
    case_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    verdict: Mapped[str | None] = mapped_column(String(200))
    expected_verdict: Mapped[str | None] = mapped_column(String(200))
    correct: Mapped[bool | None] = mapped_column(Boolean)
    confidence: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    ended_by: Mapped[str | None] = mapped_column(String(60))
    wall_seconds: Mapped[float] = mapped_column(Float)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    total_tokens: Mapped[int] = mapped_column(Integer)
    judge_score: Mapped[float | None] = mapped_column(Float)
    trace: Mapped[str | None] = mapped_column(String(1000))
    result_json: Mapped[str] = mapped_column(Text)


@dataclass
class RunSummary:
    """A stored run without its cases, for ``casework eval list``."""

    run_id: str
    app: str
    strategy: str
    model: str | None
    judge_model: str | None
    dataset: str
    status: str
    cases: int
    errors: int
    accuracy: float | None
    targets_met: bool | None
    wall_seconds: float
    created_at: str
    run_dir: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_migrated: set[str] = set()


def _engine(settings: Settings | None) -> Engine:
    settings = settings or get_settings()
    url = settings.db_url
    engine = get_engine(url)
    if url not in _migrated:
        migrate(engine)
        _migrated.add(url)
    return engine


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _created(run: EvalRun) -> datetime:
    try:
        value = datetime.fromisoformat(run.created_at)
    except ValueError:
        value = datetime.now(UTC)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def save_run(run: EvalRun, *, settings: Settings | None = None) -> None:
    """Store a run and its cases, replacing a run with the same id; all or nothing."""
    with session_scope(_engine(settings)) as s:
        s.execute(delete(CaseRow).where(CaseRow.run_id == run.run_id))
        s.execute(delete(RunRow).where(RunRow.id == run.run_id))
        s.flush()
        s.add(
            RunRow(
                id=run.run_id,
                app=run.app,
                strategy=run.strategy,
                model=run.model,
                judge_model=run.judge_model,
                dataset=run.dataset,
                dataset_sha256=run.dataset_sha256,
                status=run.status,
                n_cases=len(run.cases),
                n_errors=sum(1 for c in run.cases if c.error),
                accuracy=run.metrics.get("verdict_accuracy", run.metrics.get("accuracy")),
                targets_met=run.targets_met,
                wall_seconds=run.wall_seconds,
                concurrency=run.concurrency,
                run_dir=run.run_dir,
                created_at=_created(run),
                metrics_json=_dumps(run.metrics),
                details_json=_dumps(run.details),
                targets_json=_dumps(
                    {
                        "targets": run.targets,
                        "results": [t.to_dict() for t in run.target_results],
                        "labels": run.labels,
                    }
                ),
                config_json=_dumps(run.config),
            )
        )
        s.flush()
        for c in run.cases:
            s.add(
                CaseRow(
                    run_id=run.run_id,
                    case_id=c.case_id,
                    position=c.index,
                    verdict=c.verdict,
                    expected_verdict=c.expected_verdict,
                    correct=c.correct,
                    confidence=c.confidence,
                    error=c.error,
                    ended_by=c.ended_by,
                    wall_seconds=c.wall_seconds,
                    cost_usd=c.efficiency.get("cost_usd"),
                    total_tokens=int(c.efficiency.get("total_tokens") or 0),
                    judge_score=(c.judge or {}).get("score"),
                    trace=c.trace,
                    result_json=_dumps(c.to_dict()),
                )
            )


def _iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


def _summary(row: RunRow) -> RunSummary:
    return RunSummary(
        run_id=row.id,
        app=row.app,
        strategy=row.strategy,
        model=row.model,
        judge_model=row.judge_model,
        dataset=row.dataset,
        status=row.status,
        cases=row.n_cases,
        errors=row.n_errors,
        accuracy=row.accuracy,
        targets_met=row.targets_met,
        wall_seconds=row.wall_seconds,
        created_at=_iso(row.created_at),
        run_dir=row.run_dir,
    )


def list_runs(
    *, app: str | None = None, limit: int = 50, settings: Settings | None = None
) -> list[RunSummary]:
    """Stored runs, newest first."""
    with session_scope(_engine(settings)) as s:
        q = select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc()).limit(limit)
        if app:
            q = q.where(RunRow.app == app)
        return [_summary(r) for r in s.scalars(q)]


def resolve_run_id(ref: str, *, settings: Settings | None = None) -> str:
    """A full run id from an id or a unique prefix of one; ``latest`` (or ``latest:APP``) is
    the newest run (of that app)."""
    ref = ref.strip()
    with session_scope(_engine(settings)) as s:
        if ref == "latest" or ref.startswith("latest:"):
            app = ref.partition(":")[2] or None
            q = select(RunRow.id).order_by(RunRow.created_at.desc(), RunRow.id.desc()).limit(1)
            if app:
                q = q.where(RunRow.app == app)
            found = s.scalar(q)
            if found is None:
                raise NotFoundError(
                    "There are no stored evaluation runs yet: run `casework eval APP` first."
                )
            return found
        if s.get(RunRow, ref) is not None:
            return ref
        matches = list(
            s.scalars(select(RunRow.id).where(RunRow.id.startswith(ref, autoescape=True)).limit(3))
        )
    if not matches:
        raise NotFoundError(
            f"No evaluation run {ref!r}: `casework eval list` shows the stored runs."
        )
    if len(matches) > 1:
        raise InputError(
            f"Run id {ref!r} is ambiguous ({', '.join(matches[:2])}, ...); give more of it."
        )
    return matches[0]


def load_run(ref: str, *, settings: Settings | None = None) -> EvalRun:
    """A stored run with its cases, by id, unique prefix or ``latest``."""
    run_id = resolve_run_id(ref, settings=settings)
    with session_scope(_engine(settings)) as s:
        row = s.get(RunRow, run_id)
        assert row is not None
        cases = [
            CaseResult.from_dict(json.loads(r.result_json))
            for r in s.scalars(
                select(CaseRow).where(CaseRow.run_id == run_id).order_by(CaseRow.position)
            )
        ]
        targets = json.loads(row.targets_json)
        return EvalRun(
            run_id=row.id,
            app=row.app,
            strategy=row.strategy,
            dataset=row.dataset,
            dataset_sha256=row.dataset_sha256,
            created_at=_iso(row.created_at),
            model=row.model,
            judge_model=row.judge_model,
            concurrency=row.concurrency,
            wall_seconds=row.wall_seconds,
            run_dir=row.run_dir,
            status=row.status,
            labels=targets.get("labels", []),
            targets=targets.get("targets", {}),
            metrics=json.loads(row.metrics_json),
            details=json.loads(row.details_json),
            target_results=[TargetResult(**t) for t in targets.get("results", [])],
            config=json.loads(row.config_json),
            cases=cases,
        )


def delete_run(ref: str, *, settings: Settings | None = None) -> str:
    """Delete a stored run (its files stay); returns the id deleted."""
    run_id = resolve_run_id(ref, settings=settings)
    with session_scope(_engine(settings)) as s:
        s.execute(delete(CaseRow).where(CaseRow.run_id == run_id))
        s.execute(delete(RunRow).where(RunRow.id == run_id))
    return run_id
