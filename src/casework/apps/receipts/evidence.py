"""The evidence sources: plain functions over deps and the word under validation.

Each returns a small JSON-ready dict (bounded lists, short strings) so the tools can hand it
to a small local model as is. A source that cannot answer (no vector store, no embedding, no
place) raises ``casework.errors.SourceUnavailable``; the runtime turns it into an observation.
The agent's tools and the similarity baseline both call these.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from casework.apps.receipts.models import EdgeCase, Label, Line, Receipt, Word, WordRef
from casework.apps.receipts.places import PlacesUnavailable
from casework.apps.receipts.rules import (
    WordFacts,
    column,
    context_checks,
    line_keywords,
    normalize,
    sections,
    shape_fits,
    word_shape,
)
from casework.apps.receipts.vectors import (
    Neighbour,
    VectorsUnavailable,
    similar_words,
    word_doc_id,
    word_document,
)
from casework.errors import SourceUnavailable

if TYPE_CHECKING:
    from casework.apps.receipts.deps import ReceiptsDeps

__all__ = [
    "Target",
    "all_labels_for_word",
    "check_edge_cases",
    "edge_case_matches",
    "edge_cases_for",
    "labels_on_receipt",
    "merchant_metadata",
    "neighbours",
    "resolve_target",
    "similar_words_summary",
    "word_context",
    "word_facts",
]

AMOUNT_SHAPES = ("amount", "negative_amount")
MERCHANT_METADATA = "merchant metadata"
SIMILAR_WORDS = "similar words"
TENANT_OVERFETCH = 3
"""How many more neighbours a tenant's search asks for, since other users' words are dropped."""


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass(frozen=True)
class Target:
    receipt: Receipt
    word: Word
    lines: list[Line]
    words: list[Word]

    @property
    def doc_id(self) -> str:
        return word_doc_id(
            self.receipt.image_id, self.receipt.receipt_id, self.word.line_id, self.word.word_id
        )


def resolve_target(deps: ReceiptsDeps, ref: WordRef) -> Target:
    """The receipt, word and lines of ``ref`` (cached per receipt within a run)."""
    receipt = deps.cached(
        ("receipt", ref.image_id, ref.receipt_id),
        lambda: deps.repo.get_receipt_by_key(ref.image_id, ref.receipt_id),
    )
    lines = deps.cached(("lines", receipt.id), lambda: deps.repo.lines(receipt.id))
    words = deps.cached(("words", receipt.id), lambda: deps.repo.words(receipt.id))
    word = next((w for w in words if w.line_id == ref.line_id and w.word_id == ref.word_id), None)
    if word is None:
        word = deps.repo.get_word(receipt.id, ref.line_id, ref.word_id)  # raises NotFoundError
    return Target(receipt=receipt, word=word, lines=lines, words=words)


def _receipt_width(words: list[Word]) -> tuple[float, float]:
    x_min = min((w.box.x0 for w in words), default=0.0)
    offset = min(x_min, 0.0)
    return offset, max((w.box.x1 for w in words), default=1.0) - offset


# ---------------------------------------------------------------------- word context
def word_facts(deps: ReceiptsDeps, ref: WordRef) -> WordFacts:
    """The word, its line and section: what the rules decide from."""
    t = resolve_target(deps, ref)
    line_words = [w for w in t.words if w.line_id == t.word.line_id]
    pos = next((i for i, ln in enumerate(t.lines) if ln.line_id == t.word.line_id), 0)
    secs = deps.cached(("sections", t.receipt.id), lambda: sections([ln.text for ln in t.lines]))
    amounts = [w for w in line_words if word_shape(w.text) in AMOUNT_SHAPES]
    return WordFacts(
        label=ref.suggested_label,
        text=t.word.text,
        line_text=t.lines[pos].text if t.lines else "",
        section=secs[pos] if secs else "items",
        amounts_on_line=len(amounts),
        rightmost_amount=bool(amounts) and amounts[-1].id == t.word.id,
        ref=f"{t.receipt.key} line {t.word.line_id} word {t.word.word_id}",
    )


def word_context(deps: ReceiptsDeps, ref: WordRef) -> dict[str, Any]:
    """PRIMARY: the word's line, the lines around it, nearby words, shape, column, section."""
    t = resolve_target(deps, ref)
    facts = word_facts(deps, ref)
    line_words = [w for w in t.words if w.line_id == t.word.line_id]
    idx = next(i for i, w in enumerate(line_words) if w.id == t.word.id)
    line_texts = [ln.text for ln in t.lines]
    pos = next((i for i, ln in enumerate(t.lines) if ln.line_id == t.word.line_id), 0)
    offset, width = _receipt_width(t.words)
    shape = facts.shape
    out: dict[str, Any] = {
        "word": t.word.text,
        "suggested_label": ref.suggested_label,
        "line": _clip(line_texts[pos], 100),
        "line_no": f"{pos + 1} of {len(t.lines)}",
        "section": facts.section,
        "column": column(t.word.box.x0 - offset, t.word.box.x1 - offset, width),
        "shape": shape,
        "position_in_line": f"{idx + 1} of {len(line_words)}",
        "left": [w.text for w in line_words[max(0, idx - 3) : idx]],
        "right": [w.text for w in line_words[idx + 1 : idx + 4]],
        "above": [_clip(s, 60) for s in line_texts[max(0, pos - 2) : pos]],
        "below": [_clip(s, 60) for s in line_texts[pos + 1 : pos + 3]],
        "line_keywords": line_keywords(line_texts[pos]),
        "merchant": t.receipt.merchant_name,
    }
    fits = shape_fits(ref.suggested_label, shape)
    if fits is not None:
        out["shape_fits_label"] = fits
    if shape in AMOUNT_SHAPES:
        out["amounts_on_line"] = facts.amounts_on_line
        out["rightmost_amount"] = facts.rightmost_amount
    role = facts.role
    if role:
        out["amount_role"] = role
    checks = context_checks(
        ref.suggested_label, t.word.text, facts.line_text, shape, role, facts.section
    )
    # Facts that settle the question go first: small models weigh the start of a result most.
    head = {k: out.pop(k) for k in ("word", "suggested_label")}
    verdict = {}
    if checks["conflicts"]:
        verdict = {"label_check": f"{ref.suggested_label} looks WRONG here"}
    elif checks["supports"]:
        verdict = {"label_check": f"{ref.suggested_label} looks right here"}
    return {**verdict, **head, **{k: v for k, v in checks.items() if v}, **out}


