"""The extraction agent with scripted models: tool texts, DB writes as it goes, always completes."""

from __future__ import annotations

import json

from docs_fixtures import ALICE, BOB, INVOICE_TEXT, on, text_read
from langchain_core.messages import ToolMessage

from casework.apps.documents.agent import NUDGE, run_correction, run_extraction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ExtractionInput
from casework.apps.documents.tools import EXTRACTION_TOOL_NAMES, create_tools
from casework.llm import ScriptedChatModel, call, say
from casework.runtime.decision import EndReason


def _doc(deps: DocumentsDeps, text: str = INVOICE_TEXT, user: int = ALICE) -> int:
    return deps.repo.add_document(user, filename="inv.pdf", data=b"%PDF-1", read=text_read(text)).id


def _tool_results(messages) -> list[tuple[str, str, str]]:
    return [(m.name, m.status, m.content) for m in messages if isinstance(m, ToolMessage)]


def test_tools_are_the_specs_and_take_no_ids(deps: DocumentsDeps) -> None:
    tools = create_tools(1, 1, ALICE, deps.repo)
    assert tuple(t.name for t in tools) == EXTRACTION_TOOL_NAMES
    for t in tools:
        props = set(t.args)
        assert not props & {"user_id", "document_id", "extraction_id", "doc_id", "id"}, t.name
    assert {t.name: sorted(t.args) for t in tools}["update_field"] == [
        "confidence",
        "path",
        "value",
    ]


def test_agent_writes_as_it_goes_and_completes(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    seen: dict[str, object] = {}

    def check_db_then_complete(messages):
        ext = deps.repo.get_extraction(ALICE, 1)
        seen["status"], seen["fields"] = ext.status, dict(ext.fields)
        seen["results"] = _tool_results(messages)
        return call("complete_extraction")

    model = ScriptedChatModel(
        steps=[
            call("get_document_text"),
            call("identify_document", document_type="Invoice"),
            call(
                "extract_fields",
                fields={"total": 45.1, "vendor": {"name": "Acme"}},
                confidences={"total": 1.5, "vendor": 0.9},
            ),
            call(
                "extract_fields",
                fields={"total": 45.1, "vendor": {"name": "ACME SUPPLIES LTD"}},
                confidences={"total": 0.95, "vendor": 0.9},
            ),
            call("update_field", path="vendor.city", value="Leeds", confidence=0.7),
            check_db_then_complete,
        ]
    )
    events: list[dict] = []
    decision = run_extraction(
        ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model, events=events.append)
    )
    model.assert_exhausted()
    assert seen["status"] == "in_progress"  # progress was in the database while it ran
    assert seen["fields"] == {
        "total": 45.1,
        "vendor": {"name": "ACME SUPPLIES LTD", "city": "Leeds"},
    }
    results = seen["results"]
    assert results[0][0:2] == ("get_document_text", "success")
    assert results[0][2].startswith("Document (1 pages):\n\nACME SUPPLIES LTD")
    assert results[1] == ("identify_document", "success", "Document type set to 'invoice'")
    assert results[2] == (
        "extract_fields",
        "error",
        "Validation failed:\n- confidence for 'total' must be 0.0-1.0, got 1.5",
    )
    assert results[3] == ("extract_fields", "success", "Saved 2 fields to database")
    assert results[4] == (
        "update_field",
        "success",
        "Updated 'vendor.city' = Leeds (confidence: 0.7)",
    )
    assert decision.verdict == "completed" and decision.method == "agent"
    assert decision.run is not None and decision.run.ended_by == EndReason.SUBMIT
    assert decision.document_type == "invoice"
    ext = deps.repo.get_extraction(ALICE, decision.extraction_id)
    assert ext.status == "completed" and ext.reason == ""
    assert events[0] == {"tool": "get_document_text", "input": {}}
    assert [e.get("tool") for e in events][-1] == "complete_extraction"


def test_complete_refuses_without_fields_then_the_model_recovers(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    model = ScriptedChatModel(
        steps=[
            call("complete_extraction"),
            lambda msgs: (
                call("extract_fields", fields={"total": 45.1}, confidences={"total": 0.9})
                if _tool_results(msgs)[-1]
                == ("complete_extraction", "error", "Cannot complete: no fields extracted")
                else say("the refusal text changed")
            ),
            call("complete_extraction"),
        ]
    )
    decision = run_extraction(ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model))
    assert decision.verdict == "completed" and decision.fields == {"total": 45.1}
    assert decision.run.tool_names == [
        "complete_extraction",
        "extract_fields",
        "complete_extraction",
    ]


def test_dotted_field_names_are_saved_as_nested_fields(deps: DocumentsDeps) -> None:
    # the bundled model writes nested fields as dotted names (receipt-17 of the eval set)
    doc = _doc(deps)
    model = ScriptedChatModel(
        steps=[
            call(
                "extract_fields",
                fields={"document.title": "Invoice", "vendor.name": "Acme", "total": 45.1},
                confidences={"document.title": 0.8, "vendor.name": 0.9, "total": 0.9},
            ),
            call("complete_extraction"),
        ]
    )
    decision = run_extraction(ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model))
    assert decision.verdict == "completed"
    assert decision.fields == {
        "document": {"title": "Invoice"},
        "vendor": {"name": "Acme"},
        "total": 45.1,
    }
    assert deps.repo.get_extraction(ALICE, 1).confidence_scores == {
        "document": {"title": 0.8},
        "vendor": {"name": 0.9},
        "total": 0.9,
    }


