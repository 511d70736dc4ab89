"""Pydantic records, enums, the strategy input and the decision of the receipts app (no logic)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from casework.runtime.decision import Decision

__all__ = [
    "DECISION_THRESHOLD",
    "HUMAN",
    "LABEL_DEFINITIONS",
    "MONEY_LABELS",
    "ROLES",
    "Box",
    "EdgeCase",
    "FixOutcome",
    "Label",
    "LabelDecision",
    "LabelInput",
    "Line",
    "Place",
    "QueuedLabel",
    "Receipt",
    "ValidationStatus",
    "Verdict",
    "Word",
    "WordRef",
]

Verdict = Literal["VALID", "INVALID", "NEEDS_REVIEW"]

ROLES = {"agent": "specialist"}
"""The model role each agent asks the run config's models for, the labelling agent's first."""
DECISION_THRESHOLD = 80.0
"""VALID / INVALID need a confidence strictly above this (spec: 'High confidence (>80%)')."""
HUMAN = "human:"
"""How a label's ``validated_by`` starts when a person decided (``human:<name>``)."""


class ValidationStatus(StrEnum):
    """Where a label stands. Labels start PENDING (proposed) or VALID (imported from a labelled file)."""

    PENDING = "PENDING"
    VALID = "VALID"
    INVALID = "INVALID"
    NEEDS_REVIEW = "NEEDS_REVIEW"


class FixOutcome(StrEnum):
    """What the harmoniser does with one outlier (the spec's ``apply_fixes_from_results``)."""

    RELABEL = "RELABEL"
    """The suggestion was validated above the threshold: a new label replaces the old one."""
    MARK_INVALID = "MARK_INVALID"
    """Low confidence: the old label is marked INVALID (wrong, but the right one is unknown)."""
    REVIEW = "REVIEW"
    """Medium confidence: the suggestion goes to the NEEDS_REVIEW queue for a person."""
    KEEP = "KEEP"
    """No suggestion, and the current label was confirmed: nothing changes."""


# One line per label type: what the model and the README see. Money labels go on the amount,
# not on the keyword next to it.
LABEL_DEFINITIONS: dict[str, str] = {
    "MERCHANT_NAME": "the store's or restaurant's name, usually in the header or a thank-you line",
    "BUSINESS_NAME": "another business name printed on the receipt (not the merchant itself)",
    "ADDRESS_LINE": "part of the store's street address, city, state or ZIP code",
    "PHONE_NUMBER": "the store's telephone number",
    "WEBSITE": "a web address such as example.com",
    "STORE_HOURS": "opening hours of the store",
    "DATE": "the transaction date (or a word of it)",
    "TIME": "the transaction time (or AM/PM)",
    "PAYMENT_METHOD": "how it was paid: card brand, card type, masked card number, cash",
    "LOYALTY_ID": "a loyalty or member number or program",
    "COUPON": "a coupon code or coupon text",
    "DISCOUNT": "an amount taken off (savings, negative amounts)",
    "PRODUCT_NAME": "a word of an item's description on an item line",
    "QUANTITY": "how many units or the weight of an item",
    "UNIT_PRICE": "the price of one unit (e.g. after '@' or per lb), not the line's total",
    "LINE_TOTAL": "the amount charged for one item line (usually right-aligned)",
    "SUBTOTAL": "the amount before tax",
    "TAX": "the tax amount",
    "GRAND_TOTAL": "the final amount due or charged, tax included",
    "CHANGE": "change given back to the customer",
}

MONEY_LABELS = frozenset(
    {"UNIT_PRICE", "LINE_TOTAL", "SUBTOTAL", "TAX", "GRAND_TOTAL", "DISCOUNT", "CHANGE"}
)


@dataclass(frozen=True)
class WordRef:
    """The run context of one validation: which word, which suggested label.

    Tools read it through ``ToolRuntime``; the model never chooses these values.
    """

    image_id: str
    receipt_id: int
    line_id: int
    word_id: int
    suggested_label: str
    word_text: str = ""
    merchant_name: str = ""
    original_reasoning: str = ""
    blind: bool = False
    """Hide the word's own stored labels from every source (evaluation: the answer can't leak)."""

    @property
    def receipt_key(self) -> str:
        return f"{self.image_id}#{self.receipt_id}"


