"""The field layer and the cascade with scripted models: the model is asked only for what the
rules are not sure of, sees numbered lines, and its values are graded by the text."""

from __future__ import annotations

from docs_fixtures import ALICE, INVOICE_TEXT, on, text_read

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.extractor import coverage_confidence, extract, wanted_fields
from casework.apps.documents.fields import (
    CONF_GROUNDED,
    CONF_UNGROUNDED,
    document_type,
    fields_schema,
    grounded,
    numbered_lines,
)
from casework.apps.documents.models import ExtractionInput
from casework.apps.documents.strategies import STRATEGIES
from casework.llm import ScriptedChatModel, call
from casework.llm.choice import ScriptedChooser

LETTER = """Hartley & Sons Solicitors
14 Castle Street, York
Ref: HS/2291
3 May 2024
Dear Ms Patel,
We write about the lease."""


def _doc(deps: DocumentsDeps, text: str) -> int:
    return deps.repo.add_document(ALICE, filename="d.pdf", data=b"%PDF-1", read=text_read(text)).id


# a receipt with no cue word ("receipt", "cashier", ...): the rules cannot type it
UNTYPED = """Northwind Traders
410 Market Street, San Francisco
Date 05/03/2024
Safety gloves 21.34
Tax 6.34
Total $85.62"""


def test_the_rules_confidence_is_their_coverage_of_the_fields_wanted():
    fields, _ = extract(INVOICE_TEXT)
    # an invoice's 8 fields all found (company and currency by shape): complete
    assert coverage_confidence(INVOICE_TEXT, fields, None) == 0.9
    # custom mode: 2 of 3 requested found
    custom, _ = extract(INVOICE_TEXT, ["total", "due_date", "company"])
    assert coverage_confidence(INVOICE_TEXT, custom, ["total", "due_date", "company"]) == 0.6
    # no cue word types the document: which fields it should have is a guess, capped
    untyped, _ = extract(UNTYPED)
    assert coverage_confidence(UNTYPED, untyped, None) == 0.5


def test_the_model_types_a_document_only_the_cue_words_cannot():
    sure = ScriptedChooser({"invoice": -3.0, "receipt": -0.1, "form": -4.0, "letter": -4.0})
    assert document_type(sure, UNTYPED)[0] == "receipt"
    assert "01: Northwind Traders" in str(sure.calls[0][0][-1].content)
    unsure = ScriptedChooser({"invoice": -1.0, "receipt": -1.1, "form": -9.0, "letter": -9.0})
    kind, usage = document_type(unsure, UNTYPED)
    assert kind == "document" and usage is not None and usage.model_calls == 1
    never = ScriptedChooser()  # fails if asked: the cue word "INVOICE" types it
    assert document_type(never, INVOICE_TEXT) == ("invoice", None)


def test_auto_mode_reads_the_fields_of_the_type_the_model_chose(deps: DocumentsDeps):
    prompts: list[str] = []

    def reply(messages, tools):
        prompts.append(str(messages[-1].content))
        if tools == ["choose"]:
            return call("choose", option="receipt")
        return call("FieldValues", company="Northwind Traders", currency="USD")

    model = ScriptedChatModel(responder=reply)
    doc = _doc(deps, UNTYPED)
    decision = STRATEGIES["fields"](
        ExtractionInput(document_id=doc, user_id=ALICE), deps, on(model)
    )
    assert len(prompts) == 2 and "Type:" in prompts[0]
    # a receipt's fields: company and currency were not found after a label, so asked for
    assert "- currency:" in prompts[1] and "- company:" in prompts[1]
    assert "- invoice_number:" not in prompts[1]
    assert decision.document_type == "receipt" and decision.fields["currency"] == "USD"
    assert decision.run.usage.model_calls == 2


def test_plain_helpers():
    assert numbered_lines("a\n\n b \nc").splitlines() == ["01: a", "02: b", "03: c"]
    assert wanted_fields(INVOICE_TEXT, None)[:3] == ["company", "invoice_number", "date"]
    assert wanted_fields(INVOICE_TEXT, ["vendor", "vendor"]) == ["vendor"]
    schema = fields_schema(["company", "total"])
    assert schema["required"] == ["company", "total"] and not schema["additionalProperties"]
    assert grounded("£45.10", INVOICE_TEXT) and grounded("acme supplies ltd", INVOICE_TEXT)
    assert not grounded("Globex", INVOICE_TEXT) and not grounded("", INVOICE_TEXT)