# ---------------------------------------------------------------------- merchant
def _field_matches(word: str, value: str) -> bool:
    w = normalize(word)
    if len(w) < 2 or not value:
        return False
    tokens = [normalize(tok) for tok in value.replace(",", " ").split()]
    return w in tokens or (len(w) >= 4 and w in normalize(value))


def merchant_metadata(deps: ReceiptsDeps, ref: WordRef) -> dict[str, Any]:
    """SECONDARY: the merchant's place (name, address, phone, website, hours) and which of
    those fields contain the word."""
    t = resolve_target(deps, ref)
    try:
        place = deps.cached(("place", t.receipt.id), lambda: deps.places.lookup(t.receipt))
    except PlacesUnavailable as exc:
        raise SourceUnavailable(MERCHANT_METADATA, str(exc)[:200]) from exc
    except Exception as exc:  # a provider that failed unexpectedly is still only one source
        raise SourceUnavailable(MERCHANT_METADATA, f"failed ({type(exc).__name__})") from exc
    if place is None:
        raise SourceUnavailable(
            MERCHANT_METADATA, f"no place is known for merchant {t.receipt.merchant_name!r}"
        )
    fields = {
        "name": place.name,
        "address": place.address,
        "phone": place.phone,
        "website": place.website,
        "hours": place.hours,
    }
    found = [k for k, v in fields.items() if _field_matches(t.word.text, v)]
    out: dict[str, Any] = {
        "status": "ok",
        **{k: _clip(v, 90) for k, v in fields.items() if v},
        "word_found_in": found,
        "source": getattr(deps.places, "name", place.source),
    }
    field = _PLACE_FIELD.get(ref.suggested_label)
    if field and fields[field]:
        label = ref.suggested_label
        if field in found:
            out = {"label_check": f"{label} looks right here", **out}
            out["supports"] = [f"{label} fits: the word is part of the merchant's {field}"]
        else:
            out = {"label_check": f"{label} looks WRONG here", **out}
            out["conflicts"] = [f"{label} is wrong: the word is not part of the merchant's {field}"]
    elif ref.suggested_label in ("PRODUCT_NAME", "QUANTITY") and "name" in found:
        out["note"] = "the word also appears in the merchant's name"
    return out


