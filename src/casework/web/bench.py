"""Inbox page load times with many waiting items (``run_inbox_bench``).

Builds a throw-away home with the bundled receipts and ``n`` NEEDS_REVIEW labels spread over 30
days (seeded by the receipts service, taken through the registry), signs a reviewer in and times whole page loads through the ASGI app (routing, session check,
provider queries, template) of the web UI mounted on its own: the first page, every following page to the end, the filtered
views and one decision page. It prints nothing; the caller reports the figures.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["run_inbox_bench"]

PASSWORD = "bench-password-1"


def _seed(settings: Any, n: int) -> int:
    """The bundled receipts plus ``n`` review items over 30 days (the receipts service's
    seeding, through the registry); returns the newest item's id."""
    from casework.registry import app_service

    _, newest = app_service("receipts").seed_review_queue(settings, n, days=30)
    return int(newest)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


Step = Callable[[str, int, int], None]
"""``step(what, done, total)``: where the bench is (for a progress bar)."""


def run_inbox_bench(
    n: int = 10_000, repeats: int = 5, *, step: Step | None = None
) -> dict[str, Any]:
    """Median and worst page-load milliseconds for an inbox of ``n`` items."""
    step = step or (lambda what, done, total: None)
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from casework.access import create_user, open_access
    from casework.config import Settings
    from casework.web.pages import mount_web

    with tempfile.TemporaryDirectory(prefix="casework-web-bench-") as home:
        settings = Settings(home=Path(home), allow_network_models=False)
        step("seeding the review items", 0, 1)
        t0 = time.perf_counter()
        label_id = _seed(settings, n)
        seed_seconds = time.perf_counter() - t0
        create_user(open_access(settings), "bench", "reviewer", password=PASSWORD)
        # The web UI alone, as the server mounts it at / (the apps' API routes are not timed).
        app = FastAPI()
        mount_web(app, settings)
        client = TestClient(app)
        form = client.get("/login").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', form)
        assert csrf is not None
        client.post(
            "/login", data={"username": "bench", "password": PASSWORD, "csrf": csrf.group(1)}
        )

        def timed(url: str) -> tuple[float, str]:
            start = time.perf_counter()
            response = client.get(url)
            elapsed = time.perf_counter() - start
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}: {response.text[:200]}")
            return elapsed, response.text

        step("loading the first page", 0, repeats)
        timed("/")  # warm: migrations checked, deps opened, templates compiled
        first = []
        for i in range(repeats):
            first.append(timed("/")[0])
            step("loading the first page", i + 1, repeats)
        pages, seen, url = [], 0, "/"
        while url:
            elapsed, html = timed(url)
            pages.append(elapsed)
            seen += html.count('class="item"')
            step("walking every page", seen, n)
            found = re.search(r'href="([^"]+)" id="next"', html)
            url = found.group(1).replace("&amp;", "&") if found else ""
        views = {
            "app_filter": "/?app=receipts",
            "age_1d": "/?age=1d",
            "age_old": "/?age=old",
            "decided": "/?status=decided",
            "decision_page": f"/items/receipts/{label_id}",
        }
        figures = {
            name: _ms(statistics.median(timed(u)[0] for _ in range(repeats)))
            for name, u in views.items()
        }
        return {
            "items": n,
            "seed_seconds": round(seed_seconds, 2),
            "items_walked": seen,
            "pages": len(pages),
            "first_page_ms": _ms(statistics.median(first)),
            "page_median_ms": _ms(statistics.median(pages)),
            "page_max_ms": _ms(max(pages)),
            "last_page_ms": _ms(pages[-1]),
            **{f"{k}_ms": v for k, v in figures.items()},
        }