def test_model_that_stops_is_nudged_then_the_runtime_completes(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    prompts: list[str] = []

    def ignore_the_nudge(messages):
        prompts.append(str(messages[-1].content))
        return say("Done.")

    model = ScriptedChatModel(
        steps=[
            call("extract_fields", fields={"total": 45.1}, confidences={"total": 0.9}),
            say("I extracted the total."),
            ignore_the_nudge,
        ]
    )
    decision = run_extraction(ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model))
    model.assert_exhausted()
    assert prompts == [NUDGE]  # one nudge, worded for extraction
    ext = deps.repo.get_extraction(ALICE, decision.extraction_id)
    assert ext.status == "completed" and ext.method == "agent"
    assert (
        ext.reason
        == "completed by the runtime: the model stopped without complete_extraction (no_decision)"
    )
    assert decision.run.ended_by == EndReason.NO_DECISION


def test_agent_without_fields_falls_back_to_rules(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    model = ScriptedChatModel(steps=[say("I cannot."), say("Still no.")])
    decision = run_extraction(ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model))
    assert decision.verdict == "completed" and decision.method == "rules_fallback"
    assert decision.fields["total"] == 45.1 and decision.fields["invoice_number"] == "INV-1043"


def test_a_model_error_is_named_in_the_fallbacks_reason(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    model = ScriptedChatModel(steps=[call("get_document_text")])  # then the script runs out
    decision = run_extraction(ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model))
    assert decision.method == "rules_fallback"
    reason = deps.repo.get_extraction(ALICE, decision.extraction_id).reason
    assert reason.startswith("the agent ended without fields (error:model (")
    assert "script" in reason and reason.endswith("); the rules extractor filled them")


def test_nothing_to_fall_back_on_fails_with_a_reason(deps: DocumentsDeps) -> None:
    doc = _doc(deps, text="0000 1111 2222\n3333 4444")
    model = ScriptedChatModel(steps=[])  # the model errors at once
    decision = run_extraction(ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model))
    ext = deps.repo.get_extraction(ALICE, decision.extraction_id)
    assert ext.status == "failed"
    assert ext.reason.startswith("Cannot complete: no fields extracted (the run ended: error:model")
    assert decision.verdict == "failed"


