"""Vanpool approvals and failed extractions in the inbox, decided in place, escaped."""

from __future__ import annotations

import re

from vanpool_helpers import Sink
from web_helpers import DOC_TEXT, DRAFT, XSS, Cases, Site, csrf_of

from casework.access.cli import caller_named

ESCAPED = "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;"


def _items(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr class="item" data-app="([^"]+)" data-id="([^"]+)"', html)


def _item_id(html: str, app: str, kind: str) -> str:
    found = re.search(
        rf'data-app="{app}" data-id="([^"]+)">\s*<td><span class="badge">{app}</span><br>'
        rf'<span class="muted">{kind}</span>',
        html,
    )
    assert found, f"no {app} {kind} item on the page"
    return found.group(1)


def _decide(client, app: str, item: str, action: str, **form: str):
    page = client.get(f"/items/{app}/{item}")
    assert page.status_code == 200, page.text
    data = {"action": action, "csrf": csrf_of(page.text), "note": "", **form}
    return client.post(f"/items/{app}/{item}/decide", data=data, follow_redirects=True)


def test_inbox_lists_three_apps_with_counts_and_filters(site: Site, cases: Cases) -> None:
    ana = site.client("ana")
    html = ana.get("/").text
    items = _items(html)
    assert sorted({app for app, _ in items}) == ["documents", "receipts", "vanpool"]
    assert [app for app, _ in items].count("vanpool") == 2
    counts = dict(re.findall(r'<span class="badge" data-app="([a-z]+)">(\d+)</span>', html))
    assert counts == {"documents": "1", "hed": "0", "receipts": "4", "sql": "0", "vanpool": "2"}
    assert re.search(r'id="waiting-total">7<', html)
    assert "7 items match; showing 1–7." in html
    only = ana.get("/?app=vanpool").text
    assert {app for app, _ in _items(only)} == {"vanpool"}
    assert "2 items match" in only
    assert _items(ana.get("/?age=old").text) == []
    assert len(_items(ana.get("/?age=1d").text)) == 7
    assert _items(ana.get("/?status=decided").text) == []


def test_cancel_membership_approved_once_second_reviewer_sees_who(site: Site, cases: Cases) -> None:
    ana, cy = site.client("ana"), site.client("cy")
    item = _item_id(ana.get("/?app=vanpool").text, "vanpool", "cancel_membership")
    page = ana.get(f"/items/vanpool/{item}").text
    assert "Approve: cancel the membership" in page and 'id="edit"' not in page
    assert "Case timeline (audit log)" in page and "approval_requested" in page
    riders = len(cases.vanpool.repo.get_vanpool(cases.cancel_vanpool).riders)
    cy_form = cy.get(f"/items/vanpool/{item}")  # cy has the form open before ana decides
    done = _decide(ana, "vanpool", item, "approve", note="three silent weeks")
    assert "Done: approved: membership cancelled by ana." in done.text
    late = cy.post(
        f"/items/vanpool/{item}/decide",
        data={"action": "reject", "csrf": csrf_of(cy_form.text), "note": "no"},
    )
    assert "Nothing changed: ana had already decided (approved: membership cancelled" in late.text
    remaining = cases.vanpool.repo.get_vanpool(cases.cancel_vanpool).riders
    assert len(remaining) == riders - len(cases.cancel_riders)
    assert cases.vanpool.journal.count("cancel_membership") == len(cases.cancel_riders)
    decided = ana.get("/?status=decided&app=vanpool").text
    assert [i for _, i in _items(decided)] == [item]


def test_edited_draft_is_sent_and_the_reply_is_escaped(
    site: Site, cases: Cases, sink: Sink
) -> None:
    ana = site.client("ana")
    item = _item_id(ana.get("/?app=vanpool").text, "vanpool", "send_email_for_review")
    page = ana.get(f"/items/vanpool/{item}").text
    assert XSS not in page
    assert f"I dispute this. {ESCAPED}" in page
    assert f">{DRAFT}</textarea>" in page
    sent = len(sink.messages)
    done = _decide(ana, "vanpool", item, "edit", edit=f"A person will call you. {XSS}")
    assert "Done: edited and sent by ana." in done.text
    assert len(sink.messages) == sent + 1
    assert sink.messages[-1].get_content().strip() == f"A person will call you. {XSS}"
    assert XSS not in done.text and f"A person will call you. {ESCAPED}" in done.text
    again = _decide(ana, "vanpool", item, "approve")  # a second press sends nothing
    assert "Nothing changed: ana had already decided (edited and sent" in again.text
    assert len(sink.messages) == sent + 1
    assert cases.vanpool.repo.get_message(cases.draft_message).status == "sent"


def test_failed_extraction_shows_its_text_escaped_and_retries_once(
    site: Site, cases: Cases
) -> None:
    ana = site.client("ana")
    item = _item_id(ana.get("/?app=documents").text, "documents", "failed_extraction")
    assert item == str(cases.extraction)
    page = ana.get(f"/items/documents/{item}").text
    assert XSS not in page
    assert f"Note: {ESCAPED}" in page
    assert "limit:model_calls: the agent ran out of model calls" in page
    assert "Retry the extraction" in page and "Mark reviewed" in page
    done = _decide(ana, "documents", item, "approve")
    assert re.search(r"Done: retried as extraction \d+ by ana\.", done.text)
    assert DOC_TEXT.splitlines()[1] in page
    bob = caller_named("bob", site.settings).user_id
    [doc] = cases.documents.repo.list_documents(bob)
    statuses = [x.status for x in cases.documents.repo.extractions_of(bob, doc.id)]
    assert statuses == ["failed", "completed"]
    again = _decide(ana, "documents", item, "reject", note="seen")
    assert "Nothing changed: ana had already decided (retried as extraction" in again.text
    assert len(cases.documents.repo.extractions_of(bob, doc.id)) == 2
