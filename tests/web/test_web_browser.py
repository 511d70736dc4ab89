"""The UI in a real browser: Debian's Chromium driven by Playwright against uvicorn on loopback.

Set-up once per machine: ``apt-get install -y chromium``. Screenshots of every screen go to
``<pytest tmp>/screens`` (or ``$CASEWORK_WEB_SCREENSHOTS``); they are not committed.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from vanpool_helpers import Sink
from web_helpers import PASSWORD, XSS, Cases, Site

from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.review import ReceiptsReview
from casework.llm import ScriptedChatModel, call

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs Debian chromium: apt-get install -y chromium"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(site: Site) -> Iterator[tuple[Site, str]]:
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(site.app, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield site, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def screens(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CASEWORK_WEB_SCREENSHOTS", tmp_path / "screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _sign_in(page, base: str, user: str) -> None:
    page.goto(f"{base}/")
    assert "/login" in page.url
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("#counts")


def test_reviewers_in_a_browser(served: tuple[Site, str], screens: Path) -> None:
    from playwright.sync_api import sync_playwright

    site, base = served
    # A slow scripted agent, so the live run can be followed and reloaded mid-way.
    model = ScriptedChatModel(
        latency=1.0,
        steps=[
            call("get_word_context"),
            call("get_labels_on_receipt"),
            call("check_edge_cases"),
            call("submit_decision", verdict="VALID", confidence=75, reasoning="Name line."),
        ],
    )
    site.app.state.web.providers["receipts"] = ReceiptsReview(
        site.settings, deps=site.deps, chat_model=model
    )
    first, second, evil = site.review[0], site.review[1], site.review[-1]
    dialogs: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            ana = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            cy = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            for page in (ana, cy):
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

            ana.goto(f"{base}/")
            ana.screenshot(path=str(screens / "01-sign-in.png"), full_page=True)
            _sign_in(ana, base, "ana")
            _sign_in(cy, base, "cy")
            ana.screenshot(path=str(screens / "02-inbox.png"), full_page=True)
            rows = ana.locator("tr.item")
            assert rows.count() == 4
            assert ana.locator("span.badge[data-app=receipts]").inner_text() == "4"
            # The injected word is shown as text, and no script ran.
            assert XSS in rows.first.inner_text()

            # cy opens the item, then ana settles it first.
            cy.goto(f"{base}/items/receipts/{first.id}")
            ana.click(f"tr.item[data-id='{first.id}'] a")
            ana.wait_for_selector("#decision")
            assert ana.locator("mark").count() == 1
            ana.screenshot(path=str(screens / "03-decision.png"), full_page=True)
            ana.click("#approve")
            ana.wait_for_selector("#result")
            assert ana.locator("#result").inner_text() == "Done: accepted by ana."
            ana.screenshot(path=str(screens / "04-decided.png"), full_page=True)
            cy.fill("input[name=note]", "I disagree")
            cy.click("#reject")
            cy.wait_for_selector("#result")
            assert (
                cy.locator("#result")
                .inner_text()
                .startswith("Nothing changed: ana had already decided (accepted")
            )
            cy.screenshot(path=str(screens / "05-second-reviewer.png"), full_page=True)

            # A double click on Approve settles the label once.
            ana.goto(f"{base}/items/receipts/{second.id}")
            ana.dblclick("#approve")
            ana.wait_for_selector("#result")
            successors = [
                x
                for x in site.deps.repo.labels_for_word(second.word_pk)
                if x.replaces_id == second.id
            ]
            assert [(x.status, x.validated_by) for x in successors] == [
                (ValidationStatus.VALID, "human:ana")
            ]

            ana.goto(f"{base}/items/receipts/{evil.id}")
            assert ana.locator("mark").inner_text() == XSS
            assert XSS in ana.locator("#reasoning").inner_text()

            # Start a live run, follow it, reload in the middle, and lose nothing.
            ana.goto(f"{base}/runs")
            form = ana.locator("form.start-run[data-app=receipts]")
            form.locator("input[name=receipt]").fill("chevron")
            form.locator("input[name=line_id]").fill("1")
            form.locator("input[name=word_id]").fill("1")
            form.locator("select[name=label]").select_option("MERCHANT_NAME")
            ana.screenshot(path=str(screens / "06-runs.png"), full_page=True)
            form.locator("button[type=submit]").click()
            ana.wait_for_selector("li.event.tool")
            assert ana.locator("#run-status").inner_text() == "running"
            ana.screenshot(path=str(screens / "07-live-run.png"), full_page=True)
            ana.reload()
            ana.wait_for_selector("li.event.complete", timeout=30_000)
            ana.wait_for_function("document.getElementById('run-status').textContent === 'done'")
            seqs = ana.locator("li.event").evaluate_all("els => els.map(e => e.dataset.seq)")
            run_id = ana.url.rsplit("/", 1)[1]
            stored = site.app.state.web.store.events_after(run_id)
            assert seqs == [str(e.seq) for e in stored]
            assert [e.type for e in stored] == ["tool", "tool_result"] * 4 + ["complete"]
            ana.screenshot(path=str(screens / "08-run-done.png"), full_page=True)
            ana.click("#items-made a")
            ana.wait_for_selector("ol.steps")
            assert ana.locator("li.step").count() == 4
            ana.screenshot(path=str(screens / "09-run-item.png"), full_page=True)

            ana.goto(f"{base}/evals")
            ana.screenshot(path=str(screens / "10-evals.png"), full_page=True)
            ana.click("button:has-text('Sign out')")
            ana.wait_for_selector("input[name=username]")
            ana.goto(f"{base}/")
            assert "/login" in ana.url
        finally:
            browser.close()
    assert dialogs == []
    print(f"\nscreenshots: {screens}")


def test_vanpool_and_documents_in_a_browser(
    served: tuple[Site, str], cases: Cases, sink: Sink, screens: Path
) -> None:
    from playwright.sync_api import sync_playwright

    _site, base = served
    van = cases.vanpool
    riders = len(van.repo.get_vanpool(cases.cancel_vanpool).riders)
    dialogs: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            ana = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            cy = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            for page in (ana, cy):
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            _sign_in(ana, base, "ana")
            _sign_in(cy, base, "cy")
            assert ana.locator("#waiting-total").inner_text() == "7"
            assert ana.locator("span.badge[data-app=vanpool]").inner_text() == "2"
            assert ana.locator("span.badge[data-app=documents]").inner_text() == "1"
            ana.screenshot(path=str(screens / "11-inbox-three-apps.png"), full_page=True)

            # The pending cancel_membership: ana approves with a double click, cy comes late.
            ana.select_option("select[name=app]", "vanpool")
            ana.click("#filters button[type=submit]")
            ana.wait_for_selector("tr.item[data-app=vanpool]")
            assert ana.locator("tr.item").count() == 2
            cancel = ana.locator("tr.item", has_text="cancel_membership")
            item = cancel.get_attribute("data-id")
            cy.goto(f"{base}/items/vanpool/{item}")
            cancel.locator("a").click()
            ana.wait_for_selector("#decision")
            assert "Case timeline (audit log)" in ana.content()
            ana.screenshot(path=str(screens / "12-vanpool-cancel.png"), full_page=True)
            ana.dblclick("#approve")
            ana.wait_for_selector("#result")
            assert ana.locator("#result").inner_text() == (
                "Done: approved: membership cancelled by ana."
            )
            ana.screenshot(path=str(screens / "13-vanpool-cancelled.png"), full_page=True)
            cy.click("#reject")
            cy.wait_for_selector("#result")
            assert (
                cy.locator("#result")
                .inner_text()
                .startswith(
                    "Nothing changed: ana had already decided (approved: membership cancelled"
                )
            )
            cy.screenshot(path=str(screens / "14-vanpool-second-reviewer.png"), full_page=True)
            remaining = van.repo.get_vanpool(cases.cancel_vanpool).riders
            assert len(remaining) == riders - len(cases.cancel_riders)
            assert van.journal.count("cancel_membership") == len(cases.cancel_riders)

            # The drafted reply to an escalation: the rider's script is text; ana edits, sends.
            ana.goto(f"{base}/?app=vanpool")
            ana.locator("tr.item", has_text="send_email_for_review").locator("a").click()
            ana.wait_for_selector("#edit-text")
            assert f"I dispute this. {XSS}" in ana.locator("body").inner_text()
            ana.fill("#edit-text", "Thank you; a person will call you today.")
            ana.screenshot(path=str(screens / "15-vanpool-draft.png"), full_page=True)
            sent = len(sink.messages)
            ana.click("#edit")
            ana.wait_for_selector("#result")
            assert ana.locator("#result").inner_text() == "Done: edited and sent by ana."
            assert len(sink.messages) == sent + 1
            assert sink.messages[-1].get_content().strip() == (
                "Thank you; a person will call you today."
            )
            ana.screenshot(path=str(screens / "16-vanpool-sent.png"), full_page=True)

            # The failed extraction: its reason, fields and text, the script shown as text.
            ana.goto(f"{base}/?app=documents")
            ana.locator(f"tr.item[data-id='{cases.extraction}'] a").click()
            ana.wait_for_selector("#decision")
            text = ana.locator("div.lines").inner_text()
            assert f"Note: {XSS}" in text and "Invoice number: INV-2041" in text
            assert "the agent ran out of model calls" in ana.locator("#reasoning").inner_text()
            assert ana.locator("#approve").inner_text() == "Retry the extraction"
            ana.screenshot(path=str(screens / "17-documents-failed.png"), full_page=True)
        finally:
            browser.close()
    assert dialogs == []
    print(f"\nscreenshots: {screens}")


def test_hed_and_sql_review_in_a_browser(served: tuple[Site, str], screens: Path) -> None:
    """An unsure HED annotation and an unsure SQL answer: a wrong correction is refused on the
    page with the validator's words, a right one is kept."""
    from playwright.sync_api import sync_playwright

    from casework.apps.hed.deps import HedDeps
    from casework.apps.hed.models import HedDecision
    from casework.apps.hed.repository import HedRepository
    from casework.apps.hed.review import HedReview
    from casework.apps.hed.service import validate_strings
    from casework.apps.sql import service as sql
    from casework.apps.sql.database import create_database
    from casework.apps.sql.deps import build_deps, open_repository
    from casework.runtime import RunConfig
    from casework.stores import open_stores

    site, base = served
    settings = site.settings
    hed_repo = HedRepository(open_stores(settings).engine)
    draft = HedDecision(
        verdict="NEEDS_REVIEW",
        confidence=0.2,
        reasoning="nobody was sure",
        description=f"A blue square appears {XSS}",
        annotation="Sensory-event, Blue, Squarish",
        is_valid=False,
        validation_errors=["TAG_INVALID: 'Squarish' is not a valid base tag."],
    )
    hed_id = hed_repo.save(draft)
    validate_strings(["Red"], validator="python")  # load the schema before the page waits on it
    site.app.state.web.providers["hed"] = HedReview(
        settings, deps=HedDeps(settings=settings, validator="python", repo=hed_repo)
    )
    schema = sql.bundled_schema()
    url = f"sqlite:///{(settings.home / 'security.sqlite').as_posix()}"
    create_database(schema, url, rows=40, seed=3)
    open_repository(settings).save(schema, db_url=url)
    asked = sql.ask(
        build_deps(settings),
        "How many critical alerts are new?",
        RunConfig.of(settings),
        strategy="rules",
    )
    assert asked.review_id is not None
    fixed_hed = "Sensory-event, Visual-presentation, (Blue, Square)"
    fixed_sql = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical' AND status = 'new'"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            ana = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
            ana.set_default_timeout(90_000)  # a shared CI machine validates slowly
            _sign_in(ana, base, "ana")
            assert ana.locator("span.badge[data-app=hed]").inner_text() == "1"
            assert ana.locator("span.badge[data-app=sql]").inner_text() == "1"

            ana.goto(f"{base}/items/hed/{hed_id}")
            ana.wait_for_selector("#decision")
            assert f"A blue square appears {XSS}" in ana.locator("body").inner_text()
            assert ana.locator("#approve").count() == 0  # an invalid draft cannot be accepted
            ana.fill("#edit-text", "Sensory-event, Squarish")
            ana.click("#edit")
            ana.wait_for_selector("#error")
            assert "TAG_INVALID" in ana.locator("#error").inner_text()
            ana.screenshot(path=str(screens / "21-hed-refused.png"), full_page=True)
            ana.fill("#edit-text", fixed_hed)
            ana.click("#edit")
            ana.wait_for_selector("#result")
            assert ana.locator("#result").inner_text() == f"Done: corrected to {fixed_hed} by ana."

            ana.goto(f"{base}/items/sql/{asked.review_id}")
            ana.wait_for_selector("#decision")
            assert "How many critical alerts are new?" in ana.locator("body").inner_text()
            ana.fill("#edit-text", "DELETE FROM alerts")
            ana.click("#edit")
            ana.wait_for_selector("#error")
            assert "not run" in ana.locator("#error").inner_text()
            ana.fill("#edit-text", fixed_sql)
            ana.click("#edit")
            ana.wait_for_selector("#result")
            assert ana.locator("#result").inner_text() == f"Done: corrected to {fixed_sql} by ana."
            ana.screenshot(path=str(screens / "22-sql-corrected.png"), full_page=True)
        finally:
            browser.close()
