"""Web test helpers: a receipts store with NEEDS_REVIEW labels, users, signed-in clients."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import Label, ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.vanpool.deps import VanpoolDeps
from casework.config import Settings

PASSWORD = "correct-horse-battery"
XSS = '<script>alert("owned")</script>'


def write_receipt(path: Path, tokens_tags: list[tuple[str, str]], lines: list[int]) -> Path:
    """A labels.json receipt: token i on line ``lines[i]`` (0 = top)."""
    tokens, boxes, tags = [], [], []
    x_by_line: dict[int, int] = {}
    for (tok, tag), line in zip(tokens_tags, lines, strict=True):
        x = x_by_line.get(line, 10)
        y = 900 - 20 * line
        boxes.append([x, y, x + 20 * len(tok), y + 12])
        x_by_line[line] = x + 20 * len(tok) + 15
        tokens.append(tok)
        tags.append(tag)
    data = {
        "tokens": tokens,
        "bboxes": boxes,
        "ner_tags": tags,
        "merchant_name": "Test Mart",
        "receipt_key": "webtest#1",
    }
    path.write_text(json.dumps(data))
    return path


@dataclass
class Site:
    settings: Settings
    deps: ReceiptsDeps
    app: FastAPI
    review: list[Label]
    """NEEDS_REVIEW labels, oldest first; the last one carries the injection strings."""

    def client(self, user: str | None = None) -> TestClient:
        client = TestClient(self.app)
        if user is not None:
            login(client, user)
        return client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def login(client: TestClient, user: str, password: str = PASSWORD) -> None:
    form = client.get("/login")
    response = client.post(
        "/login",
        data={"username": user, "password": password, "csrf": csrf_of(form.text), "next": "/"},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text


def add_review_labels(
    deps: ReceiptsDeps, words: list[tuple[int, str]], reasoning: str
) -> list[Label]:
    """One NEEDS_REVIEW label per (word pk, label type), as the harmoniser leaves them."""
    return deps.repo.append_labels(
        [
            LabelChange(
                word_pk=pk,
                label_type=label,
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="harmonizer",
                reasoning=reasoning,
                confidence=62.0,
                validated_by="agent:scripted",
            )
            for pk, label in words
        ]
    )


@dataclass
class Cases:
    """Vanpool and documents items added to a ``Site`` (see ``add_vanpool_and_documents``)."""

    vanpool: VanpoolDeps
    documents: DocumentsDeps
    cancel_case: str
    cancel_vanpool: str
    cancel_riders: list[str]
    draft_case: str
    draft_message: str
    extraction: int
    """A failed extraction of bob's whose text carries ``XSS``."""


DOC_TEXT = f"INVOICE\nInvoice number: INV-2041\nTotal: $45.10\nNote: {XSS}"
DRAFT = "Thanks for writing; we will look into it."


def add_vanpool_and_documents(site: Site, smtp_port: int) -> Cases:
    """A pre-cancel case (cancel_membership waits), an escalation whose drafted answer waits
    (the rider's reply carries ``XSS``), and a failed extraction; their providers on the site."""
    from casework.access.service import get_user, open_access
    from casework.apps.documents.ocr import PageText, ReadResult
    from casework.apps.documents.review import DocumentsReview
    from casework.apps.documents.service import build_deps as documents_deps
    from casework.apps.vanpool import lifecycle
    from casework.apps.vanpool.deps import build_deps as vanpool_deps
    from casework.apps.vanpool.review import VanpoolReview
    from casework.apps.vanpool.roster import import_roster
    from casework.apps.vanpool.settings import VanpoolSettings
    from casework.apps.vanpool.synth import DATA_DIR

    settings = site.settings
    van = vanpool_deps(settings, app=VanpoolSettings(smtp_port=smtp_port))
    import_roster(van.repo, DATA_DIR / "roster.json", van.now())
    truth = json.loads((DATA_DIR / "injected.json").read_text())
    shift = next(t for t in truth if t["scenario"] == "shift_mismatch")
    cancel, _ = lifecycle.audit_vanpool(van, shift["vanpool_id"])
    lifecycle.request_cancel(van, cancel.case_id, "rules_auditor")
    location = next(t for t in truth if t["scenario"] == "location_mismatch")
    escalated, _ = lifecycle.audit_vanpool(van, location["vanpool_id"])
    thread = van.repo.get_case(escalated.case_id).thread_id
    assert thread is not None
    van.repo.add_message(
        thread,
        direction="inbound",
        status="received",
        sender="rider@example.com",
        recipients=[],
        subject="Re: membership review",
        body=f"I dispute this. {XSS}",
        now=van.now(),
    )
    draft = lifecycle.draft_for_review(van, escalated.case_id, DRAFT, "outreach_agent")
    assert draft.message_id is not None

    docs = documents_deps(settings)
    bob = get_user(open_access(settings), "bob").id
    read = ReadResult("application/pdf", [PageText(DOC_TEXT, ocr=True, seconds=0.0)], "rapidocr")
    doc = docs.repo.add_document(bob, filename="scan.pdf", data=DOC_TEXT.encode(), read=read)
    ext = docs.repo.create_extraction(bob, doc.id)
    docs.repo.fail(bob, ext.id, "limit:model_calls: the agent ran out of model calls")

    providers = site.app.state.web.providers
    providers["vanpool"] = VanpoolReview(settings, deps=van)
    providers["documents"] = DocumentsReview(
        settings, deps=docs, strategy="rules", background=False
    )
    return Cases(
        vanpool=van,
        documents=docs,
        cancel_case=cancel.case_id or "",
        cancel_vanpool=shift["vanpool_id"],
        cancel_riders=shift["expected"]["failing_employees"]["shift"],
        draft_case=escalated.case_id or "",
        draft_message=draft.message_id,
        extraction=ext.id,
    )
