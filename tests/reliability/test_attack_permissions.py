"""Who may call what: the permission table is pinned here, and every mounted route is called
with a token (API) or a session (web) of each role and answers as the table says."""

from __future__ import annotations

import re

import pytest
from attack_helpers import PASSWORD, make_served, sign_in
from fastapi import APIRouter
from fastapi.testclient import TestClient

from casework import registry
from casework.access import create_token, create_user, open_access
from casework.apikit import permission_table
from casework.apps.vanpool import service as vanpool_service
from casework.apps.vanpool.deps import build_deps as vanpool_deps
from casework.registry import AppSpec
from casework.runtime.context import Role
from casework.server import create_app

# face method path role own action: the whole table; a change to a route's permission is a
# change here, on purpose.
TABLE = """
web GET / reviewer - web.inbox.read
api GET /documents/examples user own documents.examples.list
api POST /documents/examples reviewer own documents.examples.add
api DELETE /documents/examples/{example_id} reviewer own documents.examples.delete
api GET /documents/examples/{example_id} user own documents.examples.read
api POST /documents/api/agent/correct user own documents.extraction.correct
api POST /documents/api/agent/extract user own documents.extraction.start
api GET /documents/documents user own documents.documents.list
api POST /documents/documents user own documents.document.add
api GET /documents/documents/{document_id} user own documents.document.read
api POST /documents/extractions user own documents.extraction.start
api GET /documents/extractions/{extraction_id} user own documents.extraction.read
api POST /documents/extractions/{extraction_id}/correct user own documents.extraction.correct
api GET /documents/runs/{run_id} user own documents.run.read
api GET /documents/runs/{run_id}/events user own documents.run.read
api GET /documents/stacks user own documents.stacks.list
api POST /documents/stacks user own documents.stack.create
api GET /documents/stacks/{stack_id} user own documents.stack.read
api POST /documents/stacks/{stack_id}/build user own documents.stack.build
api POST /documents/stacks/{stack_id}/documents user own documents.stack.edit
api GET /documents/stacks/{stack_id}/export.csv user own documents.stack.export
web GET /evals reviewer - web.evals.list
web GET /evals/compare reviewer - web.evals.compare
web GET /evals/{run_id}/files/{path:path} reviewer - web.evals.file
api GET /health anyone - server.health
api POST /hed/annotate user - hed.annotation.run
api POST /hed/annotate/events user - hed.annotation.run
api POST /hed/annotate/stream user - hed.annotation.run
api GET /hed/examples user own hed.examples.list
api POST /hed/examples reviewer own hed.examples.add
api DELETE /hed/examples/{example_id} reviewer own hed.examples.delete
api GET /hed/examples/{example_id} user own hed.examples.read
api POST /hed/validate user - hed.strings.validate
api POST /hed/validate/files user - hed.files.validate
web GET /items/{app}/{item_id} reviewer - web.item.read
web POST /items/{app}/{item_id}/decide reviewer - web.item.decide
web GET /login anyone - web.signin.form
web POST /login anyone - web.signin
web POST /logout user - web.signout
api GET /receipts/examples user own receipts.examples.list
api POST /receipts/examples reviewer own receipts.examples.add
api DELETE /receipts/examples/{example_id} reviewer own receipts.examples.delete
api GET /receipts/examples/{example_id} user own receipts.examples.read
api GET /receipts/receipts user own receipts.receipts.read
api GET /receipts/review user own receipts.review.list
api POST /receipts/review/{label_id}/accept reviewer own receipts.review.decide
api POST /receipts/review/{label_id}/reject reviewer own receipts.review.decide
api POST /receipts/validate user own receipts.label.validate
api GET /receipts/words/{receipt}/{line_id}/{word_id}/labels user own receipts.word.history
web GET /runs reviewer - web.runs.list
web POST /runs reviewer - web.run.start
web GET /runs/{run_id} reviewer - web.run.read
web GET /runs/{run_id}/events reviewer - web.run.read
api POST /sql/ask user - sql.question.ask
api GET /sql/schema admin - sql.schema.read
api GET /sql/examples user own sql.examples.list
api POST /sql/examples reviewer own sql.examples.add
api DELETE /sql/examples/{example_id} reviewer own sql.examples.delete
api GET /sql/examples/{example_id} user own sql.examples.read
api POST /sql/validate user - sql.query.validate
web GET /static/web.js anyone - web.static
api GET /vanpool/approvals reviewer - vanpool.approvals.list
api POST /vanpool/approvals/{case_id} reviewer - vanpool.approval.decide
api GET /vanpool/cases reviewer - vanpool.cases.list
api GET /vanpool/examples user own vanpool.examples.list
api POST /vanpool/examples reviewer own vanpool.examples.add
api DELETE /vanpool/examples/{example_id} reviewer own vanpool.examples.delete
api GET /vanpool/examples/{example_id} user own vanpool.examples.read
api GET /vanpool/cases/{case_id} reviewer - vanpool.case.read
api POST /vanpool/cases/{case_id}/replies reviewer - vanpool.case.reply
api POST /vanpool/tick reviewer - vanpool.time.tick
api GET /vanpool/vanpools user - vanpool.vanpools.list
api POST /vanpool/vanpools/{vanpool_id}/audit reviewer - vanpool.audit.run
api GET /vanpool/vanpools/{vanpool_id}/audit/events reviewer - vanpool.audit.run
"""

