"""Tenant-scoped receipts (#9 part 3): a user never reads another user's receipts.

Through the real server (create_app, bearer tokens from casework.access): ana (a plain user)
owns the Walgreens receipt, bo (a reviewer) owns nothing, Chevron is the shared demo receipt.
Another user's receipt, word or label answers 404 with the sentence of one that does not exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect

from casework.access.service import create_token, create_user, open_access
from casework.apps.receipts.agent import build_agent, render_task
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.labels import resolve_ref
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import (
    bundled_receipt_files,
    ensure_indexed,
    import_files,
)
from casework.apps.receipts.tools import TOOL_NAMES
from casework.config import Settings
from casework.errors import NotFoundError
from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller, PermissionDenied, Role
from casework.runtime.runconfig import RunConfig
from casework.server import create_app
from casework.stores.sql import current_heads


def _file(slug: str) -> Path:
    return next(p for p in bundled_receipt_files() if p.name.split(".")[0] == slug)


def _queue(deps: ReceiptsDeps, receipt: str, line: int, word: int) -> int:
    """A 'SUBTOTAL instead of GRAND_TOTAL' suggestion waiting for review; its label id."""
    r = deps.repo.resolve_receipt(receipt)
    w = deps.repo.get_word(r.id, line, word)
    (total,) = [lab for lab in deps.repo.labels_for_word(w.id) if lab.current]
    (queued,) = deps.repo.append_labels(
        [
            LabelChange(
                word_pk=w.id,
                label_type="SUBTOTAL",
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="harmonizer",
                consolidated_from_id=total.id,
            )
        ]
    )
    return queued.id


def _tenancy_world(settings: Settings) -> dict[str, Any]:
    """Users and tokens, the shared Chevron (operator) and ana's Walgreens, one queued label each."""
    engine = open_access(settings)
    ana = create_user(engine, "ana")
    bo = create_user(engine, "bo", Role.REVIEWER)
    operator = build_deps(settings, with_vectors=False)
    import_files(operator, [_file("chevron")], index=False)
    ana_deps = operator.for_tenant(Caller(ana.id, ana.name, ana.role))
    report = import_files(ana_deps, [_file("walgreens")], index=False)
    assert [r.slug for r in report.added] == ["walgreens"]
    return {
        "ana": {"Authorization": f"Bearer {create_token(engine, 'ana')[1]}"},
        "bo": {"Authorization": f"Bearer {create_token(engine, 'bo')[1]}"},
        "ana_id": ana.id,
        "bo_id": bo.id,
        "shared_label": _queue(operator, "chevron", 13, 2),
        "ana_label": _queue(operator, "walgreens", 17, 2),
        "operator": operator,
    }


def _check_through_the_api(settings: Settings, world: dict[str, Any]) -> None:
    ana, bo = world["ana"], world["bo"]
    client = TestClient(create_app(settings))

    # ana asks first, so bo's identical request would hit her cached answer if the key lacked
    # the tenant.
    slugs = lambda res: [r["slug"] for r in res.json()]  # noqa: E731
    assert slugs(client.get("/receipts/receipts", headers=ana)) == ["chevron", "walgreens"]
    assert slugs(client.get("/receipts/receipts", headers=bo)) == ["chevron"]
    assert slugs(client.get("/receipts/receipts?merchant=Walgreens", headers=bo)) == []
    assert client.get("/receipts/receipts", headers={}).status_code == 401

    labels_of = "/receipts/words/{}/17/2/labels"
    mine = client.get(labels_of.format("walgreens"), headers=ana)
    assert mine.status_code == 200 and [lab["word_text"] for lab in mine.json()] == ["33.72"] * 2
    # bo gets exactly what a receipt that does not exist gets.
    for ref in ("walgreens", mine.json()[0]["receipt_pk"], "nowhere"):
        res = client.get(labels_of.format(ref), headers=bo)
        assert (res.status_code, res.json()) == (
            404,
            {
                "error": f"No receipt {str(ref)!r}; see `casework receipts list`.",
                "kind": "NotFoundError",
            },
        )
    shared = client.get("/receipts/words/chevron/13/2/labels", headers=bo)
    assert shared.status_code == 200 and shared.json()[0]["word_text"] == "$72.83"

    validate = {"line_id": 17, "word_id": 2, "label": "GRAND_TOTAL", "strategy": "rules"}
    res = client.post("/receipts/validate", json={"receipt": "walgreens", **validate}, headers=bo)
    assert (res.status_code, res.json()) == (
        404,
        {"error": "No receipt 'walgreens'; see `casework receipts list`.", "kind": "NotFoundError"},
    )
    res = client.post("/receipts/validate", json={"receipt": "walgreens", **validate}, headers=ana)
    assert res.status_code == 200 and res.json()["word_text"] == "33.72"

    # The review queue: each sees its own and the shared labels; bo can't decide ana's.
    queue = lambda who: [lab["id"] for lab in client.get("/receipts/review", headers=who).json()]  # noqa: E731
    assert queue(ana) == [world["shared_label"], world["ana_label"]]
    assert queue(bo) == [world["shared_label"]]
    for label_id in (world["ana_label"], 987654):
        res = client.post(f"/receipts/review/{label_id}/accept", headers=bo)
        assert (res.status_code, res.json()["error"]) == (404, f"No label with id {label_id}.")
    assert queue(ana) == [world["shared_label"], world["ana_label"]]  # untouched

    # Shared rows are read-only to a plain user, curated by reviewers.
    record = {"receipt": "chevron", **validate, "line_id": 13, "record": True}
    res = client.post("/receipts/validate", json=record, headers=ana)
    assert (res.status_code, res.json()) == (
        403,
        {
            "error": "Receipt chevron is shared and read-only to you: only a reviewer or an "
            "admin changes its labels.",
            "kind": "PermissionDenied",
        },
    )
    accepted = client.post(f"/receipts/review/{world['shared_label']}/accept", headers=bo)
    assert accepted.status_code == 200 and [lab["status"] for lab in accepted.json()] == [
        "VALID",
        "INVALID",
    ]
    assert queue(ana) == [world["ana_label"]] and queue(bo) == []
    own = client.post(
        "/receipts/validate", json={"receipt": "walgreens", **validate, "record": True}, headers=ana
    )
    assert own.status_code == 200 and len(own.json()["recorded_label_ids"]) == 1


