"""Failed extractions a person decides: retried as their owner, corrected (the fields a
person typed, which become an example of the memory: issue 32), or marked reviewed, once."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.failed_review import review_key, review_outcome
from casework.apps.documents.models import FailedExtraction
from casework.apps.documents.repository import REVIEW_ACTION, REVIEW_THREAD_PREFIX
from casework.apps.documents.service.runs import start_extraction
from casework.errors import InputError
from casework.runtime.approvals import SideEffectJournal
from casework.runtime.context import Caller, Role
from casework.runtime.memory import ExampleDraft
from casework.runtime.review_provider import DecideOutcome
from casework.runtime.runconfig import RunConfig

__all__ = [
    "REVIEW_SETTLE_WAIT_SECONDS",
    "decide_failed_extraction",
    "extraction_owner",
    "settled_review",
]


REVIEW_SETTLE_WAIT_SECONDS = 5.0
"""How long a second decision on a failed extraction waits for the first one's journal entry."""


def extraction_owner(deps: DocumentsDeps, user_id: int) -> Caller:
    """The owner of a failed extraction: a retry runs as them, in their tenant."""
    name = deps.repo.user_name(user_id)
    return Caller(user_id=user_id, name=name or f"user {user_id}", role=Role.USER)


def settled_review(deps: DocumentsDeps, extraction_id: int) -> DecideOutcome | None:
    """Who decided on a failed extraction, when and how; None while nobody has (a decision
    under way, or one that died, still waits)."""
    entry = SideEffectJournal(deps.repo.engine).entry(review_key(extraction_id))
    if entry is None or entry.status != "done" or not isinstance(entry.result, dict):
        return None
    return review_outcome(entry.result, applied=False)


def decide_failed_extraction(
    deps: DocumentsDeps,
    extraction_id: int,
    action: str,
    *,
    note: str,
    actor: str,
    strategy: str = "cascade",
    config: RunConfig | None = None,
    background: bool = True,
    edit: str | None = None,
) -> DecideOutcome:
    """A person's decision on a failed extraction: retry it (``start_extraction`` on the same
    document and fields, as its owner, under ``config``), mark it reviewed, or correct it
    (``edit``, a JSON object of field name -> value: ``_write_correction``, and its example).
    One entry of the side-effect journal under the extraction's key, so a double press or a
    second reviewer changes nothing and reads who decided first."""
    if action not in ("approve", "edit", "reject"):
        raise InputError(
            "A failed extraction is retried (approve), corrected (edit) or marked reviewed."
        )
    corrected = _corrected_fields(edit) if action == "edit" else {}
    failed = deps.repo.failed_extraction(extraction_id)
    ext = failed.extraction
    token = uuid.uuid4().hex
    key = review_key(ext.id)
    journal = SideEffectJournal(deps.repo.engine)

    def settle(_key: str) -> dict[str, Any]:
        result: dict[str, Any] = {
            "by": actor,
            "at": datetime.now(UTC).isoformat(),
            "note": note,
            "token": token,
        }
        if action == "reject":
            return result | {"action": "reviewed"}
        if action == "edit":
            row_id = _write_correction(deps, failed, corrected)
            return result | {"action": "corrected", "fields": corrected, "extraction_id": row_id}
        handle = start_extraction(
            deps,
            extraction_owner(deps, failed.owner_id),
            ext.document_id,
            fields=ext.requested_fields,
            strategy=strategy,
            config=config,
            background=background,
        )
        return result | {
            "action": "retry",
            "run_id": handle.run_id,
            "extraction_id": handle.extraction_id,
        }

    def settled_elsewhere(_key: str) -> dict[str, Any] | None:
        # Another decision holds the intent: wait for its answer rather than retry twice.
        deadline = time.monotonic() + REVIEW_SETTLE_WAIT_SECONDS
        while time.monotonic() < deadline:
            entry = journal.entry(key)
            if entry is not None and entry.status == "done":
                return entry.result
            time.sleep(0.05)
        return None

    result = journal.once(
        key,
        settle,
        reconcile=settled_elsewhere,
        thread_id=f"{REVIEW_THREAD_PREFIX}{ext.id}",
        action=REVIEW_ACTION,
        args={"action": action, "by": actor},
    )
    applied = result.get("token") == token
    example = (
        _correction_example(deps, failed, result["fields"])
        if applied and result.get("action") == "corrected"
        else None
    )
    return review_outcome(result, applied=applied, example=example)


def _write_correction(
    deps: DocumentsDeps, failed: FailedExtraction, corrected: dict[str, str]
) -> int:
    """The person's fields as a new completed extraction of the document (method
    ``review``), as a retry makes a new one: the failed extraction stays as it was."""
    ext = failed.extraction
    row = deps.repo.create_extraction(
        failed.owner_id, ext.document_id, requested=ext.requested_fields
    )
    deps.repo.set_fields(
        failed.owner_id, row.id, corrected, dict.fromkeys(corrected, 1.0), method="review"
    )
    deps.repo.complete(failed.owner_id, row.id)
    return int(row.id)


def _correction_example(
    deps: DocumentsDeps, failed: FailedExtraction, fields: dict[str, Any]
) -> ExampleDraft | None:
    """The document's text and the corrected fields, as the example the review teaches
    (None when the document kept no text)."""
    ext = failed.extraction
    read = deps.repo.document_text(failed.owner_id, ext.document_id)
    if read is None or not read[0].strip():
        return None
    return ExampleDraft(
        inputs={"text": read[0], "fields": ext.requested_fields},
        answer={"fields": dict(fields)},
    )


def _corrected_fields(edit: str | None) -> dict[str, str]:
    """The fields a person typed: a JSON object of name -> value (one sentence otherwise)."""
    try:
        given = json.loads(edit or "")
    except json.JSONDecodeError:
        given = None
    if not isinstance(given, dict) or not given:
        raise InputError(
            'Give the corrected fields as a JSON object, e.g. {"company": "Acme Ltd", '
            '"total": "45.10"}.'
        )
    fields = {
        str(k).strip(): str(v).strip()
        for k, v in given.items()
        if str(k).strip() and v is not None and str(v).strip()
    }
    if not fields:
        raise InputError("The correction names no field with a value; give at least one.")
    return fields
