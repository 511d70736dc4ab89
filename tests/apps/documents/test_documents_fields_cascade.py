"""The field layer and the cascade with scripted models: the model is asked only for what the
rules are not sure of, sees numbered lines, and its values are graded by the text."""

from __future__ import annotations

from docs_fixtures import ALICE, INVOICE_TEXT, on, text_read

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.fields import (
    CONF_GROUNDED,
    CONF_UNGROUNDED,
    fields_schema,
    grounded,
    numbered_lines,
    wanted_fields,
)
from casework.apps.documents.models import ExtractionInput
from casework.apps.documents.strategies import STRATEGIES
from casework.llm import ScriptedChatModel, call

LETTER = """Hartley & Sons Solicitors
14 Castle Street, York
Ref: HS/2291
3 May 2024
Dear Ms Patel,
We write about the lease."""


def _doc(deps: DocumentsDeps, text: str) -> int:
    return deps.repo.add_document(ALICE, filename="d.pdf", data=b"%PDF-1", read=text_read(text)).id


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
    model = ScriptedChatModel(steps=[call("FieldValues", company="ACME SUPPLIES LTD")])
    doc = _doc(deps, INVOICE_TEXT)
    decision = STRATEGIES["cascade"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=["company", "total"]),
        deps,
        on(model),
    )
    layers = decision.run.layers
    assert [o.layer for o in layers][:2] == ["rules", "fields"]
    assert layers[0].confidence == 65.0 and not layers[0].kept  # company is only a guess
    assert decision.fields == {"company": "ACME SUPPLIES LTD", "total": 45.1}
    assert len(deps.repo.extractions_of(ALICE, doc)) == 1


def test_a_model_error_leaves_the_rules_values_and_says_why(deps: DocumentsDeps):
    from casework.errors import ModelError
    from casework.runtime.decision import EndReason

    def broken(messages, tools):
        raise ModelError("The local model's constrained reply was cut at max_tokens=10.")

    model = ScriptedChatModel(responder=broken)
    doc = _doc(deps, INVOICE_TEXT)
    decision = STRATEGIES["fields"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=["company", "total"]),
        deps,
        on(model),
    )
    assert decision.verdict == "completed" and decision.fields["total"] == 45.1
    assert decision.fields["company"] == "ACME SUPPLIES LTD"  # the rules' guess stands
    assert decision.run.ended_by == EndReason.ERROR_MODEL and "max_tokens" in decision.run.detail