def test_a_user_never_reads_another_users_receipts_through_the_api(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    world = _tenancy_world(settings)
    _check_through_the_api(settings, world)
    # The operator (CLI, evals) still sees every receipt; the rows say whose they are.
    operator = world["operator"]
    owners = {r.slug: r for r in operator.repo.list_receipts()}
    assert sorted(owners) == ["chevron", "walgreens"]
    assert "receipts_0002" in current_heads(operator.repo.engine)
    columns = {c["name"] for c in inspect(operator.repo.engine).get_columns("receipts_receipts")}
    assert "owner_id" in columns


def test_the_repository_scopes_every_read_and_write_by_its_tenant(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    world = _tenancy_world(settings)
    operator = world["operator"]
    ana = operator.for_tenant(Caller(world["ana_id"], "ana", Role.USER))
    eve = operator.for_tenant(Caller(world["bo_id"] + 1, "eve", Role.ADMIN))
    walgreens = ana.repo.resolve_receipt("walgreens")
    word = ana.repo.get_word(walgreens.id, 17, 2)

    assert [r.slug for r in eve.repo.list_receipts()] == ["chevron"]
    assert eve.repo.merchants() == ["Chevron"] and set(eve.repo.slugs().values()) == {"chevron"}
    assert eve.repo.count_labels() < operator.repo.count_labels() == ana.repo.count_labels()
    assert eve.repo.visible_keys([walgreens.key, "nope#1"]) == set()
    assert ana.repo.visible_keys([walgreens.key]) == {walgreens.key}
    for read in (
        lambda: eve.repo.get_receipt(walgreens.id),
        lambda: eve.repo.get_receipt_by_key(walgreens.image_id, walgreens.receipt_id),
        lambda: eve.repo.resolve_receipt(walgreens.image_id[:8]),
        lambda: eve.repo.word_by_pk(word.id),
        lambda: eve.repo.get_word(walgreens.id, 17, 2),
        lambda: eve.repo.get_label(world["ana_label"]),
    ):
        with pytest.raises(NotFoundError):
            read()
    assert eve.repo.words(walgreens.id) == [] and eve.repo.lines(walgreens.id) == []
    assert eve.repo.current_labels(receipt_pk=walgreens.id) == []
    assert eve.repo.labels_for_word(word.id) == []
    assert eve.repo.place(walgreens.place_id) is None
    assert ana.repo.place(walgreens.place_id).name == "Walgreens"
    change = LabelChange(word.id, "TAX", ValidationStatus.PENDING, proposed_by="eve")
    with pytest.raises(NotFoundError, match=f"No word with id {word.id}"):
        eve.repo.append_labels([change])
    # A user's place is its own row: the shared one is not filled in from a private receipt.
    chevron = operator.repo.resolve_receipt("chevron")
    assert walgreens.place_id != chevron.place_id

    # Shared receipts: plain users read them, write needs a reviewer; edge cases need an admin.
    shared_word = ana.repo.get_word(chevron.id, 13, 2)
    with pytest.raises(PermissionDenied, match="Receipt chevron is shared and read-only"):
        ana.repo.append_labels([LabelChange(shared_word.id, "TAX", ValidationStatus.PENDING, "a")])
    assert eve.repo.append_labels(
        [LabelChange(shared_word.id, "TAX", ValidationStatus.PENDING, "e")]
    )
    with pytest.raises(PermissionDenied, match="only an admin edits them"):
        ana.repo.add_edge_case("TAX", r"x+", "test")
    assert eve.repo.add_edge_case("TAX", r"x+", "test").pattern == "x+"


def test_the_agents_tools_cannot_reach_another_users_rows(tmp_path: Path) -> None:
    """bo's run on ana's word (a context bo could never build) finds nothing; his run on the
    shared receipt finds no neighbour on ana's receipt, while the operator's does."""
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    world = _tenancy_world(settings)
    deps = build_deps(settings)
    assert ensure_indexed(deps) == 52 + 65  # every word of both receipts, whoever owns them
    ana_ref = resolve_ref(deps, "walgreens", 17, 2, "GRAND_TOTAL")
    bo = deps.for_tenant(Caller(world["bo_id"], "bo", Role.REVIEWER))
    with pytest.raises(NotFoundError):
        resolve_ref(bo, "walgreens", 17, 2, "GRAND_TOTAL")

    def run_tools(d: ReceiptsDeps, ref: Any) -> dict[str, dict[str, Any]]:
        steps = [call(name) for name in TOOL_NAMES]
        steps.append(call("submit_decision", verdict="VALID", confidence=60, reasoning="ok"))
        model = ScriptedChatModel(steps=steps)
        run = build_agent(d, RunConfig(models=RoleModels.given(model)), evidence_budget=10).run(
            render_task(ref), context=ref, trace=False
        )
        model.assert_exhausted()
        return {c.name: json.loads(c.output) for c in run.tool_calls if c.name in TOOL_NAMES}

    stolen = run_tools(bo, ana_ref)
    for name in TOOL_NAMES:
        assert stolen[name]["status"] == "unavailable", (name, stolen[name])
        assert "33.72" not in json.dumps(stolen[name]) and "Walgreens" not in json.dumps(
            stolen[name]
        )

    shared_ref = resolve_ref(bo, "chevron", 13, 2, "GRAND_TOTAL")
    seen_by_bo = run_tools(bo, shared_ref)["search_similar_words"]
    seen_by_operator = run_tools(deps, shared_ref)["search_similar_words"]
    assert seen_by_bo["status"] == "ok" and seen_by_bo["neighbours"]
    assert {nb["merchant"] for nb in seen_by_bo["neighbours"]} == {"Chevron"}
    assert "Walgreens" in {nb["merchant"] for nb in seen_by_operator["neighbours"]}


def test_import_for_a_user_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings(home=home, allow_network_models=False)
    ana = create_user(open_access(settings), "ana")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "casework.cli", "receipts", "import", *args],
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "CASEWORK_HOME": str(home)},
        )

    done = cli(str(_file("walgreens")), "--user", "ana", "--no-index", "--json")
    assert done.returncode == 0, done.stderr
    assert [r["slug"] for r in json.loads(done.stdout)["added"]] == ["walgreens"]
    nobody = cli(str(_file("chevron")), "--user", "nobody", "--no-index")
    assert nobody.returncode == 2 and "Traceback" not in nobody.stderr
    assert nobody.stderr.strip() == "error: No user 'nobody'; list them with `casework user list`."

    operator = build_deps(settings, with_vectors=False)
    assert [r.slug for r in operator.repo.list_receipts()] == ["walgreens"]  # nothing half-written
    assert operator.for_tenant(Caller(ana.id + 1, "x", Role.USER)).repo.list_receipts() == []
    assert [
        r.slug for r in operator.for_tenant(Caller(ana.id, "ana", Role.USER)).repo.list_receipts()
    ] == ["walgreens"]


