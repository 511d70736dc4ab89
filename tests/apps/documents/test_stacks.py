"""The stacks agent with scripted models: scoped tools, one row per document, resumable, CSV."""

from __future__ import annotations

import json
import pickle

import pytest
from docs_fixtures import ALICE, BOB, INVOICE_TEXT, on, text_read

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.export import table_csv
from casework.apps.documents.service import build_deps, run_stack_build
from casework.apps.documents.service.stack_builds import SINGLE_RUN_MAX
from casework.apps.documents.stacks import STACK_TOOL_NAMES, create_stack_tools
from casework.errors import ToolRetry
from casework.llm import ScriptedChatModel, call, say

COLUMNS = [{"name": "company", "type": "text"}, {"name": "total", "type": "number"}]


def _stack(deps: DocumentsDeps) -> tuple[int, list[int], int]:
    docs = [
        deps.repo.add_document(
            ALICE,
            filename=f"d{i}.pdf",
            data=b"%PDF",
            read=text_read(INVOICE_TEXT.replace("45.10", f"{i}0.00")),
        ).id
        for i in (1, 2)
    ]
    other = deps.repo.add_document(
        ALICE, filename="outside.pdf", data=b"%PDF", read=text_read("secret")
    ).id
    stack = deps.repo.create_stack(ALICE, "March invoices")
    deps.repo.add_to_stack(ALICE, stack.id, docs)
    return stack.id, docs, other


def test_tools_refuse_documents_outside_the_stack(deps: DocumentsDeps) -> None:
    stack, docs, other = _stack(deps)
    bobs = deps.repo.add_document(BOB, filename="bob.pdf", data=b"%PDF", read=text_read("bob's")).id
    tools = {t.name: t for t in create_stack_tools(stack, ALICE, deps.repo)}
    assert tuple(tools) == STACK_TOOL_NAMES
    assert not any({"stack_id", "user_id"} & set(t.args) for t in tools.values())
    for doc_id in (other, bobs, 999):
        try:
            tools["get_document_text"].invoke({"doc_id": doc_id})
        except Exception as exc:
            assert (
                str(exc)
                == f"Document {doc_id} is not in this stack; call list_documents for the ids you can use."
            )
        else:
            raise AssertionError("read outside the stack")
    assert json.loads(tools["list_documents"].invoke({})) == [
        {"doc_id": docs[0], "filename": "d1.pdf", "has_row": False},
        {"doc_id": docs[1], "filename": "d2.pdf", "has_row": False},
    ]
    # Bob's tools on Alice's stack see nothing at all
    bob_tools = {t.name: t for t in create_stack_tools(stack, BOB, deps.repo)}
    try:
        bob_tools["list_documents"].invoke({})
    except Exception as exc:
        assert f"No stack {stack}" in str(exc)
    else:
        raise AssertionError("Bob listed Alice's stack")


def test_build_one_row_per_document_resume_and_export(deps: DocumentsDeps) -> None:
    stack, docs, other = _stack(deps)
    first = ScriptedChatModel(
        steps=[
            call("get_table_state"),
            call("define_columns", columns=COLUMNS),
            call("get_document_text", doc_id=docs[0]),
            call(
                "extract_row",
                doc_id=docs[0],
                values={"company": "ACME", "total": 10.0},
                confidences={"company": 0.9, "total": 0.9},
            ),
            call(
                "extract_row", doc_id=other, values={"company": "X"}, confidences={"company": 0.9}
            ),
            call("complete_table"),
            say("I stop here."),
            say("Really."),
        ]
    )
    out = run_stack_build(deps, ALICE, stack, on(first), open_deps=build_deps)
    assert out["status"] == "in_progress" and out["rows"] == 1 and out["ended_by"] == "no_decision"
    table = deps.repo.table_state(ALICE, stack)
    assert [r["document_id"] for r in table.rows] == [docs[0]]
    # a second build resumes: columns kept, only the missing document is done
    second = ScriptedChatModel(
        steps=[
            lambda msgs: call("get_table_state"),
            call(
                "extract_row",
                doc_id=docs[1],
                values={"company": "ACME", "total": 20.0},
                confidences={"company": 0.9, "total": 0.8},
            ),
            call(
                "extract_row",
                doc_id=docs[1],
                values={"company": "ACME SUPPLIES", "total": 20.0},
                confidences={"company": 0.9, "total": 0.8},
            ),
            call("update_cell", doc_id=docs[0], column="total", value=10.5, confidence=1.0),
            call("complete_table"),
        ]
    )
    out = run_stack_build(deps, ALICE, stack, on(second), open_deps=build_deps)
    second.assert_exhausted()
    assert out == {
        "stack_id": stack,
        "status": "completed",
        "rows": 2,
        "documents": 2,
        "ended_by": "submit",
        "cost": 0.0,
    }
    table = deps.repo.table_state(ALICE, stack)
    assert [(r["document_id"], r["cells"]) for r in table.rows] == [
        (docs[0], {"company": "ACME", "total": 10.5}),
        (docs[1], {"company": "ACME SUPPLIES", "total": 20.0}),
    ]
    third = deps.repo.add_document(ALICE, filename="d3.pdf", data=b"%PDF", read=text_read("x")).id
    assert deps.repo.add_to_stack(ALICE, stack, [third]).table.status == "in_progress"
    assert table_csv(table).splitlines() == [
        "document_id,filename,company,total",
        f"{docs[0]},d1.pdf,ACME,10.5",
        f"{docs[1]},d2.pdf,ACME SUPPLIES,20.0",
    ]


