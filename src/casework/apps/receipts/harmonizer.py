"""The batch harmoniser: find outlier labels, validate a replacement, apply fixes by confidence.

``find_outliers`` walks the current labels of a merchant (or all) and flags a label when it
matches a known invalid pattern or when similar words overwhelmingly carry another label;
the replacement it suggests is the label those similar words carry (or what an amount's
line says it is: SUBTOTAL, TAX, TOTAL...). ``validate_outliers`` validates each suggestion
with the chosen strategy through the platform's batch seam (``run_batch``: bounded
concurrency, locally on threads with one look-up cache per run, or on Ray workers that each
open the stores and the model themselves). ``fixes.plan_fixes`` turns validations into
outcomes by confidence and ``fixes.apply_fixes`` appends their label rows.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from casework.apps.receipts import evidence
from casework.apps.receipts.fixes import PlannedFix, apply_fixes, plan_fixes
from casework.apps.receipts.models import (
    MONEY_LABELS,
    FixOutcome,
    Label,
    LabelDecision,
    LabelInput,
    Receipt,
    ValidationStatus,
    WordRef,
)
from casework.apps.receipts.rules import amount_role
from casework.apps.receipts.vectors import (
    Neighbour,
    VectorsUnavailable,
    similar_words_batch,
    word_doc_id,
)
from casework.config import Settings
from casework.runtime.batch import BatchConfig, BatchResult, arun_batch
from casework.runtime.cache import LookupCache
from casework.runtime.context import Caller
from casework.runtime.runconfig import RunConfig

if TYPE_CHECKING:
    from casework.apps.receipts.deps import ReceiptsDeps
    from casework.apps.receipts.strategies import LabelStrategy

__all__ = [
    "HarmonizeReport",
    "Outlier",
    "find_outliers",
    "harmonize",
    "suggest_from_context",
    "validate_outliers",
]

NEIGHBOURS = 10
OUTLIER_SHARE = 0.2
"""A label is an outlier when at most this share of its similar words carries it..."""
DOMINANT_SHARE = 0.5
"""...and at least this share carries one other label (or none)."""
SUGGEST_SHARE = 0.3
_KEYWORD_ROLES = {"SUBTOTAL", "TAX", "GRAND_TOTAL", "CHANGE"}


@dataclass
class Outlier:
    label: Label
    receipt: Receipt
    line_text: str
    reasons: list[str]
    suggestion: str | None
    votes: dict[str, float] = field(default_factory=dict)

    def ref(self) -> WordRef:
        """The validation to run: the suggestion, or (without one) the current label itself."""
        return WordRef(
            image_id=self.receipt.image_id,
            receipt_id=self.receipt.receipt_id,
            line_id=self.label.line_id,
            word_id=self.label.word_id,
            suggested_label=self.suggestion or self.label.label_type,
            word_text=self.label.word_text,
            merchant_name=self.receipt.merchant_name,
            # Neutral on purpose: the harmoniser's own evidence (votes, edge cases) is what the
            # tools return anyway, and repeating it as the suggester's reason sways small models.
            original_reasoning=f"the harmoniser flagged the current label {self.label.label_type} as a possible outlier",
        )


@dataclass
class HarmonizeReport:
    strategy: str
    model: str | None
    merchant: str | None
    dry_run: bool
    labels_scanned: int = 0
    fixes: list[PlannedFix] = field(default_factory=list)
    seconds: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    vector_error: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(f.outcome.value for f in self.fixes)
        return {o.value: c.get(o.value, 0) for o in FixOutcome}

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "model": self.model,
            "merchant": self.merchant,
            "dry_run": self.dry_run,
            "labels_scanned": self.labels_scanned,
            "outliers": len(self.fixes),
            "outcomes": self.counts,
            "seconds": round(self.seconds, 2),
            "cache": {"hits": self.cache_hits, "misses": self.cache_misses},
            "vector_error": self.vector_error,
            "fixes": [
                {
                    "label_id": f.outlier.label.id,
                    "receipt": f.outlier.receipt.slug,
                    "line_id": f.outlier.label.line_id,
                    "word_id": f.outlier.label.word_id,
                    "word": f.outlier.label.word_text,
                    "label": f.outlier.label.label_type,
                    "suggestion": f.outlier.suggestion,
                    "reasons": f.outlier.reasons,
                    "decision": f.validation.verdict if f.validation else None,
                    "confidence": f.validation.confidence if f.validation else None,
                    "outcome": f.outcome.value,
                    "applied_label_ids": f.applied_ids,
                    "error": f.error,
                }
                for f in self.fixes
            ],
        }


def suggest_from_context(text: str, line_text: str) -> str | None:
    """What an amount's line says it is (SUBTOTAL, TAX, GRAND_TOTAL, CHANGE, DISCOUNT), if anything."""
    role = amount_role(text, line_text, rightmost=True, amounts_on_line=1, section="totals")
    return role if role in ("SUBTOTAL", "TAX", "GRAND_TOTAL", "CHANGE", "DISCOUNT") else None


