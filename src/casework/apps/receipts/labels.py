"""Naming a word and a label: the stored word a request names (receipt slug or key, line,
word) as the run context a strategy decides on, and a label name checked against the known
labels. Reads only; every strategy and the service resolve their input here."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelInput, WordRef
from casework.errors import InputError

if TYPE_CHECKING:
    from casework.apps.receipts.deps import ReceiptsDeps

__all__ = ["check_label", "resolve_input", "resolve_ref"]


def check_label(deps: ReceiptsDeps, label: str) -> str:
    """The label name, upper-cased; one sentence of InputError when it is no known label."""
    label = label.strip().upper()
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", label):
        raise InputError(f"Label {label!r} is not an upper-case label name such as GRAND_TOTAL.")
    if label not in LABEL_DEFINITIONS and label not in deps.repo.known_label_types():
        known = ", ".join(sorted(LABEL_DEFINITIONS))
        raise InputError(f"Unknown label {label}; known labels: {known}.")
    return label


def resolve_ref(
    deps: ReceiptsDeps,
    receipt: str,
    line_id: int,
    word_id: int,
    label: str,
    *,
    reason: str = "",
    blind: bool = False,
) -> WordRef:
    """The run context for validating ``label`` on one word (raises NotFound/InputError)."""
    r = deps.repo.resolve_receipt(receipt)
    word = deps.repo.get_word(r.id, int(line_id), int(word_id))
    return WordRef(
        image_id=r.image_id,
        receipt_id=r.receipt_id,
        line_id=word.line_id,
        word_id=word.word_id,
        suggested_label=check_label(deps, label),
        word_text=word.text,
        merchant_name=r.merchant_name,
        original_reasoning=reason,
        blind=blind,
    )


def resolve_input(deps: ReceiptsDeps, input: LabelInput) -> WordRef:
    """The stored word the input names (NotFound / InputError when it names none, or when
    ``input.word`` differs from the stored text)."""
    ref = resolve_ref(
        deps,
        input.receipt,
        input.line_id,
        input.word_id,
        input.suggested_label,
        reason=input.reason,
        blind=input.blind,
    )
    if input.word is not None and input.word != ref.word_text:
        raise InputError(
            f"Word {input.line_id}/{input.word_id} of {input.receipt} is {ref.word_text!r}, not {input.word!r}; check the ids."
        )
    return ref