def test_custom_mode_requires_exactly_the_users_fields(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    wanted = ["company", "date", "total", "iban"]
    model = ScriptedChatModel(
        steps=[
            call(
                "extract_fields",
                fields={"company": "ACME SUPPLIES LTD", "total": 45.1, "vat": 2.6},
                confidences={"company": 0.9, "total": 0.9, "vat": 0.9},
            ),
            call(
                "extract_fields",
                fields={
                    "company": "ACME SUPPLIES LTD",
                    "date": "2024-03-12",
                    "total": 45.1,
                    "iban": None,
                },
                confidences={"company": 0.9, "date": 0.8, "total": 0.9, "iban": 0.1},
            ),
            call("complete_extraction"),
        ]
    )
    decision = run_extraction(
        ExtractionInput(document_id=doc, user_id=ALICE, fields=wanted), deps, on(model)
    )
    first = decision.run.tool_calls[0]
    assert not first.ok and first.output == (
        "Validation failed:\n- missing requested fields: date, iban (use null with confidence <= 0.2 "
        "when the document lacks one)\n- fields not requested: vat; extract exactly: company, date, total, iban"
    )
    assert decision.fields == {
        "company": "ACME SUPPLIES LTD",
        "date": "2024-03-12",
        "total": 45.1,
        "iban": None,
    }
    assert deps.repo.get_extraction(ALICE, decision.extraction_id).mode == "custom"


def test_correction_edits_by_path_and_completes_again(deps: DocumentsDeps) -> None:
    doc = _doc(deps)
    ext = deps.repo.create_extraction(ALICE, doc)
    deps.repo.set_fields(ALICE, ext.id, {"total": 54.1, "notes": "x"}, {"total": 0.6, "notes": 0.3})
    deps.repo.complete(ALICE, ext.id)
    model = ScriptedChatModel(
        steps=[
            call("get_current_extraction"),
            call("update_field", path="total", value=45.10, confidence=1.0),
            call("remove_field", path="notes"),
            call("remove_field", path="notes"),
            call("complete_extraction"),
        ]
    )
    decision = run_correction(
        deps, ALICE, ext.id, "the total is 45.10 and drop the notes", on(model)
    )
    assert decision.verdict == "completed"
    assert decision.fields == {"total": 45.1} and decision.confidence_scores == {"total": 1.0}
    outputs = [(c.name, c.ok, c.output) for c in decision.run.tool_calls]
    assert json.loads(outputs[0][2])["status"] == "in_progress"
    assert outputs[1] == ("update_field", True, "Updated 'total' = 45.1 (confidence: 1.0)")
    assert outputs[2] == ("remove_field", True, "Removed field at 'notes'")
    assert outputs[3] == (
        "remove_field",
        False,
        "There is no field 'notes'; see the current extraction.",
    )


def test_tools_bound_to_bob_cannot_touch_alices_extraction(deps: DocumentsDeps) -> None:
    doc = _doc(deps, user=ALICE)
    ext = deps.repo.create_extraction(ALICE, doc)
    deps.repo.set_fields(ALICE, ext.id, {"total": 1}, {"total": 0.5})
    tools = {t.name: t for t in create_tools(ext.id, doc, BOB, deps.repo)}
    for name, args, words in [
        ("get_document_text", {}, "No OCR data found for this document"),
        ("get_current_extraction", {}, f"No extraction {ext.id}"),
        (
            "update_field",
            {"path": "total", "value": 2, "confidence": 0.5},
            f"No extraction {ext.id}",
        ),
        ("remove_field", {"path": "total"}, f"No extraction {ext.id}"),
        (
            "extract_fields",
            {"fields": {"a": 1}, "confidences": {"a": 1}},
            f"No extraction {ext.id}",
        ),
        ("complete_extraction", {}, f"No extraction {ext.id}"),
    ]:
        try:
            tools[name].invoke(args)
        except Exception as exc:  # ToolRetry / NotFoundError: the runtime turns both into errors
            assert words in str(exc), name
        else:
            raise AssertionError(f"{name} answered for another user")
    after = deps.repo.get_extraction(ALICE, ext.id)
    assert after.fields == {"total": 1} and after.status == "in_progress"


def test_a_killed_run_is_closed_keeping_what_it_wrote(deps: DocumentsDeps) -> None:
    from datetime import UTC, datetime, timedelta

    from casework.apps.documents.service import recover_stale_runs
    from casework.apps.documents.service.runs import STALE_AFTER

    doc = _doc(deps)
    ext = deps.repo.create_extraction(ALICE, doc)
    deps.repo.create_run(ALICE, "deadbeef", "extract", extraction_id=ext.id)
    deps.repo.append_event("deadbeef", 1, {"tool": "extract_fields", "input": {}})
    deps.repo.set_fields(ALICE, ext.id, {"total": 45.1}, {"total": 0.9})  # written before the kill
    other = deps.repo.create_extraction(ALICE, doc)
    deps.repo.create_run(
        ALICE, "cafebabe", "extract", extraction_id=other.id
    )  # killed before writing
    assert recover_stale_runs(deps) == []  # too recent: maybe still running elsewhere
    later = datetime.now(UTC) + STALE_AFTER + timedelta(seconds=1)
    orphan = deps.repo.create_extraction(ALICE, doc)  # a strategy called directly, then killed
    assert sorted(recover_stale_runs(deps, now=later)) == [
        "cafebabe",
        "deadbeef",
        f"extraction:{orphan.id}",
    ]
    assert deps.repo.get_extraction(ALICE, orphan.id).status == "failed"
    kept = deps.repo.get_extraction(ALICE, ext.id)
    assert kept.status == "completed" and kept.fields == {"total": 45.1}
    assert kept.reason.endswith("(interrupted (process ended))")
    lost = deps.repo.get_extraction(ALICE, other.id)
    assert lost.status == "failed" and lost.reason.startswith(
        "Cannot complete: no fields extracted"
    )
    events, done = deps.repo.events_after(ALICE, "deadbeef", 1)
    assert done and events == [
        (
            2,
            {
                "complete": True,
                "error": "the run's process ended before it finished",
                "extraction_id": ext.id,
                "status": "completed",
                "cost": 0.0,
            },
        )
    ]


def test_a_run_under_an_override_names_that_model(deps: DocumentsDeps, tmp_path) -> None:
    """Under a model spec (``--model``) the decision names that spec, not the settings' model
    of the role (issue #20). The spec replays a scripted recording of the same document."""
    from casework.apps.documents.strategies import STRATEGIES
    from casework.llm import RecordingChatModel, RoleModels
    from casework.runtime import RunConfig

    doc = _doc(deps)
    scripted = ScriptedChatModel(
        steps=[
            call("extract_fields", fields={"total": 45.1}, confidences={"total": 0.9}),
            call("complete_extraction"),
        ]
    )
    cassette = tmp_path / "agent.jsonl"
    recording = RoleModels.given(RecordingChatModel.wrap(scripted, cassette))
    given = ExtractionInput(document_id=doc, user_id=ALICE)
    recorded = STRATEGIES["agent"](given, deps, RunConfig(models=recording))
    spec = f"replay:{cassette}"
    replayed = STRATEGIES["agent"](given, deps, RunConfig.of(deps.settings, spec))
    assert (recorded.run.model, replayed.run.model) == ("scripted", spec)
    assert replayed.verdict == "completed" and replayed.fields == {"total": 45.1}
    assert replayed.extraction_id != recorded.extraction_id