def _votes(found: list[Neighbour]) -> dict[str, float]:
    total = sum(max(nb.similarity, 0.0) for nb in found) or 1.0
    votes: dict[str, float] = defaultdict(float)
    for nb in found:
        if nb.status in ("VALID", "PENDING", "NONE"):
            votes[nb.label] += max(nb.similarity, 0.0) / total
    return dict(sorted(votes.items(), key=lambda kv: -kv[1]))


def _candidates(labels: list[Label]) -> tuple[list[Label], dict[int, set[str]]]:
    """(the labels to question, the labels already rejected per word). Labels with a pending
    review are skipped, and a person's decision is final: labels a reviewer confirmed are not
    questioned again."""
    under_review = {lab.word_pk for lab in labels if lab.status == ValidationStatus.NEEDS_REVIEW}
    rejected: dict[int, set[str]] = defaultdict(set)
    for lab in labels:
        if lab.status == ValidationStatus.INVALID:
            rejected[lab.word_pk].add(lab.label_type)
    candidates = [
        lab
        for lab in labels
        if lab.status in (ValidationStatus.VALID, ValidationStatus.PENDING)
        and lab.word_pk not in under_review
        and not (lab.validated_by or "").startswith("human:")
    ]
    return candidates, rejected


def _neighbour_votes(
    deps: ReceiptsDeps, receipt: Receipt, candidates: list[Label]
) -> dict[int, dict[str, float]]:
    """Per candidate label id, the label votes of its similar words (none without vectors)."""
    ids = {
        lab.id: word_doc_id(receipt.image_id, receipt.receipt_id, lab.line_id, lab.word_id)
        for lab in candidates
    }
    try:
        near = (
            similar_words_batch(deps.vectors, list(ids.values()), n=NEIGHBOURS)
            if candidates
            else {}
        )
    except VectorsUnavailable:
        near = {}
    return {label_id: _votes(near.get(doc_id, [])) for label_id, doc_id in ids.items()}


def _outlier(
    deps: ReceiptsDeps,
    lab: Label,
    receipt: Receipt,
    line_text: str,
    votes: dict[str, float],
    rejected: set[str],
) -> Outlier | None:
    """The label as an outlier with its reasons and suggestion, or None when nothing flags it."""
    reasons = []
    edges = evidence.edge_case_matches(
        evidence.edge_cases_for(deps, lab.label_type), lab.word_text, receipt.merchant_name
    )
    if edges:
        reasons.append(f"edge case: {edges[0].reason}")
    own = votes.get(lab.label_type, 0.0)
    others = [(k, v) for k, v in votes.items() if k != lab.label_type]
    if votes and own <= OUTLIER_SHARE and others and others[0][1] >= DOMINANT_SHARE:
        top = others[0][0]
        what = "no label" if top == "NONE" else top
        reasons.append(
            f"{own:.0%} of similar words are {lab.label_type}, {others[0][1]:.0%} are {what}"
        )
    context = suggest_from_context(lab.word_text, line_text)
    if lab.label_type in MONEY_LABELS and context in _KEYWORD_ROLES and context != lab.label_type:
        reasons.append(f"the line makes this amount {context}")
    if not reasons:
        return None
    suggestion = next((k for k, v in others if k != "NONE" and v >= SUGGEST_SHARE), None)
    if (
        context
        and context != lab.label_type
        and (suggestion is None or lab.label_type in MONEY_LABELS)
    ):
        suggestion = context
    if suggestion == lab.label_type:
        suggestion = None
    if suggestion in rejected:
        # Already rejected for this word: don't ask again; keep only pattern evidence.
        suggestion = None
        reasons = [r for r in reasons if r.startswith("edge case")]
        if not reasons:
            return None
    return Outlier(
        label=lab,
        receipt=receipt,
        line_text=line_text,
        reasons=reasons,
        suggestion=suggestion,
        votes={k: round(v, 2) for k, v in list(votes.items())[:4]},
    )


def find_outliers(
    deps: ReceiptsDeps, *, merchant: str | None = None, limit: int | None = None
) -> tuple[list[Outlier], int]:
    """(outliers, labels scanned). Labels with a pending review are skipped."""
    receipts = deps.repo.list_receipts(merchant=merchant)
    if merchant and not receipts:
        from casework.errors import NotFoundError

        known = ", ".join(deps.repo.merchants())
        raise NotFoundError(f"No receipts of merchant {merchant!r}; known merchants: {known}.")
    outliers: list[Outlier] = []
    scanned = 0
    for receipt in receipts:
        candidates, rejected = _candidates(deps.repo.current_labels(receipt_pk=receipt.id))
        scanned += len(candidates)
        lines = {ln.line_id: ln.text for ln in deps.repo.lines(receipt.id)}
        votes = _neighbour_votes(deps, receipt, candidates)
        for lab in candidates:
            found = _outlier(
                deps,
                lab,
                receipt,
                lines.get(lab.line_id, ""),
                votes[lab.id],
                rejected[lab.word_pk],
            )
            if found is None:
                continue
            outliers.append(found)
            if limit is not None and len(outliers) >= limit:
                return outliers, scanned
    return outliers, scanned


