"""Learning from review in documents (issue 32), with scripted models and a bag-of-words
embedder: a verified receipt's fields are read where it found them on the next receipt of the
same vendor (no model call), the field layer is shown the nearest verified documents, and
removing the examples restores the answer the cascade gave without them."""

from __future__ import annotations

import json

import pytest
from docs_fixtures import ALICE, FakeOcr, on, text_read, words

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.examples import EXAMPLES, document_key
from casework.apps.documents.memory import (
    anchors_of,
    per_document,
    read_at,
    recall_fields,
    value_shape,
)
from casework.apps.documents.models import ExtractionInput
from casework.apps.documents.repository import DocumentsRepository
from casework.apps.documents.strategies import STRATEGIES, documents_memory
from casework.llm import ScriptedChatModel, call
from casework.runtime import memory as memory_module
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import examples_used
from casework.stores import open_stores


@pytest.fixture(autouse=True)
def bag_of_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module, "_default_embedder", words)


def receipt(date: str, total: str, item: str = "ROTI BENGGALI") -> str:
    """A SROIE-like receipt of one vendor: the total stands on the line after its label."""
    return f"""GARDENIA BAKERIES (KL) SDN BHD
LOT 3, JALAN PELABUR 23/1, 40300 SHAH ALAM, SELANGOR
TEL: 03-55423228 FAX: 03-55423213
GST ID: 000381399040
TAX INVOICE
INVOICE NO: 7803F713
DATE: {date} 13:45
CASH SALES
{item} 2 x 1.50
CLASSIC BREAD 1 x 2.10
SUBTOTAL
{total}
TOTAL PAYABLE
{total}
GST SUMMARY AMOUNT(RM) TAX(RM)
SR @ 6% ON TAXABLE GOODS
GOODS SOLD ARE NOT RETURNABLE OR EXCHANGEABLE
THANK YOU PLEASE COME AGAIN"""


GOLD = {"company": "GARDENIA BAKERIES (KL) SDN BHD", "date": "12/01/2018", "total": "4.80"}


def _deps(settings) -> DocumentsDeps:
    repo = DocumentsRepository(open_stores(settings).engine)
    return DocumentsDeps(repo=repo, settings=settings, ocr=FakeOcr())


def _doc(deps: DocumentsDeps, text: str) -> int:
    return deps.repo.add_document(ALICE, filename="r.jpg", data=b"%PDF-1", read=text_read(text)).id


def _verify(memory: Memory, text: str, gold: dict[str, str]) -> int:
    key = EXAMPLES.key_text({"text": text})
    answer = EXAMPLES.answer_of({"gold": gold})
    return memory.add(key, {"text": text}, answer, verified_by="ana", source="review").id


WANTED = ["company", "date", "total"]


def test_anchors_and_shapes_read_a_new_receipt_where_the_verified_one_found_its_fields():
    verified = receipt("12/01/2018", "4.80")
    assert value_shape("12/01/2018").fullmatch("3/11/2019")
    assert not value_shape("4.80").search("x14.807")  # not cut out of a longer number
    total = anchors_of(verified, "4.80")
    # on the line after SUBTOTAL and after TOTAL PAYABLE: two anchors, in reading order
    assert [(a.label, a.same_line) for a in total] == [
        ("subtotal", False),
        ("totalpayable", False),
    ]
    (date,) = anchors_of(verified, "12/01/2018")
    assert (date.label, date.same_line) == ("date", True)
    new = receipt("3/11/2019", "17.25")
    assert read_at(new, date, value_shape("12/01/2018")) == "3/11/2019"
    assert read_at(new, total[1], value_shape("4.80")) == "17.25"
    assert read_at("NO LABELS HERE\n17.25", total[1], value_shape("4.80")) is None
    assert per_document("total") and per_document("invoice_number")
    assert not per_document("company") and not per_document("address")


def test_the_hook_takes_text_or_gold_and_refuses_what_is_no_example():
    assert document_key("  A \n\n B ") == "A\nB"
    assert EXAMPLES.answer_of({"gold": {"total": 4.8, "date": None}}) == {
        "fields": {"total": "4.8"}
    }
    with pytest.raises(ValueError, match="'text'"):
        EXAMPLES.key_text({"document": 3})
    with pytest.raises(ValueError, match="no field"):
        EXAMPLES.answer_of({"gold": {"total": None}})
    with pytest.raises(ValueError, match="no file"):
        EXAMPLES.key_text({"file": "/nowhere/scan.jpg"})


