"""API routes: validate, the review queue, errors mapped to 404/422."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.apikit import add_error_handler, current_caller
from casework.apps.receipts.api import router
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import bundled_receipt_files
from casework.runtime.context import Caller, Role


def _client(deps, role: Role = Role.REVIEWER) -> TestClient:
    """The router on a bare app, the caller stubbed (the token check is tested in tests/access)."""
    app = FastAPI()
    app.state.settings = deps.settings
    app.include_router(router(deps.settings, lambda: deps), prefix="/receipts")
    app.dependency_overrides[current_caller] = lambda: Caller(1, "reviewer", role)
    add_error_handler(app)  # the server's error table
    return TestClient(app)


def test_validate_with_the_baseline(seeded):
    client = _client(seeded)
    res = client.post(
        "/receipts/validate",
        json={
            "receipt": "costco",
            "line_id": 42,
            "word_id": 3,
            "label": "GRAND_TOTAL",
            "strategy": "baseline",
        },
    )
    assert res.status_code == 200, res.text
    body = res.json()
    assert (
        body["verdict"] == "VALID"
        and body["word_text"] == "303.83"
        and body["recorded_label_ids"] == []
    )
    listed = client.get("/receipts/receipts").json()
    assert [r["slug"] for r in listed] == sorted(
        p.name.split(".")[0] for p in bundled_receipt_files()
    )
    costco = next(r for r in listed if r["slug"] == "costco")
    assert costco["key"] == f"{costco['image_id']}#{costco['receipt_id']}"
    assert costco["merchant_name"] == "Costco Wholesale" and costco["word_count"] == 228


@pytest.mark.parametrize(
    ("payload", "status", "error"),
    [
        (
            {
                "receipt": "nowhere",
                "line_id": 1,
                "word_id": 1,
                "label": "TAX",
                "strategy": "baseline",
            },
            404,
            "No receipt 'nowhere'",
        ),
        (
            {
                "receipt": "costco",
                "line_id": 42,
                "word_id": 3,
                "label": "NOPE",
                "strategy": "baseline",
            },
            422,
            "Unknown label NOPE",
        ),
        (
            {"receipt": "costco", "line_id": 42, "word_id": 3, "label": "TAX", "model": "bogus"},
            422,  # over HTTP a caller picks only among the operator's models
            "Model 'bogus' is not offered by this server",
        ),
    ],
)
def test_errors_map_to_http(seeded, payload, status, error):
    res = _client(seeded).post("/receipts/validate", json=payload)
    assert res.status_code == status and error in res.json()["error"]


def test_review_queue_accept_and_reject(small):
    client = _client(small)
    rid = small.repo.resolve_receipt("chevron").id
    words = {(w.line_id, w.word_id): w for w in small.repo.words(rid)}
    items = []
    for key, label in (((9, 3), "GRAND_TOTAL"), ((8, 1), "UNIT_PRICE")):
        [old] = small.repo.labels_for_word(words[key].id)
        items += small.repo.append_labels(
            [
                LabelChange(
                    word_pk=old.word_pk,
                    label_type=label,
                    status=ValidationStatus.NEEDS_REVIEW,
                    proposed_by="harmonizer",
                    consolidated_from_id=old.id,
                )
            ]
        )
    queue = client.get("/receipts/review").json()
    assert [(q["id"], q["receipt"], q["instead_of"]) for q in queue] == [
        (items[0].id, "chevron", "LINE_TOTAL"),
        (items[1].id, "chevron", "QUANTITY"),
    ]
    accepted = client.post(
        f"/receipts/review/{items[0].id}/accept", json={"reviewer": "ana", "note": "ok"}
    ).json()
    assert [(r["label_type"], r["status"]) for r in accepted] == [
        ("GRAND_TOTAL", "VALID"),
        ("LINE_TOTAL", "INVALID"),
    ]
    rejected = client.post(f"/receipts/review/{items[1].id}/reject").json()
    assert [(r["label_type"], r["status"], r["validated_by"]) for r in rejected] == [
        ("UNIT_PRICE", "INVALID", "human:reviewer")
    ]
    assert client.get("/receipts/review").json() == []
    assert client.post(f"/receipts/review/{items[1].id}/reject").status_code == 422
    assert client.post("/receipts/review/424242/accept").status_code == 404
    history = client.get("/receipts/words/chevron/9/3/labels").json()
    assert [h["status"] for h in history] == ["VALID", "NEEDS_REVIEW", "VALID", "INVALID"]
