"""Learning from review in the inbox: a reviewer who sends an escalation's drafted answer
verifies the rider's reply as an escalation, and the platform stores it as an example."""

from __future__ import annotations

import re

from web_helpers import XSS, Cases, Site, csrf_of

from casework.examples import memory_for


def _draft_item(html: str) -> str:
    found = re.search(
        r'data-app="vanpool" data-id="([^"]+)">\s*<td><span class="badge">vanpool</span><br>'
        r'<span class="muted">send_email_for_review</span>',
        html,
    )
    assert found, "no drafted answer waits"
    return found.group(1)


def test_a_sent_draft_becomes_an_example_verified_by_the_reviewer(site: Site, cases: Cases) -> None:
    ana = site.client("ana")
    item = _draft_item(ana.get("/?app=vanpool").text)
    memory = memory_for(site.settings, "vanpool", None)
    assert memory.count() == 0
    page = ana.get(f"/items/vanpool/{item}")
    done = ana.post(
        f"/items/vanpool/{item}/decide",
        data={"action": "approve", "csrf": csrf_of(page.text), "note": ""},
        follow_redirects=True,
    )
    assert done.status_code == 200, done.text
    [example] = memory.list()
    assert example.key_text == f"I dispute this. {XSS}"
    assert example.answer == {"bucket": "escalation"}
    assert (example.verified_by, example.source) == ("ana", "review")
    assert example.owner_id is not None  # ana's own example, not a shared one