def test_a_second_receipt_of_a_known_vendor_is_read_from_memory_with_no_model_call(settings):
    deps = _deps(settings)
    memory = documents_memory(deps, _no_model_config())
    ids = [
        _verify(memory, receipt("12/01/2018", "4.80"), GOLD),
        _verify(
            memory,
            receipt("15/01/2018", "6.30", "KAYA BUN"),
            {**GOLD, "date": "15/01/2018", "total": "6.30"},
        ),
    ]
    new = receipt("3/11/2019", "17.25")
    found = recall_fields(memory, new, document_key(new), WANTED)
    assert found.values == {
        "company": "GARDENIA BAKERIES (KL) SDN BHD",
        "date": "3/11/2019",
        "total": "17.25",
    }
    assert {e.id for e, _ in found.used} == set(ids)
    doc = _doc(deps, new)
    # no model at all: a call would fail the test
    decision = STRATEGIES["cascade"](
        ExtractionInput(document_id=doc, user_id=ALICE, fields=WANTED),
        deps,
        _no_model_config(),
    )
    assert decision.run is not None and decision.run.decided_by == "memory"
    assert decision.fields == {
        "company": "GARDENIA BAKERIES (KL) SDN BHD",
        "date": "3/11/2019",
        "total": "17.25",
    }
    assert decision.method == "memory" and decision.confidence >= 90
    assert sorted(examples_used(decision)) == sorted(ids)
    assert decision.run.usage.model_calls == 0


def _no_model_config():
    """A model every call to which fails the test (the cascade may look it up, not call it)."""

    def refuse(messages, tools):
        raise AssertionError("this run must not call a model")

    return on(ScriptedChatModel(responder=refuse))


def test_removing_the_examples_restores_the_answer_without_them(settings):
    deps = _deps(settings)
    memory = documents_memory(deps, _no_model_config())
    new = receipt("3/11/2019", "17.25")
    ask = ExtractionInput(document_id=_doc(deps, new), user_id=ALICE, fields=WANTED)
    before = STRATEGIES["cascade"](ask, deps, _no_model_config())
    assert before.run is not None and before.run.decided_by != "memory"
    ids = [
        _verify(memory, receipt("12/01/2018", "4.80"), GOLD),
        _verify(
            memory,
            receipt("15/01/2018", "6.30", "KAYA BUN"),
            {**GOLD, "date": "15/01/2018", "total": "6.30"},
        ),
    ]
    learned = STRATEGIES["cascade"](ask, deps, _no_model_config())
    assert learned.run is not None and learned.run.decided_by == "memory"
    for example_id in ids:
        memory.delete(example_id)
    after = STRATEGIES["cascade"](ask, deps, _no_model_config())
    assert after.run is not None and after.run.decided_by == before.run.decided_by
    assert after.fields == before.fields and examples_used(after) == []


def test_the_field_layer_is_shown_the_nearest_verified_documents(settings):
    deps = _deps(settings)
    memory = documents_memory(deps, _no_model_config())
    # a branch the new receipt does not print: the memory cannot read it, the model is asked
    shown_id = _verify(memory, receipt("12/01/2018", "4.80"), {**GOLD, "branch": "OUTLET 7"})
    seen: list[list[str]] = []

    def read(messages, tools):
        seen.append([str(m.content) for m in messages])
        return call("FieldValues", branch="SHAH ALAM")

    model = ScriptedChatModel(responder=read)
    new = receipt("3/11/2019", "17.25")
    decision = STRATEGIES["fields"](
        ExtractionInput(document_id=_doc(deps, new), user_id=ALICE, fields=["branch"]),
        deps,
        on(model),
    )
    (messages,) = seen
    # system, the verified document's task and its confirmed answer, then this document
    assert len(messages) == 4
    assert "12/01/2018" in messages[1] and "3/11/2019" not in messages[1]
    assert messages[2] == '{"branch": "OUTLET 7"}'
    assert "3/11/2019" in messages[3]
    assert examples_used(decision) == [shown_id]
    assert decision.fields["branch"] == "SHAH ALAM"


OTHER_VENDOR = """AEON CO. (M) BHD (126926-H)
3RD FLR, AEON TAMAN MALURI SC, JLN JEJAKA, 55100 KUALA LUMPUR
GST ID: 002017394688
SHOPPING HOURS 10:00 AM - 10:00 PM
22/04/2018 10:10
1X BLACK PEPPER SAUCE 3.99
ROUNDING ADJ 0.01
TOTAL 4.00
CASH 10.00 CHANGE 6.00"""