def test_the_model_fills_only_the_fields_the_rules_are_unsure_of(deps: DocumentsDeps):
    asked: list[str] = []

    def read(messages, tools):
        asked.append(str(messages[-1].content))
        return call("FieldValues", recipient="Ms Patel", company="Hartley & Sons Solicitors")

    model = ScriptedChatModel(responder=read)
    doc = _doc(deps, LETTER)
    decision = STRATEGIES["fields"](
        ExtractionInput(
            document_id=doc, user_id=ALICE, fields=["company", "reference", "recipient"]
        ),
        deps,
        on(model),
    )
    assert len(asked) == 1 and decision.verdict == "completed"
    prompt = asked[0]
    assert "03: Ref: HS/2291" in prompt  # the text in reading order, numbered
    assert "- recipient:" in prompt and "- company:" in prompt
    assert "- reference:" not in prompt  # found after its own label: the rules keep it
    assert decision.fields["reference"] == "HS/2291"
    assert decision.fields["recipient"] == "Ms Patel"
    assert decision.confidence_scores["recipient"] == CONF_GROUNDED
    assert decision.method == "fields" and decision.run.model == "scripted"


def test_an_ungrounded_value_is_kept_with_a_low_confidence(deps: DocumentsDeps):
    model = ScriptedChatModel(steps=[call("FieldValues", recipient="Mr Invented")])
    doc = _doc(deps, LETTER)
    decision = STRATEGIES["fields"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=["recipient"]), deps, on(model)
    )
    assert decision.fields["recipient"] == "Mr Invented"
    assert decision.confidence_scores["recipient"] == CONF_UNGROUNDED


def test_the_cascade_writes_one_row_and_says_which_layer_decided(deps: DocumentsDeps):
    model = ScriptedChatModel(steps=[call("FieldValues", due_date="12/04/2024")])
    doc = _doc(deps, INVOICE_TEXT)
    wanted = ["company", "total", "due_date"]
    decision = STRATEGIES["cascade"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=wanted), deps, on(model)
    )
    layers = decision.run.layers
    # the memory first (no verified example yet: it reads nothing)
    assert [o.layer for o in layers][:3] == ["memory", "rules", "fields"]
    assert layers[1].confidence == 60.0 and not layers[1].kept  # no due date found
    assert decision.fields == {
        "company": "ACME SUPPLIES LTD",
        "total": 45.1,
        "due_date": "12/04/2024",
    }
    assert len(deps.repo.extractions_of(ALICE, doc)) == 1


def test_the_rules_decide_when_they_found_every_field(deps: DocumentsDeps):
    never = ScriptedChatModel(steps=[])  # any model call fails the test
    doc = _doc(deps, INVOICE_TEXT)
    decision = STRATEGIES["cascade"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=["company", "total"]),
        deps,
        on(never),
    )
    assert [(o.layer, o.confidence, o.kept) for o in decision.run.layers] == [
        ("memory", 0.0, False),
        ("rules", 90.0, True),
    ]
    assert decision.fields == {"company": "ACME SUPPLIES LTD", "total": 45.1}


def test_a_model_error_leaves_the_rules_values_and_says_why(deps: DocumentsDeps):
    from casework.errors import ModelError
    from casework.runtime.decision import EndReason

    def broken(messages, tools):
        raise ModelError("The local model's constrained reply was cut at max_tokens=10.")

    model = ScriptedChatModel(responder=broken)
    doc = _doc(deps, INVOICE_TEXT)
    decision = STRATEGIES["fields"](
        ExtractionInput(
            document_id=doc, user_id=ALICE, fields=["company", "address", "po_number", "total"]
        ),
        deps,
        on(model),
    )
    assert decision.verdict == "completed" and decision.fields["total"] == 45.1
    assert decision.fields["company"] == "ACME SUPPLIES LTD"  # named by its legal form
    assert decision.fields["address"] == "12 Harbour Road, Leeds LS1 4AB"  # the guess stands
    assert decision.run.ended_by == EndReason.ERROR_MODEL and "max_tokens" in decision.run.detail
    assert decision.run.usage.model_calls == 1  # the failed call was asked all the same


