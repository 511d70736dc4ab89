"""Web fixtures: a site (receipts store with NEEDS_REVIEW labels, users, the app)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# The vanpool tests' loopback SMTP sink, shared rather than copied.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps" / "vanpool"))

from vanpool_helpers import Sink, free_port
from web_helpers import (
    PASSWORD,
    XSS,
    Cases,
    Site,
    add_review_labels,
    add_vanpool_and_documents,
    write_receipt,
)

from casework.access import create_user, open_access
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.review import ReceiptsReview
from casework.apps.receipts.service import bundled_receipt_files, import_files
from casework.config import Settings
from casework.server import create_app


@pytest.fixture
def make_site(tmp_path: Path) -> Callable[..., Site]:
    def make(*, with_vectors: bool = False) -> Site:
        settings = Settings(home=tmp_path / "home", allow_network_models=False)
        deps = build_deps(settings, with_vectors=with_vectors)
        chevron = next(p for p in bundled_receipt_files() if p.name.startswith("chevron."))
        evil = write_receipt(
            tmp_path / "evil.labels.json",
            [("TEST", "B-MERCHANT_NAME"), ("MART", "I-MERCHANT_NAME"), (XSS, "O"), ("4.99", "O")],
            lines=[0, 0, 1, 1],
        )
        report = import_files(deps, [chevron, evil], index=with_vectors)
        assert len(report.added) == 2
        chevron_words = deps.repo.words(report.added[0].id)
        review = add_review_labels(
            deps, [(w.id, "PRODUCT_NAME") for w in chevron_words[:3]], "Neighbours disagree."
        )
        evil_word = next(w for w in deps.repo.words(report.added[1].id) if w.text == XSS)
        review += add_review_labels(deps, [(evil_word.id, "LINE_TOTAL")], f"Looks odd {XSS}")
        engine = open_access(settings)
        create_user(engine, "ana", "reviewer", password=PASSWORD)
        create_user(engine, "cy", "reviewer", password=PASSWORD)
        create_user(engine, "bob", "user", password=PASSWORD)
        app = create_app(settings)
        app.state.web.providers["receipts"] = ReceiptsReview(settings, deps=deps)
        return Site(settings=settings, deps=deps, app=app, review=review)

    return make


@pytest.fixture
def site(make_site: Callable[..., Site]) -> Site:
    return make_site()


@pytest.fixture
def sink() -> Iterator[Sink]:
    s = Sink(free_port())
    s.start()
    yield s
    s.stop()


@pytest.fixture
def cases(site: Site, sink: Sink) -> Cases:
    """The site with vanpool approvals and a failed extraction besides the receipts labels."""
    return add_vanpool_and_documents(site, sink.port)
