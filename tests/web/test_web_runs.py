"""Live runs: events persisted with sequence numbers, SSE re-attach, a receipts run end to end."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from web_helpers import Site, csrf_of

from casework.apps.receipts.review import ReceiptsReview
from casework.errors import InputError
from casework.llm import ScriptedChatModel, call
from casework.runtime.context import Caller, Role
from casework.web.runs import RunManager
from casework.web.store import RunStore

ANA = Caller(1, "ana", Role.REVIEWER)


class FakeProvider:
    app = "fake"

    def __init__(self, fail_after: int | None = None) -> None:
        self.fail_after = fail_after

    def start_run(self, params, caller):
        if params.get("n") == "bad":
            raise InputError("n must be a number.")

        def events():
            for i in range(3):
                if self.fail_after == i:
                    raise RuntimeError("the model went away")
                yield {"type": "text", "text": f"step {i}"}
            yield {"type": "complete", "items": ["7", "8"]}

        return events()


def _wait(store: RunStore, run_id: str, seconds: float = 10) -> str:
    for _ in range(int(seconds / 0.05)):
        run = store.get(run_id)
        if run.finished:
            return run.status
        time.sleep(0.05)
    raise AssertionError("run did not finish")


def test_run_events_are_numbered_and_a_failure_is_the_last_event(settings) -> None:
    store = RunStore(settings)
    runs = RunManager(store)
    ok = runs.start(FakeProvider(), {"n": "1"}, ANA)
    assert _wait(store, ok.id) == "done"
    events = store.events_after(ok.id)
    assert [(e.seq, e.type) for e in events] == [
        (1, "text"),
        (2, "text"),
        (3, "text"),
        (4, "complete"),
    ]
    assert [e.seq for e in store.events_after(ok.id, 2)] == [3, 4]
    assert [r.id for r in store.runs_for_item("fake", "8")] == [ok.id]
    broken = runs.start(FakeProvider(fail_after=1), {"n": "1"}, ANA)
    assert _wait(store, broken.id) == "failed"
    last = store.events_after(broken.id)[-1]
    assert (last.seq, last.data) == (
        2,
        {"type": "error", "message": "RuntimeError: the model went away"},
    )
    before = len(store.recent())
    with pytest.raises(InputError, match="must be a number"):
        runs.start(FakeProvider(), {"n": "bad"}, ANA)
    assert len(store.recent()) == before  # a bad input stores nothing


def _sse(client, url: str, headers: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    out, current = [], {}
    with client.stream("GET", url, headers=headers or {}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith(("id:", "event:", "data:")):
                key, _, value = line.partition(":")
                current[key] = value.strip()
            elif not line and current:
                out.append(
                    (current.get("id", ""), current.get("event", ""), current.get("data", ""))
                )
                if current.get("event") == "end":
                    break
                current = {}
    return out


def test_a_receipts_run_from_the_ui_streams_and_records_a_review_item(site: Site) -> None:
    word = site.deps.repo.get_word(site.deps.repo.resolve_receipt("chevron").id, 1, 1)
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("submit_decision", verdict="VALID", confidence=70, reasoning="Looks right."),
        ]
    )
    site.app.state.web.providers["receipts"] = ReceiptsReview(
        site.settings, deps=site.deps, chat_model=model
    )
    ana = site.client("ana")
    page = ana.get("/runs")
    assert 'data-app="receipts"' in page.text
    form = {
        "csrf": csrf_of(page.text),
        "app": "receipts",
        "receipt": "chevron",
        "line_id": "1",
        "word_id": "1",
        "label": "MERCHANT_NAME",
        "strategy": "agent",
    }
    bad = ana.post("/runs", data=form | {"line_id": "x"})
    assert bad.status_code == 422 and "whole numbers" in bad.text
    started = ana.post("/runs", data=form, follow_redirects=False)
    assert started.status_code == 303
    run_id = started.headers["location"].rsplit("/", 1)[1]
    assert _wait(site.app.state.web.store, run_id) == "done"
    events = _sse(ana, f"/runs/{run_id}/events")
    types = [e[1] for e in events]
    assert types == ["tool", "tool_result", "tool", "tool_result", "complete", "end"]
    assert [e[0] for e in events[:-1]] == ["1", "2", "3", "4", "5"]
    # Re-attaching with Last-Event-ID gets only what came after.
    again = _sse(ana, f"/runs/{run_id}/events", {"Last-Event-ID": "3"})
    assert [(e[0], e[1]) for e in again] == [("4", "tool_result"), ("5", "complete"), ("", "end")]
    complete = json.loads(events[4][2])
    # VALID at 70 is not above 80: the policy sends it to review, and the inbox shows it.
    assert complete["result"]["verdict"] == "NEEDS_REVIEW"
    (item,) = complete["items"]
    assert word.text in ana.get("/").text
    detail = ana.get(f"/items/receipts/{item}").text
    assert f'href="/runs/{run_id}"' in detail
    steps = re.findall(r"<li class=\"step\"><code>(\w+)</code>", detail)
    assert steps == ["get_word_context", "submit_decision"]
    page = ana.get(f"/runs/{run_id}").text
    assert page.count('class="event ') == 5 and f'href="/items/receipts/{item}"' in page


HED_DATA = Path(__file__).parents[1] / "apps" / "hed" / "data"


def test_a_bids_pair_uploaded_in_the_ui_is_validated_and_annotated(site: Site) -> None:
    """hed's live runs take an events file and its sidecar as uploads: validated as hedtools'
    BIDS validation does, or the sidecar's HED written for the levels (rules: no model)."""
    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.review import HedReview

    site.app.state.web.providers["hed"] = HedReview(
        site.settings, deps=build_deps(site.settings, validator="python")
    )
    ana = site.client("ana")
    page = ana.get("/runs")
    assert 'enctype="multipart/form-data"' in page.text and 'type="file" name="events"' in page.text
    form = {"csrf": csrf_of(page.text), "app": "hed", "mode": "validate", "strategy": "rules"}
    tsv = (HED_DATA / "sub-01_task-GoNoGo_events.tsv").read_bytes()
    side = (HED_DATA / "task-GoNoGo_events.json").read_bytes()
    files = {
        "events": ("sub-01_task-GoNoGo_events.tsv", tsv, "text/tab-separated-values"),
        "sidecar": ("task-GoNoGo_events.json", side, "application/json"),
    }
    missing = ana.post("/runs", data=form | {"mode": "annotate"})
    assert missing.status_code == 422 and "Choose a file for the field Events file" in missing.text
    uploads = site.settings.home / "uploads"
    bad = ana.post("/runs", data=form | {"mode": "annotate", "strategy": "oracle"}, files=files)
    assert bad.status_code == 422 and "oracle" in bad.text
    assert not any(uploads.iterdir())  # a run refused before it started keeps no upload

    started = ana.post("/runs", data=form, files=files, follow_redirects=False)
    assert started.status_code == 303
    run_id = started.headers["location"].rsplit("/", 1)[1]
    assert _wait(site.app.state.web.store, run_id, seconds=120) == "done"  # hedtools loads
    events = site.app.state.web.store.events_after(run_id)
    assert [e.type for e in events] == ["text", "validation", "complete"]
    assert (events[1].data["valid"], events[1].data["errors"]) == (True, [])

    started = ana.post(
        "/runs", data=form | {"mode": "annotate"}, files=files, follow_redirects=False
    )
    run_id = started.headers["location"].rsplit("/", 1)[1]
    assert _wait(site.app.state.web.store, run_id, seconds=120) == "done"
    events = site.app.state.web.store.events_after(run_id)
    levels = [e.data for e in events if e.type == "level"]
    assert [lv["level"] for lv in levels] == [
        "block_start",
        "go_cue",
        "button_press",
        "stop_cue",
        "block_end",
    ]
    sidecar = next(e.data for e in events if e.type == "sidecar")
    assert sidecar["out"] is None  # the server's path is not shown
    assert events[-1].data == {"type": "complete", "valid": sidecar["written"], "items": []}