def test_complete_table_refuses_missing_rows(deps: DocumentsDeps) -> None:
    stack, docs, _ = _stack(deps)
    tools = {t.name: t for t in create_stack_tools(stack, ALICE, deps.repo)}
    tools["define_columns"].invoke({"columns": COLUMNS})
    tools["extract_row"].invoke(
        {"doc_id": docs[0], "values": {"total": 1}, "confidences": {"total": 0.5}}
    )
    try:
        tools["complete_table"].invoke({})
    except Exception as exc:
        assert str(exc) == f"Cannot complete: documents without a row: {docs[1]}"
    else:
        raise AssertionError("completed with a missing row")
    try:
        tools["define_columns"].invoke({"columns": [{"name": "Total Amount", "type": "money"}]})
    except Exception as exc:
        assert str(exc) == (
            "Validation failed:\n- column 0 name 'Total Amount' must be snake_case (a-z, 0-9, _)\n"
            "- column 'Total Amount' type 'money' must be one of text, number, date, list"
        )
    else:
        raise AssertionError("bad columns accepted")


def _big_stack(deps: DocumentsDeps, n: int) -> tuple[int, list[int]]:
    docs = [
        deps.repo.add_document(
            ALICE,
            filename=f"r{i}.pdf",
            data=b"%PDF",
            read=text_read(INVOICE_TEXT.replace("45.10", f"{i}.00")),
        ).id
        for i in range(1, n + 1)
    ]
    stack = deps.repo.create_stack(ALICE, "April receipts")
    deps.repo.add_to_stack(ALICE, stack.id, docs)
    return stack.id, docs


def _row(doc: int, total: float) -> object:
    return call(
        "extract_row",
        doc_id=doc,
        values={"company": "ACME", "total": total},
        confidences={"company": 0.9, "total": 0.8},
    )


def test_a_big_stack_is_built_in_batches_one_run_per_row(deps: DocumentsDeps) -> None:
    """Beyond SINGLE_RUN_MAX missing rows: columns first, then a row run per document through
    run_batch; a row run that fails leaves the table in_progress, and a resume fills it."""
    from casework.runtime.batch import BatchConfig

    stack, docs = _big_stack(deps, SINGLE_RUN_MAX + 2)
    _, _, foreign = _stack(deps)  # another of Alice's documents, outside this stack
    steps = [
        call("list_documents"),
        call("get_document_text", doc_id=docs[0]),
        call("define_columns", columns=COLUMNS),
        # document 1: reads it, writes it
        call("get_document_text", doc_id=docs[0]),
        _row(docs[0], 1.0),
        # document 2: aims at a document outside its run (refused), then stops without a row
        _row(docs[2], 3.0),
        say("done"),
        say("done, really"),
    ]
    steps += [_row(d, float(i)) for i, d in enumerate(docs[2:], start=3)]
    model = ScriptedChatModel(steps=steps)
    events: list[dict] = []
    out = run_stack_build(
        deps,
        ALICE,
        stack,
        on(model, events=events.append),
        batch=BatchConfig(concurrency=1),
        open_deps=build_deps,
    )
    model.assert_exhausted()
    assert out["status"] == "in_progress" and out["rows"] == len(docs) - 1
    assert out["ended_by"] == f"rows (Cannot complete: documents without a row: {docs[1]})"
    texts = [e["text"] for e in events if "text" in e and e["text"].startswith("row ")]
    assert texts[0] == f"row 1/7: document {docs[0]} written"
    assert texts[1] == f"row 2/7: document {docs[1]} has no row: the run ended without extract_row"
    assert len(texts) == 7
    table = deps.repo.table_state(ALICE, stack)
    assert [r["document_id"] for r in table.rows] == [d for d in docs if d != docs[1]]
    assert foreign not in {r["document_id"] for r in table.rows}
    # the resume has one row to write: the whole-table agent finishes it
    resume = ScriptedChatModel(steps=[_row(docs[1], 2.0), call("complete_table")])
    out = run_stack_build(deps, ALICE, stack, on(resume), open_deps=build_deps)
    assert (out["status"], out["rows"], out["ended_by"]) == ("completed", len(docs), "submit")


def test_a_row_run_sees_only_its_document(deps: DocumentsDeps) -> None:
    stack, docs = _big_stack(deps, 2)
    tools = {t.name: t for t in create_stack_tools(stack, ALICE, deps.repo, only=docs[1])}
    assert json.loads(tools["list_documents"].invoke({})) == [
        {"doc_id": docs[1], "filename": "r2.pdf", "has_row": False}
    ]
    assert json.loads(tools["get_table_state"].invoke({}))["missing_rows"] == [docs[1]]
    refusals = {
        "get_document_text": (
            {"doc_id": docs[0]},
            f"Document {docs[0]} is not in this stack; call list_documents for the ids you can use.",
        ),
        "define_columns": (
            {"columns": COLUMNS},
            f"The columns are set; write the row of document {docs[1]} only.",
        ),
        "complete_table": (
            {},
            f"This run writes the row of document {docs[1]} only; call extract_row.",
        ),
    }
    for name, (args, sentence) in refusals.items():
        with pytest.raises(ToolRetry) as refused:
            tools[name].invoke(args)
        assert str(refused.value) == sentence


def test_the_row_task_crosses_to_a_worker_with_specs_only(deps: DocumentsDeps) -> None:
    from casework.apps.documents.service.stack_builds import _RowTask

    model = ScriptedChatModel(steps=[])
    task = _RowTask(deps, ALICE, 3, model, "openai:gpt-4o-mini", build_deps)
    shipped = pickle.loads(pickle.dumps(task))
    assert (shipped._deps, shipped._model) == (None, None)  # built on the worker's first row
    assert (shipped.user_id, shipped.stack_id, shipped.model_spec) == (
        ALICE,
        3,
        "openai:gpt-4o-mini",
    )
    assert shipped.settings == deps.settings and shipped.open_deps is build_deps
