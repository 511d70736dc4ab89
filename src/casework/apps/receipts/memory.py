"""Learning from review (issue 32): the receipts memory of verified labels.

**An example** is a word on a receipt (``AppSpec.examples``: ``LabelExamples``). Its key
text is what makes two cases alike: the merchant, the word's line (the words around it) and
the word itself; the label that was suggested is not part of it, since the right label of a
word does not depend on what was proposed for it. Its verified answer is the word's right
label (``{"label": L}``: a reviewer accepted L, or corrected the word to L; an imported case
names it as ``expected.gold_label``), or, when a reviewer only rejected a label,
``{"not": L}``. The verdict on any suggestion follows from it: VALID when the suggestion is
the right label, INVALID otherwise (a rejection settles only the label it rejected).

**The memory layer** (``memory``) goes first in the cascade: a word close enough to verified
ones (``runtime.memory_layer.recall``: the near examples vote, few or distant ones make it
less sure) takes their label. **Demonstrations**: the choice layer's prompt shows similar
words with their labels; the nearest verified examples take the first of those places
(``verified_neighbours``), so the prompt does not grow.
"""

from __future__ import annotations

import builtins
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from casework.apps.receipts.labels import resolve_input
from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelDecision, LabelInput, WordRef
from casework.apps.receipts.rules import word_shape
from casework.apps.receipts.vectors import Neighbour
from casework.runtime.context import Caller
from casework.runtime.decision import EndReason, RunInfo
from casework.runtime.memory import Example, ExampleDraft, Memory
from casework.runtime.memory_layer import (
    MEMORY_SOURCE,
    MEMORY_THRESHOLD,
    NEAR_SIMILARITY,
    Demonstration,
    memory_evidence,
    recall,
)
from casework.runtime.runconfig import RunConfig
from casework.runtime.usage import Usage
from casework.stores import open_stores

if TYPE_CHECKING:
    from casework.apps.receipts.deps import ReceiptsDeps

__all__ = [
    "DEMONSTRATIONS",
    "EXAMPLES",
    "MEMORY_THRESHOLD",
    "VERIFIED",
    "LabelExamples",
    "label_memory",
    "memory",
    "remembered_verdict",
    "review_example",
    "verified_neighbours",
    "word_inputs",
]


def _text(inputs: dict[str, Any], key: str) -> str:
    value = inputs.get(key)
    return value.strip() if isinstance(value, str) else ""


def _marked_line(inputs: dict[str, Any]) -> str:
    """The word's line with the word in brackets (at its place when the line shows it)."""
    tokens, word = _text(inputs, "line").split(), _text(inputs, "word")
    place = _place(inputs)
    if place is not None:
        at = len(tokens) - 1 - place
    else:
        at = tokens.index(word) if word in tokens else -1
    return " ".join(f"[{t}]" if i == at else t for i, t in enumerate(tokens))


def _taxonomy_label(label: str, field: str) -> str:
    """A verified label, upper-cased; ValueError when the taxonomy has no such label (a typo
    would otherwise be remembered as the right label of every word like this one)."""
    name = label.strip().upper()
    if name not in LABEL_DEFINITIONS:
        known = ", ".join(sorted(LABEL_DEFINITIONS))
        raise ValueError(f"expected.{field} {name} is not a label of the taxonomy ({known})")
    return name


class LabelExamples:
    """``AppSpec.examples``: a receipts example is a word on a receipt and its right label."""

    def key_text(self, inputs: dict[str, Any]) -> str:
        word = _text(inputs, "word")
        if not word:
            raise ValueError("a receipts example is a word: inputs need its 'word' text")
        merchant = _text(inputs, "merchant") or "unknown merchant"
        line = _marked_line(inputs)
        return f"{merchant} | {line} | {word}" if line else f"{merchant} | {word}"

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        field = "gold_label" if expected.get("gold_label") else "label"
        label = expected.get(field)
        if isinstance(label, str) and label.strip():
            return {"label": _taxonomy_label(label, field)}
        rejected = expected.get("not_label")
        if expected.get("verdict") == "INVALID" and isinstance(rejected, str) and rejected:
            return {"not": _taxonomy_label(rejected, "not_label")}
        raise ValueError(
            "expected.gold_label must be the word's right label "
            "(or expected.verdict INVALID with the rejected label as expected.not_label)"
        )