ROLES = {"bob": Role.USER, "ana": Role.REVIEWER, "ada": Role.ADMIN}
# A value for each path parameter that names nothing stored: an allowed caller gets a 404 or
# a 422 from the route itself, never a permission answer.
PARAMS = {
    "app": "receipts",
    "case_id": "CASE-00000000",
    "document_id": "999999",
    "example_id": "999999",
    "extraction_id": "999999",
    "item_id": "999999",
    "label_id": "999999",
    "line_id": "1",
    "path:path": "report.html",
    "receipt": "nothing-here",
    "run_id": "nothing-here",
    "stack_id": "999999",
    "vanpool_id": "VP-999",
    "word_id": "1",
}


def _rows(text: str) -> list[dict[str, object]]:
    rows = []
    for line in text.strip().splitlines():
        face, method, path, role, own, action = line.split()
        rows.append(
            {
                "face": face,
                "method": method,
                "path": path,
                "action": action,
                "role": role,
                "own": own == "own",
            }
        )
    return rows


def _url(path: str) -> str:
    return re.sub(r"\{([^}]+)\}", lambda m: PARAMS[m.group(1)], path)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    served = make_served(tmp_path_factory.mktemp("perm") / "home")
    engine = open_access(served.settings)
    create_user(engine, "ada", "admin", password=PASSWORD)
    tokens = {name: create_token(engine, name)[1] for name in ROLES}
    return served, tokens


def test_the_table_is_what_the_server_mounts(world):
    served, _ = world
    assert permission_table(served.app) == sorted(
        _rows(TABLE), key=lambda r: (r["path"], r["method"])
    )


def test_a_route_that_declares_nothing_is_not_mounted(tmp_path, monkeypatch):
    def leaky(settings):
        api = APIRouter()

        @api.get("/open")
        def open_route() -> dict[str, str]:
            return {"oops": "anyone"}

        return api

    apps = dict(registry.all_apps())
    apps["leaky"] = AppSpec(name="leaky", description="undeclared", router=leaky)
    monkeypatch.setattr(registry, "_cache", apps)
    served = make_served(tmp_path / "home")
    assert not [r for r in permission_table(served.app) if r["path"].startswith("/leaky")]
    assert served.api().get("/leaky/open").status_code == 404


def _call(client: TestClient, method: str, url: str) -> tuple[int, str]:
    if method == "GET":
        # an event stream of something unknown is refused before it starts
        res = client.get(url, follow_redirects=False)
    else:
        res = client.request(method, url, json={}, follow_redirects=False)
    return res.status_code, res.text


def _misanswered(client: TestClient, face: str, role: Role) -> list[tuple[object, ...]]:
    """The routes of ``face`` that answer ``client`` (acting as ``role``) unlike the table:
    a permission 403 where the role suffices, anything else where it does not, or a 401/5xx."""
    wrong = []
    for row in _rows(TABLE):
        if row["face"] != face or row["role"] == "anyone":
            continue
        status, text = _call(client, str(row["method"]), _url(str(row["path"])))
        allowed = role.rank >= Role(str(row["role"])).rank
        denied = status == 403 and f"needs the {row['role']} role" in text
        if allowed == denied or status == 401 or status >= 500:
            wrong.append((row["method"], row["path"], status, text[:120]))
    return wrong


@pytest.mark.parametrize("name", list(ROLES))
def test_every_api_route_answers_each_role_as_the_table_says(world, name):
    served, tokens = world
    client = served.client()
    client.headers["Authorization"] = f"Bearer {tokens[name]}"
    assert _misanswered(client, "api", ROLES[name]) == []


@pytest.mark.parametrize("name", list(ROLES))
def test_every_web_page_answers_each_role_as_the_table_says(world, name):
    served, _ = world
    client = served.client()
    assert sign_in(client, name, PASSWORD).status_code == 303
    assert _misanswered(client, "web", ROLES[name]) == []


def test_without_a_session_a_page_sends_to_sign_in(world):
    served, _ = world
    client = served.client()
    for row in _rows(TABLE):
        if row["face"] != "web" or row["role"] == "anyone":
            continue
        status, _ = _call(client, str(row["method"]), _url(str(row["path"])))
        assert status in (303, 401), row


def test_a_user_token_changes_no_vanpool_case(tmp_path):
    """The issue's attack, as written: a user's reply closes no case, a user's ticks move
    none, a user reads no rider's e-mail."""
    served = make_served(tmp_path / "home")
    engine = open_access(served.settings)
    _, bob = create_token(engine, "bob")
    deps = vanpool_deps(served.settings)
    vanpool_service.import_roster(deps)
    reviewer = served.api()
    user = served.client()
    user.headers["Authorization"] = f"Bearer {bob}"
    for vanpool in reviewer.get("/vanpool/vanpools").json():
        res = reviewer.post(f"/vanpool/vanpools/{vanpool}/audit", json={"strategy": "rules"})
        assert res.status_code == 200, res.text
    before = reviewer.get("/vanpool/cases").json()
    assert before, "the rules found no case to attack"
    case_id = before[0]["case_id"]
    reply = {"text": "All good, thanks, I confirm.", "strategy": "rules"}
    assert user.post(f"/vanpool/cases/{case_id}/replies", json=reply).status_code == 403
    for days in (8, 16, 24):
        tick = {"now": f"2030-01-{days:02d}T09:00:00", "strategy": "rules"}
        assert user.post("/vanpool/tick", json=tick).status_code == 403
    assert user.get("/vanpool/cases").status_code == 403
    assert user.get(f"/vanpool/cases/{case_id}").status_code == 403
    assert reviewer.get("/vanpool/cases").json() == before
    assert reviewer.get("/vanpool/approvals").json() == []


def test_create_app_mounts_the_same_table_for_each_settings(tmp_path):
    """The table does not depend on the data: a second, empty home serves the same."""
    settings = make_served(tmp_path / "a").settings
    assert permission_table(create_app(settings)) == permission_table(
        make_served(tmp_path / "b").app
    )
