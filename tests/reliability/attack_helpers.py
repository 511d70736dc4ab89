"""Attack and fault helpers: an app on a fresh home with a reviewer, a user and an API token."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response

from casework.access import create_token, create_user, open_access
from casework.config import Settings
from casework.server import create_app

PASSWORD = "correct-horse-battery"


@dataclass
class Served:
    settings: Settings
    app: FastAPI
    token: str
    """ana's API token (a reviewer)."""

    def client(self) -> TestClient:
        return TestClient(self.app, raise_server_exceptions=False)

    def api(self) -> TestClient:
        client = self.client()
        client.headers["Authorization"] = f"Bearer {self.token}"
        return client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def sign_in(client: TestClient, user: str, password: str, next_: str = "/") -> Response:
    form = client.get("/login")
    return client.post(
        "/login",
        data={"username": user, "password": password, "csrf": csrf_of(form.text), "next": next_},
        follow_redirects=False,
    )


def make_served(home: Path, **overrides: object) -> Served:
    settings = Settings(home=home, allow_network_models=False, **overrides)  # type: ignore[arg-type]
    engine = open_access(settings)
    create_user(engine, "ana", "reviewer", password=PASSWORD)
    create_user(engine, "bob", "user", password=PASSWORD)
    _, token = create_token(engine, "ana")
    return Served(settings=settings, app=create_app(settings), token=token)