EXAMPLES = LabelExamples()


def _line_text(deps: ReceiptsDeps, ref: WordRef) -> str:
    receipt = deps.repo.get_receipt_by_key(ref.image_id, ref.receipt_id)
    lines = deps.cached(("receipt-lines", receipt.id), lambda: deps.repo.lines(receipt.id))
    return next((ln.text for ln in lines if ln.line_id == ref.line_id), "")


def word_inputs(deps: ReceiptsDeps, ref: WordRef) -> dict[str, Any]:
    """A resolved word as an example's inputs (the evaluation cases' keys and its line)."""
    return {
        "receipt": ref.receipt_key,
        "line_id": ref.line_id,
        "word_id": ref.word_id,
        "word": ref.word_text,
        "suggested_label": ref.suggested_label,
        "merchant": ref.merchant_name,
        "line": _line_text(deps, ref),
    }


SHAPE_WINDOW = 50
"""How many nearest examples of any kind are looked at before keeping one kind's."""
AMOUNT_SHAPES = ("amount", "negative_amount")


def _place(inputs: dict[str, Any]) -> int | None:
    """The word's place on its line counted from the end (0: the last word), when the line's
    words show it (a line's words are its text split on spaces, numbered from 1)."""
    tokens = _text(inputs, "line").split()
    word_id = inputs.get("word_id")
    if not isinstance(word_id, int) or not 1 <= word_id <= len(tokens):
        return None
    return len(tokens) - word_id if tokens[word_id - 1] == _text(inputs, "word") else None


def word_kind(inputs: dict[str, Any]) -> tuple[str, int | None]:
    """What an example must share with a case to count: its word's shape
    (``rules.word_shape``), and for an amount its place from the line's end (the unit price
    and the line total are often the same number, side by side)."""
    shape = word_shape(_text(inputs, "word"))
    return shape, _place(inputs) if shape in AMOUNT_SHAPES else None


class KindMemory(Memory):
    """The receipts examples of one ``word_kind``: ``nearest`` leaves the others out.
    Measured on the outside receipts, the line dominates the key text's embedding: without
    it a price took the label of the product name beside it, and a line total the unit
    price's (see the README)."""

    def __init__(self, engine: Engine, tenant: Caller | None, kind: tuple[str, int | None]):
        super().__init__(engine, "receipts", tenant)
        self.kind = kind

    def _alike(self, inputs: dict[str, Any]) -> bool:
        (shape, place), (other_shape, other_place) = self.kind, word_kind(inputs)
        return shape == other_shape and (None in (place, other_place) or place == other_place)

    def nearest(self, text: str, k: int = 5) -> builtins.list[tuple[Example, float]]:
        found = super().nearest(text, max(k, SHAPE_WINDOW))
        return [(e, s) for e, s in found if self._alike(e.inputs)][:k]


def label_memory(
    deps: ReceiptsDeps, config: RunConfig, inputs: dict[str, Any] | None = None
) -> Memory:
    """The verified labels in the deps' store (a ``--learn`` run's store of its own in an
    evaluation), as the run's caller sees them; given a case's ``inputs``, those of its
    word's kind (``word_kind``)."""
    engine = open_stores(deps.settings).engine
    if inputs is None:
        return Memory(engine, "receipts", config.caller)
    return KindMemory(engine, config.caller, word_kind(inputs))


def remembered_verdict(suggested: str, answer: dict[str, Any]) -> str | None:
    """The verdict a verified answer gives on ``suggested`` (None: it says nothing of it)."""
    if "label" in answer:
        return "VALID" if answer["label"] == suggested else "INVALID"
    return "INVALID" if answer.get("not") == suggested else None