_PLACE_FIELD = {
    "MERCHANT_NAME": "name",
    "ADDRESS_LINE": "address",
    "PHONE_NUMBER": "phone",
    "WEBSITE": "website",
}


# ---------------------------------------------------------------------- similar words
def neighbours(
    deps: ReceiptsDeps, ref: WordRef, *, n: int = 6, same_merchant: bool = False
) -> list[Neighbour]:
    """Nearest words (raises VectorsUnavailable)."""
    t = resolve_target(deps, ref)
    if deps.vectors is None:
        raise VectorsUnavailable(deps.vectors_error or "no vector store is configured")
    merchant = t.receipt.merchant_name if same_merchant else None
    return deps.cached(
        ("neighbours", t.doc_id, n, merchant), lambda: _visible_neighbours(deps, t, n, merchant)
    )


def _visible_neighbours(
    deps: ReceiptsDeps, t: Target, n: int, merchant: str | None
) -> list[Neighbour]:
    """The vector store holds every tenant's words: a tenant's search asks for more and keeps
    the words of receipts it may read, so another user's receipt never shows up as evidence."""
    found = similar_words(
        deps.vectors,
        t.doc_id,
        fallback_text=_document(deps, t),
        n=n if deps.tenant is None else n * TENANT_OVERFETCH,
        merchant=merchant,
    )
    if deps.tenant is not None:
        visible = deps.repo.visible_keys(nb.receipt for nb in found)
        found = [nb for nb in found if nb.receipt in visible]
    return found[:n]


def _document(deps: ReceiptsDeps, t: Target) -> str:
    """The word's embedding text, for a word missing from the vector store."""
    line_words = [w.text for w in t.words if w.line_id == t.word.line_id]
    pos = next((i for i, ln in enumerate(t.lines) if ln.line_id == t.word.line_id), 0)
    secs = deps.cached(("sections", t.receipt.id), lambda: sections([ln.text for ln in t.lines]))
    offset, width = _receipt_width(t.words)
    col = column(t.word.box.x0 - offset, t.word.box.x1 - offset, width)
    return word_document(t.word.text, line_words, t.word.word_id, secs[pos], col)


def similar_words_summary(
    deps: ReceiptsDeps, ref: WordRef, *, n: int = 6, same_merchant: bool = False
) -> dict[str, Any]:
    """SUPPORTING: similar words on receipts with their label, status and line, plus a count
    of how many carry the suggested label as VALID or INVALID."""
    n = max(1, min(int(n), 10))
    try:
        found = neighbours(deps, ref, n=n, same_merchant=same_merchant)
    except VectorsUnavailable as exc:
        raise SourceUnavailable(SIMILAR_WORDS, str(exc)[:200]) from exc
    label = ref.suggested_label
    other = Counter(nb.label for nb in found if nb.label not in (label, "NONE"))
    return {
        "status": "ok",
        "neighbours": [
            {
                "word": _clip(nb.text, 30),
                "label": nb.label,
                "status": nb.status,
                "line": _clip(nb.line, 50),
                "sim": nb.similarity,
                **({} if same_merchant else {"merchant": _clip(nb.merchant, 24)}),
            }
            for nb in found
        ],
        "suggested_label_valid": sum(
            nb.label == label and nb.status in ("VALID", "PENDING") for nb in found
        ),
        "suggested_label_invalid": sum(
            nb.label == label and nb.status == "INVALID" for nb in found
        ),
        "other_labels": dict(other.most_common(4)),
        "unlabeled": sum(nb.label == "NONE" for nb in found),
    }