def label_input(ref: WordRef) -> LabelInput:
    return LabelInput(
        receipt=ref.receipt_key,
        line_id=ref.line_id,
        word_id=ref.word_id,
        word=ref.word_text,
        suggested_label=ref.suggested_label,
        merchant=ref.merchant_name,
        reason=ref.original_reasoning,
        blind=ref.blind,
    )


OpenDeps = Callable[[Settings], "ReceiptsDeps"]
"""How a Ray worker opens the app's deps from the settings (the app's ``build_deps``)."""


@dataclass
class _Validate:
    """The batch's ``fn``: validates one word with ``strategy``.

    Locally it runs on the caller's ``deps`` and run ``config``. Stores and models do not
    travel to a Ray worker, so there it arrives without either and opens its own on its first
    item (once per worker process), from ``settings`` (with ``open_deps``: the app's
    ``build_deps``), the ``model`` spec and the caller's ``tenant``.
    """

    strategy: LabelStrategy
    settings: Settings
    open_deps: OpenDeps
    model: str | None = None
    tenant: Caller | None = None
    deps: ReceiptsDeps | None = None
    config: RunConfig | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "deps": None, "config": None}

    def __call__(self, ref: WordRef) -> LabelDecision:
        if self.deps is None:
            deps = self.open_deps(self.settings)
            self.deps = deps.for_tenant(self.tenant).with_cache(LookupCache())
        if self.config is None:
            self.config = RunConfig.of(self.settings, self.model, caller=self.tenant)
        return self.strategy(label_input(ref), self.deps, self.config)


async def validate_outliers(
    outliers: list[Outlier],
    deps: ReceiptsDeps,
    strategy: LabelStrategy,
    config: RunConfig,
    *,
    open_deps: OpenDeps,
    concurrency: int = 2,
    executor: str = "local",
    address: str | None = None,
    on_done: Callable[[Outlier, LabelDecision | None], None] | None = None,
) -> list[tuple[Outlier, LabelDecision | None, str | None]]:
    """Validate each outlier's suggestion under ``config`` with at most ``concurrency`` in
    flight, through the platform's batch seam on ``executor`` (``local`` or ``ray`` at
    ``address``; a Ray worker resolves the config's model spec itself). A failure of one
    validation is recorded (and sends that outlier to review), never raised."""

    def done(item: BatchResult[LabelDecision]) -> None:
        if on_done:
            on_done(outliers[item.index], item.value)

    local = executor == "local"
    validate = _Validate(
        strategy,
        deps.settings,
        open_deps,
        model=config.models.override,
        tenant=deps.tenant,
        deps=deps if local else None,
        config=config if local else None,
    )
    results = await arun_batch(
        [o.ref() for o in outliers],
        validate,
        BatchConfig(
            executor=executor,
            address=address,
            concurrency=max(1, concurrency),
            progress=done,
        ),
    )
    return [
        (o, r.value, None if r.error is None else f"{type(r.error).__name__}: {r.error}")
        for o, r in zip(outliers, results, strict=True)
    ]


async def harmonize(
    deps: ReceiptsDeps,
    strategy_name: str,
    strategy: LabelStrategy,
    config: RunConfig | None = None,
    *,
    open_deps: OpenDeps,
    merchant: str | None = None,
    dry_run: bool = False,
    concurrency: int = 2,
    executor: str = "local",
    address: str | None = None,
    limit: int | None = None,
    on_found: Callable[[int], None] | None = None,
    on_done: Callable[[Outlier, LabelDecision | None], None] | None = None,
) -> HarmonizeReport:
    """Find outliers, validate each suggestion with ``strategy`` (the app's strategy named
    ``strategy_name``) on ``deps`` under ``config`` (default: the settings' models) through
    ``run_batch`` (``executor`` local or ray at ``address``, where ``open_deps`` opens a worker's
    deps), plan, and (unless ``dry_run``) apply."""
    started = time.perf_counter()
    cache = deps.cache or LookupCache()
    report = HarmonizeReport(strategy=strategy_name, model=None, merchant=merchant, dry_run=dry_run)
    if deps.vectors is None:
        report.vector_error = deps.vectors_error or "no vector store"
    outliers, report.labels_scanned = find_outliers(deps, merchant=merchant, limit=limit)
    if on_found:
        on_found(len(outliers))
    results = await validate_outliers(
        outliers,
        deps,
        strategy,
        config or RunConfig.of(deps.settings, caller=deps.tenant),
        open_deps=open_deps,
        concurrency=concurrency,
        executor=executor,
        address=address,
        on_done=on_done,
    )
    models = [v.run.model for _, v, _ in results if v is not None and v.run is not None]
    report.model = next((m for m in models if m), None)
    report.fixes = plan_fixes(results)
    if not dry_run:
        apply_fixes(deps, report.fixes)
    report.cache_hits, report.cache_misses = cache.hits, cache.misses
    report.seconds = time.perf_counter() - started
    return report