def _undecided(reasoning: str) -> LabelDecision:
    return LabelDecision(verdict="NEEDS_REVIEW", confidence=0.0, reasoning=reasoning)


def memory(input: LabelInput, deps: ReceiptsDeps, config: RunConfig) -> LabelDecision:
    """The label verified for the nearest words (see the module); NEEDS_REVIEW at confidence
    0 when none is near or the memory is empty (then no embedding is computed)."""
    started = time.perf_counter()
    ref = resolve_input(deps, input)
    inputs = word_inputs(deps, ref)
    store = label_memory(deps, config, inputs)
    if store.count() == 0:
        decision = _undecided("No verified example yet.")
    else:
        found = recall(store, EXAMPLES.key_text(inputs))
        verdict = remembered_verdict(ref.suggested_label, found.answer or {})
        if found.answer is None or verdict is None:
            nearest = found.neighbours[0][1] if found.neighbours else None
            said = f" (the nearest at {nearest:.2f})" if nearest is not None else ""
            decision = _undecided(f"No verified example near says whether it fits{said}.")
        else:
            ids = ", ".join(str(e.id) for e, _ in found.used)
            right = found.answer.get("label") or f"not {found.answer.get('not')}"
            decision = LabelDecision(
                verdict=verdict,  # type: ignore[arg-type]
                confidence=found.confidence,
                reasoning=(
                    f"Verified example(s) {ids} of words like {ref.word_text!r} say "
                    f"{right}; the nearest at similarity {found.used[0][1]:.2f}."
                )[:500],
                evidence=memory_evidence(found.used),
                raw_verdict=verdict,  # type: ignore[arg-type]
            )
    decision.run = RunInfo(
        ended_by=EndReason.RULES,
        strategy=MEMORY_SOURCE,
        usage=Usage(wall_seconds=round(time.perf_counter() - started, 4)),
    )
    return decision


VERIFIED = "VERIFIED"
"""The status of a neighbour that is a verified example (the prompt marks it)."""
DEMONSTRATIONS = 3
"""Verified words shown to the choice layer, in place of as many vector-store neighbours."""


def verified_neighbours(
    deps: ReceiptsDeps, config: RunConfig, ref: WordRef, k: int = DEMONSTRATIONS
) -> list[tuple[Demonstration, Neighbour]]:
    """The ``k`` nearest verified words with a right label, at least ``NEAR_SIMILARITY``
    alike (a far example would push out a better vector neighbour), nearest first, each as
    the prompt's neighbour line shows it. An empty memory costs one count, no embedding."""
    inputs = word_inputs(deps, ref)
    store = label_memory(deps, config, inputs)
    if k <= 0 or store.count() == 0:
        return []
    out = []
    for e, sim in store.nearest(EXAMPLES.key_text(inputs), k):
        label = e.answer.get("label")
        if sim < NEAR_SIMILARITY or not isinstance(label, str):
            continue
        shown = Neighbour(
            id=f"example:{e.id}",
            text=_text(e.inputs, "word"),
            label=label,
            status=VERIFIED,
            merchant=_text(e.inputs, "merchant"),
            line=_text(e.inputs, "line") or _text(e.inputs, "word"),
            receipt=_text(e.inputs, "receipt"),
            line_id=int(e.inputs.get("line_id") or 0),
            word_id=int(e.inputs.get("word_id") or 0),
            similarity=sim,
        )
        out.append((Demonstration(e.id, e.key_text, dict(e.answer), sim), shown))
    return out


def review_example(deps: ReceiptsDeps, ref: WordRef, answer: dict[str, str]) -> ExampleDraft:
    """What a settled inbox item verified about the word ``ref`` names, as an example's
    draft: ``{"label": L}`` (accepted or edited to L) or ``{"not": L}`` (L rejected)."""
    return ExampleDraft(inputs=word_inputs(deps, ref), answer=dict(answer))
