"""The documents app's domain values and its Decision subclass; no logic."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from casework.runtime.decision import Decision

__all__ = [
    "ROLES",
    "DocumentInfo",
    "ExtractionDecision",
    "ExtractionInfo",
    "ExtractionInput",
    "ExtractionStatus",
    "FailedExtraction",
    "StackInfo",
    "StackTable",
    "TenancyDecision",
]

ExtractionStatus = Literal["in_progress", "completed", "failed"]
Mode = Literal["auto", "custom"]

ROLES = {"agent": "specialist"}
"""The model role each agent asks the run config's models for, the extraction agent's first
(a ``--model`` is checked on it before a run starts)."""


@dataclass(frozen=True)
class DocumentInfo:
    id: int
    filename: str
    media_type: str
    size_bytes: int
    page_count: int
    engine: str
    ocr_pages: int
    read_seconds: float
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"created_at": self.created_at.isoformat()}


@dataclass(frozen=True)
class ExtractionInfo:
    id: int
    document_id: int
    status: ExtractionStatus
    reason: str
    mode: Mode
    requested_fields: list[str] | None
    document_type: str | None
    fields: dict[str, Any]
    confidence_scores: dict[str, Any]
    method: str
    updated_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"updated_at": self.updated_at.isoformat()}


@dataclass(frozen=True)
class FailedExtraction:
    """An extraction that ended ``failed``, with its document and owner (a review item)."""

    extraction: ExtractionInfo
    owner_id: int
    filename: str
    media_type: str


@dataclass(frozen=True)
class StackTable:
    columns: list[dict[str, Any]]
    status: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    """``{"document_id", "filename", "cells", "confidences"}`` per document."""


@dataclass(frozen=True)
class StackInfo:
    id: int
    name: str
    document_ids: list[int]
    table: StackTable | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ExtractionInput(BaseModel):
    """One extraction to run: which document, and custom field names or auto mode."""

    document_id: int
    user_id: int
    fields: list[str] | None = Field(
        default=None, description="Custom mode: extract exactly these names; None is auto mode."
    )
    extraction_id: int | None = Field(
        default=None, description="An in_progress row made beforehand (the API creates it first)."
    )
    run_id: str | None = None


class ExtractionDecision(Decision):
    """How an extraction ended: ``completed`` or ``failed`` with a reason, never in_progress.

    ``confidence`` is the mean field confidence (0-100); evidence cites each top-level field.
    """

    verdict: Literal["completed", "failed"]
    extraction_id: int
    document_id: int
    document_type: str | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    confidence_scores: dict[str, Any] = Field(default_factory=dict)
    method: str = "agent"


class TenancyDecision(Decision):
    """How one attack of the adversarial tenancy suite ended: ``contained`` when it neither
    read nor changed anything of the other user's, else ``leaked`` with what got through."""

    verdict: Literal["contained", "leaked"]
    attack: str
    attempts: int = 0
    cross_tenant_reads: int = 0
    cross_tenant_writes: int = 0
    details: list[str] = Field(default_factory=list)
