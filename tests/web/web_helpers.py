"""Web test helpers: a receipts store with NEEDS_REVIEW labels, users, signed-in clients."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import Label, ValidationStatus
from casework.apps.receipts.repository import LabelChange
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