def test_receipts_0002_keeps_receipts_stored_before_it_shared(tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import text

    from casework.apps.receipts.repository import ReceiptsRepository
    from casework.stores.sql import _alembic_config, get_engine, migrate, migration_locations

    engine = get_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = _alembic_config(engine, migration_locations())
    command.upgrade(cfg, "receipts_0001")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO receipts_receipts (image_id, receipt_id, slug, merchant_name, source,"
                " width, height, extra_json, imported_at)"
                " VALUES ('img-old', 1, 'old', 'Old Shop', 'old.json', 1, 1, '{}', :now)"
            ),
            {"now": "2026-01-01 00:00:00"},
        )
    migrate(engine)
    assert "receipts_0002" in current_heads(engine)
    user = ReceiptsRepository(engine).for_tenant(Caller(7, "ana", Role.USER))
    assert [r.slug for r in user.list_receipts()] == ["old"]  # shared, not lost
    with pytest.raises(PermissionDenied):
        user.require_writable(user.resolve_receipt("old").id)
    command.downgrade(cfg, "receipts_0001")
    assert "owner_id" not in {c["name"] for c in inspect(engine).get_columns("receipts_receipts")}
    migrate(engine)
    assert "owner_id" in {c["name"] for c in inspect(engine).get_columns("receipts_places")}