def test_another_vendors_receipt_is_not_shown_to_the_model(settings):
    deps = _deps(settings)
    memory = documents_memory(deps, _no_model_config())
    _verify(memory, OTHER_VENDOR, {"company": "AEON CO. (M) BHD", "branch": "MALURI"})
    seen: list[int] = []

    def read(messages, tools):
        seen.append(len(messages))
        return call("FieldValues", branch="SHAH ALAM")

    new = receipt("3/11/2019", "17.25")
    (found,) = memory.nearest(document_key(new), 1)
    assert found[1] < 0.75  # another vendor: below the memory's "same vendor"
    decision = STRATEGIES["fields"](
        ExtractionInput(document_id=_doc(deps, new), user_id=ALICE, fields=["branch"]),
        deps,
        on(ScriptedChatModel(responder=read)),
    )
    assert seen == [2]  # the system prompt and this document: no demonstration
    assert examples_used(decision) == []
    assert decision.fields["branch"] == "SHAH ALAM"


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_reads_with_a_verified_receipt_as_its_example(settings):
    """The bundled model, shown a verified receipt of the same vendor, is asked only what the
    memory cannot read (a branch the receipt does not print); the decision cites the example."""
    pytest.importorskip("xllamacpp")
    from casework.llm import resolve_model

    deps = _deps(settings)
    memory = documents_memory(deps, _no_model_config())
    shown_id = _verify(memory, receipt("12/01/2018", "4.80"), {**GOLD, "branch": "OUTLET 7"})
    model = resolve_model("local:qwen2.5-coder-1.5b", settings=deps.settings)
    decision = STRATEGIES["fields"](
        ExtractionInput(
            document_id=_doc(deps, receipt("3/11/2019", "17.25")), user_id=ALICE, fields=["branch"]
        ),
        deps,
        on(model),
    )
    assert decision.run is not None and decision.run.usage.model_calls == 1
    assert examples_used(decision) == [shown_id]
    assert set(decision.fields) <= {"branch"}


def _two_verified(memory: Memory, gold: dict[str, str]) -> list[int]:
    return [
        _verify(memory, receipt("12/01/2018", "4.80"), gold),
        _verify(
            memory,
            receipt("15/01/2018", "6.30", "KAYA BUN"),
            {**gold, "date": "15/01/2018", "total": "6.30"},
        ),
    ]


def test_the_field_layer_asks_the_model_only_what_the_memory_is_not_sure_of(settings):
    deps = _deps(settings)
    memory = documents_memory(deps, _no_model_config())
    ids = _two_verified(memory, GOLD)
    asked: list[str] = []

    def read(messages, tools):
        asked.append(str(messages[-1].content))
        return call("FieldValues", branch="SHAH ALAM")

    new = receipt("3/11/2019", "17.25")
    # no verified receipt names a branch: the memory layer cannot decide the whole document
    decision = STRATEGIES["cascade"](
        ExtractionInput(document_id=_doc(deps, new), user_id=ALICE, fields=[*WANTED, "branch"]),
        deps,
        on(ScriptedChatModel(responder=read)),
    )
    assert decision.run is not None and decision.run.decided_by == "fields"
    (task,) = asked
    assert "- branch:" in task and "- total:" not in task and "- company:" not in task
    assert decision.fields == {
        "company": "GARDENIA BAKERIES (KL) SDN BHD",
        "date": "3/11/2019",
        "total": "17.25",
        "branch": "SHAH ALAM",
    }
    # the memory's own confidence on the fields it read, not the rules' 0.8
    assert decision.confidence_scores["total"] == 0.927
    assert set(ids) <= set(examples_used(decision))
    assert decision.run.usage.model_calls == 1


def test_a_known_vendor_in_auto_mode_is_read_for_its_verified_fields_without_the_model(
    settings,
):
    deps = _deps(settings)
    ask = ExtractionInput(document_id=_doc(deps, receipt("3/11/2019", "17.25")), user_id=ALICE)
    # the address printed on this branch's receipt is not the verified one: the memory cannot
    # read it and the bundled model is not trusted with addresses (the shipped readings)
    gold = {**GOLD, "address": "NO 5, JALAN KLANG LAMA, 58000 KUALA LUMPUR"}
    counted: list[int] = []

    def count(messages, tools):
        counted.append(1)
        return call("FieldValues", tax=None, currency=None, company=None, date=None, total=None)

    unlearned = STRATEGIES["cascade"](ask, deps, on(ScriptedChatModel(responder=count)))
    assert unlearned.run is not None and unlearned.run.usage.model_calls == 1  # tax, currency
    _two_verified(documents_memory(deps, _no_model_config()), gold)
    decision = STRATEGIES["cascade"](ask, deps, _no_model_config())
    assert decision.run is not None and decision.run.decided_by == "fields"
    assert [o.layer for o in decision.run.layers] == ["memory", "rules", "fields"]
    assert decision.run.usage.model_calls == 0
    assert decision.fields["total"] == "17.25" and decision.fields["date"] == "3/11/2019"


