"""Bad input on the receipts routes (list, review, labels, validate): 404 or 422 with a sentence;
the cached list and review answers follow every write."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.apikit import add_error_handler, current_caller
from casework.apps.receipts.api import router
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import bundled_receipt_files, import_files
from casework.config import Settings
from casework.runtime.context import Caller, Role


@pytest.fixture
def deps(tmp_path: Path) -> ReceiptsDeps:
    d = build_deps(Settings(home=tmp_path / "home"), with_vectors=False)
    files = [p for p in bundled_receipt_files() if p.name.split(".")[0] in ("chevron", "walgreens")]
    import_files(d, files, index=False)
    return d


@pytest.fixture
def client(deps: ReceiptsDeps) -> TestClient:
    """The router on a bare app, a reviewer stubbed in (the token check is tested in tests/access)."""
    app = FastAPI()
    app.state.settings = deps.settings
    app.include_router(router(deps.settings, lambda: deps), prefix="/receipts")
    app.dependency_overrides[current_caller] = lambda: Caller(1, "reviewer", Role.REVIEWER)
    add_error_handler(app)  # the server's error table
    return TestClient(app)


def queue_relabels(deps: ReceiptsDeps, n: int) -> list[int]:
    """``n`` suggestions 'SUBTOTAL instead of GRAND_TOTAL' waiting for review; their ids."""
    totals = [lab for lab in deps.repo.current_labels() if lab.label_type == "GRAND_TOTAL"][:n]
    assert len(totals) == n
    rows = deps.repo.append_labels(
        [
            LabelChange(
                lab.word_pk,
                "SUBTOTAL",
                ValidationStatus.NEEDS_REVIEW,
                "test",
                consolidated_from_id=lab.id,
            )
            for lab in totals
        ]
    )
    return [r.id for r in rows]


def test_list_filters_and_rejects_nothing_it_cannot_parse(client):
    rows = client.get("/receipts/receipts").json()
    assert [(r["slug"], r["line_count"]) for r in rows] == [("chevron", 19), ("walgreens", 23)]
    assert client.get("/receipts/receipts", params={"merchant": "CHEVRON"}).json()[0]["slug"] == (
        "chevron"
    )
    assert client.get("/receipts/receipts", params={"merchant": "Nowhere"}).json() == []


@pytest.mark.parametrize("limit", ["abc", "1.5", ""])
def test_review_limit_must_be_an_integer(client, limit):
    res = client.get("/receipts/review", params={"limit": limit})
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["query", "limit"]


def test_review_limit_is_clamped_and_the_cache_follows_writes(client, deps):
    assert client.get("/receipts/review").json() == []
    ids = queue_relabels(deps, 2)
    items = client.get("/receipts/review").json()
    assert [(i["id"], i["label_type"], i["instead_of"]) for i in items] == [
        (ids[0], "SUBTOTAL", "GRAND_TOTAL"),
        (ids[1], "SUBTOTAL", "GRAND_TOTAL"),
    ]
    assert [i["id"] for i in client.get("/receipts/review", params={"limit": 0}).json()] == ids[:1]
    assert len(client.get("/receipts/review", params={"limit": 10**6}).json()) == 2
    res = client.post(f"/receipts/review/{ids[0]}/reject", json={"note": "no"})
    assert res.status_code == 200 and [r["status"] for r in res.json()] == ["INVALID"]
    assert [i["id"] for i in client.get("/receipts/review").json()] == ids[1:]


@pytest.mark.parametrize("action", ["accept", "reject"])
def test_review_decisions_on_bad_ids(client, deps, action):
    res = client.post(f"/receipts/review/999999/{action}")
    assert (res.status_code, res.json()) == (
        404,
        {"error": "No label with id 999999.", "kind": "NotFoundError"},
    )
    assert client.post(f"/receipts/review/abc/{action}").status_code == 422
    (label_id,) = queue_relabels(deps, 1)
    too_long = client.post(f"/receipts/review/{label_id}/{action}", json={"note": "x" * 1001})
    assert too_long.status_code == 422
    assert client.post(f"/receipts/review/{label_id}/{action}").status_code == 200
    again = client.post(f"/receipts/review/{label_id}/{action}")
    assert again.status_code == 422
    assert again.json()["error"].startswith(f"Label {label_id} was already reviewed or replaced")


def test_a_label_that_is_not_waiting_for_review_cannot_be_decided(client, deps):
    valid = deps.repo.current_labels()[0]
    res = client.post(f"/receipts/review/{valid.id}/accept")
    assert (res.status_code, res.json()) == (
        422,
        {"error": f"Label {valid.id} is VALID, not waiting for review.", "kind": "InputError"},
    )


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        (
            "/receipts/words/nowhere/1/1/labels",
            404,
            "No receipt 'nowhere'; see `casework receipts list`.",
        ),
        (
            "/receipts/words/chevron/999/1/labels",
            404,
            "Receipt chevron has no word 1 on line 999; see `casework receipts show chevron`.",
        ),
    ],
)
def test_word_history_of_unknown_words(client, path, status, error):
    res = client.get(path)
    assert (res.status_code, res.json()) == (status, {"error": error, "kind": "NotFoundError"})


def test_word_history_needs_integer_ids(client):
    res = client.get("/receipts/words/chevron/x/1/labels")
    assert res.status_code == 422 and res.json()["detail"][0]["loc"] == ["path", "line_id"]


def test_validate_names_the_strategies_it_knows(client):
    res = client.post(
        "/receipts/validate",
        json={"receipt": "chevron", "line_id": 1, "word_id": 1, "label": "TAX", "strategy": "nope"},
    )
    assert res.status_code == 422
    assert res.json() == {
        "error": "Unknown strategy 'nope'; use one of memory, rules, baseline, choice, agent, cascade, memory-offline.",
        "kind": "InputError",
    }


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        ({"line_id": 1, "word_id": 1, "label": "TAX"}, ["body", "receipt"]),
        ({"receipt": "chevron", "line_id": "x", "word_id": 1, "label": "TAX"}, ["body", "line_id"]),
        (
            {"receipt": "chevron", "line_id": 1, "word_id": 1, "label": "TAX", "reason": "x" * 501},
            ["body", "reason"],
        ),
    ],
)
def test_validate_rejects_malformed_requests(client, payload, loc):
    res = client.post("/receipts/validate", json=payload)
    assert res.status_code == 422 and res.json()["detail"][0]["loc"] == loc