def test_the_field_layer_is_a_harness_run_with_its_trace(deps: DocumentsDeps):
    from casework.runtime.decision import EndReason
    from casework.runtime.traces import read_trace

    model = ScriptedChatModel(steps=[call("FieldValues", recipient="Ms Patel")])
    config = on(model, traces=deps.settings.traces_dir)
    asked = ExtractionInput(document_id=_doc(deps, LETTER), user_id=ALICE, fields=["recipient"])
    decision = STRATEGIES["fields"](asked, deps, config)
    run = decision.run
    assert (run.ended_by, run.strategy, run.model) == (EndReason.SUBMIT, "fields", "scripted")
    assert run.usage.model_calls == 1 and run.usage.input_tokens > 0
    records = read_trace(run.trace_path)
    assert [r["type"] for r in records] == ["run_start", "run_end"]
    assert records[0]["agent"] == "documents_fields"
    assert records[0]["payload"]["asked"] == ["recipient"]
    assert records[-1]["result"]["fields"]["recipient"] == "Ms Patel"

    # every field found after its own label: no model asked, and the run says so
    sure = ExtractionInput(document_id=_doc(deps, LETTER), user_id=ALICE, fields=["reference"])
    ruled = STRATEGIES["fields"](sure, deps, config).run
    assert (ruled.model, ruled.usage.model_calls) == (None, 0)


def test_a_field_the_model_reads_badly_is_not_asked_for(deps: DocumentsDeps):
    from casework.apps.documents.fields import Readings, readings_path, stored_readings

    shipped = stored_readings(deps.settings.home)
    assert shipped.by_field["address"] == (0, 3) and not shipped.trusted("address")
    assert shipped.trusted("recipient") and shipped.trusted("policy_number")  # never read
    asked: list[str] = []

    def read(messages, tools):
        asked.append(str(messages[-1].content))
        return call("FieldValues", recipient="Ms Patel", address="York")

    wanted = ["address", "recipient"]
    doc = _doc(deps, LETTER)
    decision = STRATEGIES["fields"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=wanted),
        deps,
        on(ScriptedChatModel(responder=read)),
    )
    assert "- recipient:" in asked[0] and "- address:" not in asked[0]
    assert decision.fields["recipient"] == "Ms Patel" and decision.fields.get("address") != "York"
    # a user's own record, where the model read addresses right, puts it back
    path = readings_path(deps.settings.home)
    path.parent.mkdir(parents=True)
    path.write_text(__import__("json").dumps(Readings({"address": (3, 4)}).to_dict()))
    STRATEGIES["fields"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=wanted),
        deps,
        on(ScriptedChatModel(responder=read)),
    )
    assert "- address:" in asked[1]


def test_readings_are_counted_and_judged_once_there_are_enough():
    from casework.apps.documents.fields import Readings

    record = Readings.counted(
        [
            ("address", False),
            ("address", True),
            ("date", False),
            ("total", True),
            ("address", False),
        ]
    )
    assert record.by_field == {"address": (1, 3), "date": (0, 1), "total": (1, 1)}
    assert not record.trusted("address")  # 1 right of 3
    assert record.trusted("date")  # one reading is too few to judge
    assert Readings.counted([("a", True), ("a", False)] * 2).trusted("a")  # half right: asked
    assert Readings.from_dict(record.to_dict()) == record


def test_with_a_remote_model_the_agent_on_it_is_the_last_layer(deps: DocumentsDeps):
    # no rule finds either field; the bundled-model layer's guess is not in the text (unsure):
    # the ReAct agent on the configured model extracts them and decides
    model = ScriptedChatModel(
        steps=[
            call("FieldValues", po_number="ZZ-999", due_date=None),
            call("get_document_text"),
            call(
                "extract_fields",
                fields={"po_number": "PO-77", "due_date": "12/04/2024"},
                confidences={"po_number": 0.9, "due_date": 0.9},
            ),
            call("complete_extraction"),
        ]
    )
    doc = _doc(deps, INVOICE_TEXT)
    decision = STRATEGIES["cascade"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=["po_number", "due_date"]),
        deps,
        on(model),
    )
    model.assert_exhausted()
    layers = [(o.layer, o.verdict, o.confidence, o.kept) for o in decision.run.layers]
    assert layers == [
        ("memory", "failed", 0.0, False),  # no verified example yet
        ("rules", "failed", 0.0, False),
        ("fields", "completed", 20.0, False),  # the guess at 0.3, the rules' nothing at 0.1
        ("agent", "completed", 90.0, True),
    ]
    assert decision.run.decided_by == "agent" and decision.run.layers[3].remote
    assert decision.fields == {"po_number": "PO-77", "due_date": "12/04/2024"}
    assert len(deps.repo.extractions_of(ALICE, doc)) == 1
