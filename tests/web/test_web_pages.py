"""The web pages through a test client: sign-in, CSRF, roles, deciding once, escaping."""

from __future__ import annotations

import re

from web_helpers import PASSWORD, XSS, Site, csrf_of, login

from casework.apps.receipts.models import ValidationStatus


def _decide(client, item: int, action: str, **form: str):
    page = client.get(f"/items/receipts/{item}")
    assert page.status_code == 200, page.text
    data = {"action": action, "csrf": csrf_of(page.text), "note": "", **form}
    return client.post(f"/items/receipts/{item}/decide", data=data, follow_redirects=False)


def test_every_page_needs_a_signed_in_user(site: Site) -> None:
    client = site.client()
    for path in ("/", "/items/receipts/1", "/runs", "/evals", "/runs/abc"):
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/login?next=")
    assert client.get("/runs/abc/events").status_code == 401
    forged = client.post("/items/receipts/1/decide", data={"action": "approve"})
    assert forged.status_code == 401
    client.cookies.set("cw_session", "eyJ1IjoxfQ.forged")
    assert client.get("/", follow_redirects=False).status_code == 303


def test_sign_in_checks_the_password_and_sets_a_safe_cookie(site: Site) -> None:
    client = site.client()
    form = client.get("/login")
    wrong = client.post(
        "/login",
        data={"username": "ana", "password": "nope-nope", "csrf": csrf_of(form.text)},
    )
    assert wrong.status_code == 401
    assert "The user name or password is wrong" in wrong.text
    form = client.get("/login?next=/runs")
    ok = client.post(
        "/login",
        data={"username": "ana", "password": PASSWORD, "csrf": csrf_of(form.text), "next": "/runs"},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and ok.headers["location"] == "/runs"
    cookie = ok.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    # An off-site next= is not followed.
    form = client.get("/login")
    off = client.post(
        "/login",
        data={
            "username": "ana",
            "password": PASSWORD,
            "csrf": csrf_of(form.text),
            "next": "//evil.example",
        },
        follow_redirects=False,
    )
    assert off.headers["location"] == "/"


def test_inbox_lists_waiting_items_with_counts(site: Site) -> None:
    page = site.client("ana").get("/")
    assert page.status_code == 200
    rows = re.findall(r'class="item" data-app="receipts" data-id="(\d+)"', page.text)
    assert rows == [str(lab.id) for lab in reversed(site.review)]
    assert 'data-app="receipts">4</span>' in page.text
    assert "4 items match; showing 1–4." in page.text


def test_decide_applies_once_and_the_second_reviewer_sees_who_was_first(site: Site) -> None:
    item = site.review[0]
    ana, cy = site.client("ana"), site.client("cy")
    stale = cy.get(f"/items/receipts/{item.id}")  # cy opened the page before ana decided
    first = _decide(ana, item.id, "approve")
    assert first.status_code == 303 and first.headers["location"].endswith("?result=applied")
    assert "Done: accepted by ana." in ana.get(first.headers["location"]).text
    second = cy.post(
        f"/items/receipts/{item.id}/decide",
        data={"action": "reject", "csrf": csrf_of(stale.text), "note": "no"},
        follow_redirects=False,
    )
    assert second.headers["location"].endswith("?result=first")
    shown = cy.get(second.headers["location"]).text
    assert "Nothing changed: ana had already decided (accepted" in shown
    history = site.deps.repo.labels_for_word(item.word_pk)
    successors = [x for x in history if x.replaces_id == item.id]
    assert [(x.status, x.validated_by) for x in successors] == [
        (ValidationStatus.VALID, "human:ana")
    ]
    # The decided item left the waiting list and shows under "decided".
    assert f'data-id="{item.id}"' not in ana.get("/").text
    assert f'data-id="{item.id}"' in ana.get("/?status=decided").text


def test_edit_and_reject(site: Site) -> None:
    ana = site.client("ana")
    edited = _decide(ana, site.review[1].id, "edit", edit="QUANTITY", note="it is a count")
    assert edited.status_code == 303
    history = site.deps.repo.labels_for_word(site.review[1].word_pk)
    successor = next(x for x in history if x.replaces_id == site.review[1].id)
    assert (successor.label_type, successor.status, successor.reasoning, successor.current) == (
        "QUANTITY",
        ValidationStatus.VALID,
        "it is a count",
        True,
    )
    assert "edited to QUANTITY by ana" in ana.get(edited.headers["location"]).text
    _decide(ana, site.review[2].id, "reject")
    rejected = site.deps.repo.labels_for_word(site.review[2].word_pk)[-1]
    assert (rejected.status, rejected.validated_by) == (ValidationStatus.INVALID, "human:ana")
    bad = _decide(ana, site.review[3].id, "edit", edit="NOT A LABEL")
    assert bad.status_code == 422 and "is not an upper-case label name" in bad.text


def test_forms_need_the_csrf_token_and_deciding_needs_a_reviewer(site: Site) -> None:
    item = site.review[0]
    ana = site.client("ana")
    ana.get(f"/items/receipts/{item.id}")
    no_token = ana.post(f"/items/receipts/{item.id}/decide", data={"action": "approve"})
    assert no_token.status_code == 403 and "reload the page" in no_token.text
    bob = site.client("bob")
    # a plain user sees no inbox and no item: they cross users; the API scopes to bob
    for path in ("/", f"/items/receipts/{item.id}", "/runs", "/evals"):
        page = bob.get(path)
        assert page.status_code == 403, path
        assert "needs the reviewer role; bob is a user" in page.text, path
    denied = bob.post(
        f"/items/receipts/{item.id}/decide",
        data={"action": "approve", "csrf": csrf_of(page.text)},
    )
    assert denied.status_code == 403 and "needs the reviewer role; bob is a user" in denied.text
    assert site.deps.repo.get_label(item.id).current  # nothing was written
    logout = ana.post("/logout", data={"csrf": "wrong"})
    assert logout.status_code == 403


def test_script_injection_in_a_word_and_a_reasoning_renders_as_text(site: Site) -> None:
    ana = site.client("ana")
    evil = site.review[-1]
    for html in (ana.get("/").text, ana.get(f"/items/receipts/{evil.id}").text):
        assert XSS not in html
        assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;" in html
    page = ana.get(f"/items/receipts/{evil.id}")
    assert page.headers["content-security-policy"].startswith(
        "default-src 'self'; script-src 'self'"
    )
    # The word is highlighted on its line of the receipt.
    assert "<mark>&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;</mark>" in page.text


def test_unknown_items_and_bad_filters_answer_in_one_sentence(site: Site) -> None:
    ana = site.client("ana")
    assert ana.get("/items/receipts/999999").status_code == 404
    assert ana.get("/items/receipts/abc").status_code == 404
    assert ana.get("/items/nosuchapp/1").status_code == 404
    assert ana.get("/?age=forever").status_code == 422
    assert ana.get("/?status=lost").status_code == 422
    broken = ana.get("/?after=garbage")
    assert broken.status_code == 422 and "start again from the first page" in broken.text


def test_login_form_needs_its_token(site: Site) -> None:
    client = site.client()
    response = client.post("/login", data={"username": "ana", "password": PASSWORD, "csrf": "x"})
    assert response.status_code == 403
    login(client, "ana")
    assert client.get("/").status_code == 200