class Box(BaseModel):
    """A bounding box as in the source files: x0, y0, x1, y1 (y grows upwards)."""

    x0: float
    y0: float
    x1: float
    y1: float


class Receipt(BaseModel):
    id: int
    image_id: str
    receipt_id: int
    slug: str
    """Short handle for the CLI (from the file name), unique."""
    merchant_name: str
    source: str
    place_id: int | None = None
    line_count: int = 0
    word_count: int = 0
    imported_at: datetime | None = None

    @property
    def key(self) -> str:
        return f"{self.image_id}#{self.receipt_id}"


class Line(BaseModel):
    line_id: int
    text: str
    box: Box


class Word(BaseModel):
    id: int
    receipt_pk: int
    line_id: int
    word_id: int
    token_index: int
    text: str
    box: Box


class Place(BaseModel):
    """Merchant metadata (what Google Places would return)."""

    id: int | None = None
    name: str
    address: str = ""
    phone: str = ""
    website: str = ""
    hours: str = ""
    source: str = "receipt"


class Label(BaseModel):
    """One row of the append-only label history."""

    id: int
    receipt_pk: int
    word_pk: int
    line_id: int
    word_id: int
    word_text: str = ""
    label_type: str
    status: ValidationStatus
    reasoning: str = ""
    confidence: float | None = None
    proposed_by: str
    validated_by: str | None = None
    created_at: datetime
    validated_at: datetime | None = None
    replaces_id: int | None = None
    """The label this row supersedes (same word). A superseded label is history, not current."""
    consolidated_from_id: int | None = None
    """The label whose type this one replaces (a relabel), for the consolidation chain."""
    current: bool = True


@dataclass(frozen=True)
class QueuedLabel:
    """A NEEDS_REVIEW label as the review inbox lists it."""

    id: int
    label_type: str
    created_at: datetime
    confidence: float | None
    reasoning: str
    word_text: str
    line_id: int
    receipt_slug: str
    merchant_name: str
    instead_of: str | None
    """The label type it would replace (a relabel), if any."""


class EdgeCase(BaseModel):
    """A known invalid pattern: ``pattern`` (a regex matched against the whole word) can't carry ``label_type``."""

    id: int
    label_type: str
    pattern: str
    reason: str
    merchant_name: str | None = None


class LabelInput(BaseModel):
    """What a strategy decides on: one word and the label suggested for it.

    The same keys as the evaluation cases' ``inputs``; ``receipt`` is ``image_id#n`` (or a
    slug / id prefix the repository resolves)."""

    receipt: str
    line_id: int
    word_id: int
    suggested_label: str
    word: str | None = None
    """The word's text as the caller saw it; when given, the stored word must match."""
    merchant: str | None = None
    reason: str = ""
    """Why the label was suggested (the model reads it)."""
    blind: bool = False
    """Hide the word's own stored labels from every source (evaluation: the answer can't leak)."""


class LabelDecision(Decision):
    """Whether a suggested label fits its word. VALID or INVALID only with confidence above
    80; otherwise NEEDS_REVIEW (the policy enforces it after the model)."""

    verdict: Verdict = Field(description="VALID, INVALID or NEEDS_REVIEW.")
    reasoning: str = Field(
        max_length=500, description="One or two sentences: the evidence that decided it."
    )
    raw_verdict: SkipJsonSchema[Verdict | None] = None
    """The verdict before the policy; differs when a low-confidence VALID/INVALID was downgraded."""
    policy_applied: SkipJsonSchema[bool] = False
    calibrated_confidence: SkipJsonSchema[float | None] = None
    """The confidence the threshold acted on, when a stored calibration mapped it."""
    unavailable: SkipJsonSchema[list[str]] = Field(default_factory=list)
    """Sources that answered 'unavailable' during this decision."""