def test_a_corrected_failed_extraction_becomes_an_example_the_next_receipt_is_read_from(
    settings,
):
    from casework.apps.documents.review import DocumentsReview
    from casework.runtime.context import Caller, Role

    deps = _deps(settings)
    first = receipt("12/01/2018", "4.80")
    doc = _doc(deps, first)
    ext = deps.repo.create_extraction(ALICE, doc, requested=WANTED)
    deps.repo.fail(ALICE, ext.id, "No layer could read it.")
    review = DocumentsReview(settings, deps=deps, strategy="rules", background=False)
    ana = Caller(1, "ana", Role.REVIEWER)
    out = review.decide(str(ext.id), "edit", note="", edit=json.dumps(GOLD), caller=ana)
    new_id = ext.id + 1
    assert (out.applied, out.outcome) == (True, f"corrected: 3 field(s) in extraction {new_id}")
    corrected = deps.repo.get_extraction(ALICE, new_id)
    assert (corrected.status, corrected.method, corrected.fields) == ("completed", "review", GOLD)
    assert out.example is not None and out.example.answer == {"fields": GOLD}
    # what the inbox does with it (casework.examples.learn_from_review): one example
    memory = documents_memory(deps, _no_model_config())
    memory.add(
        EXAMPLES.key_text(out.example.inputs),
        out.example.inputs,
        out.example.answer,
        verified_by="ana",
        source="review",
    )
    new = receipt("3/11/2019", "17.25")
    found = recall_fields(memory, new, document_key(new), WANTED)
    assert found.values["date"] == "3/11/2019" and found.values["total"] == "17.25"
    # a second decision changes nothing and verifies nothing
    again = review.decide(str(ext.id), "edit", note="", edit=json.dumps(GOLD), caller=ana)
    assert not again.applied and again.example is None and again.decided_by == "ana"


def test_the_threshold_sweep_counts_the_memorys_own_readings():
    from casework.apps.documents.data.memory_sweep import memory_outcomes

    def case(confidence, fields, verdict="completed"):
        memory = {"layer": "memory", "confidence": confidence}
        memory["output"] = {"verdict": verdict, "fields": fields}
        return {"inputs": {"file": "r.jpg"}, "expected": {"gold": GOLD}, "layers": [memory]}

    cases = [
        case(92.5, dict(GOLD)),
        case(81.0, {**GOLD, "total": "4.90"}),  # one field wrong: the document is wrong
        case(0.0, {}, verdict="failed"),
        {"inputs": {"file": "r.jpg"}, "expected": {"gold": GOLD}, "layers": []},  # no memory
    ]
    assert memory_outcomes(cases) == [(92.5, True), (81.0, False), (0.0, False)]


def test_the_field_sweep_and_the_case_list_read_a_learning_run():
    from casework.apps.documents.data.memory_sweep import case_rows, field_outcomes

    memory = {
        "layer": "memory",
        "model_calls": 0,
        "confidence": 62.0,
        "output": {
            "verdict": "completed",
            "reasoning": "Read from 2 verified example(s) (1, 2); the nearest at similarity 0.93.",
            "fields": {"company": GOLD["company"], "date": "12/01/2018", "total": "4.90"},
            "confidence_scores": {"company": 0.62, "date": 0.93, "total": 0.88},
        },
    }
    fields = {"layer": "fields", "model_calls": 1, "kept": True}
    case = {
        "case_id": "sroie-1",
        "inputs": {"file": "r.jpg"},
        "expected": {"gold": GOLD},
        "layers": [memory, {"layer": "rules", "model_calls": 0}, fields],
        "decided_by": "fields",
        "domain": {"document_f1": 2 / 3},
    }
    assert field_outcomes([case]) == [(62.0, True), (93.0, True), (88.0, False)]
    learned = [{"case_id": "sroie-1", "reviewed": False, "example_id": 4}]
    assert case_rows([case], learned)[2] == (
        "| 1 | sroie-1 | fields | yes | 62 / 0.93 | 0.67 | spot check |"
    )