# ---------------------------------------------------------------------- label history
def _own_labels(deps: ReceiptsDeps, t: Target) -> list[Label]:
    return deps.repo.labels_for_word(t.word.id)


def all_labels_for_word(deps: ReceiptsDeps, ref: WordRef) -> dict[str, Any]:
    """Every label this word has had (audit trail) with the consolidation chain."""
    t = resolve_target(deps, ref)
    labels = [] if ref.blind else _own_labels(deps, t)
    rows = [
        {
            "id": lab.id,
            "label": lab.label_type,
            "status": lab.status.value,
            "current": lab.current,
            "proposed_by": lab.proposed_by,
            **({"validated_by": lab.validated_by} if lab.validated_by else {}),
            **({"replaces": lab.replaces_id} if lab.replaces_id else {}),
            **({"consolidated_from": lab.consolidated_from_id} if lab.consolidated_from_id else {}),
        }
        for lab in labels[-8:]
    ]
    types = {lab.label_type for lab in labels}
    return {
        "word": t.word.text,
        "labels": rows,
        "count": len(labels),
        "cross_label_confusion": len(types) > 1,
    }


# ---------------------------------------------------------------------- receipt labels
def labels_on_receipt(deps: ReceiptsDeps, ref: WordRef) -> dict[str, Any]:
    """Label counts on the receipt, labels on the same line, and where else the suggested
    label appears."""
    t = resolve_target(deps, ref)
    labels = deps.cached(
        ("current_labels", t.receipt.id), lambda: deps.repo.current_labels(receipt_pk=t.receipt.id)
    )
    if ref.blind:
        labels = [lab for lab in labels if lab.word_pk != t.word.id]
    valid = [lab for lab in labels if lab.status.value in ("VALID", "PENDING", "NEEDS_REVIEW")]
    counts = Counter(lab.label_type for lab in valid)
    line_text = {ln.line_id: ln.text for ln in t.lines}
    same_line = [
        {
            "word": _clip(lab.word_text, 24),
            "label": lab.label_type,
            **({"this_word": True} if lab.word_pk == t.word.id else {}),
        }
        for lab in sorted(valid, key=lambda lab: lab.word_id)
        if lab.line_id == t.word.line_id
    ][:8]
    elsewhere = [
        {"word": _clip(lab.word_text, 24), "line": _clip(line_text.get(lab.line_id, ""), 50)}
        for lab in valid
        if lab.label_type == ref.suggested_label and lab.word_pk != t.word.id
    ][:3]
    return {
        "label_counts": dict(counts.most_common(10)),
        "same_line": same_line,
        "suggested_label_elsewhere": elsewhere,
        "suggested_label_count": counts.get(ref.suggested_label, 0)
        - sum(
            1 for lab in valid if lab.word_pk == t.word.id and lab.label_type == ref.suggested_label
        ),
    }


# ---------------------------------------------------------------------- edge cases
def edge_cases_for(deps: ReceiptsDeps, label_type: str) -> list[EdgeCase]:
    return deps.cached(("edge_cases", label_type), lambda: deps.repo.edge_cases(label_type))


def edge_case_matches(cases: list[EdgeCase], text: str, merchant: str) -> list[EdgeCase]:
    """The cases whose pattern matches the whole word (and whose merchant, if any, matches)."""
    import re

    out = []
    for case in cases:
        if case.merchant_name and case.merchant_name.lower() != merchant.lower():
            continue
        try:
            if re.fullmatch(case.pattern, text.strip(), flags=re.IGNORECASE):
                out.append(case)
        except re.error:
            continue
    return out


def check_edge_cases(deps: ReceiptsDeps, ref: WordRef) -> dict[str, Any]:
    """Known invalid patterns for this word and label."""
    t = resolve_target(deps, ref)
    cases = edge_cases_for(deps, ref.suggested_label)
    hits = edge_case_matches(cases, t.word.text, t.receipt.merchant_name)
    return {
        "word": t.word.text,
        "label": ref.suggested_label,
        "matches": [{"id": c.id, "reason": c.reason} for c in hits[:3]],
        "patterns_checked": len(cases),
        "known_invalid": bool(hits),
    }
