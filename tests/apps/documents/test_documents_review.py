"""The documents review provider: failed extractions listed, retried or marked reviewed once."""

from __future__ import annotations

import threading

import pytest

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.ocr import PageText, ReadResult
from casework.apps.documents.review import DECIDED, KIND, DocumentsReview
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller, Role
from casework.runtime.review_provider import WAITING, Cursor, ReviewFilters

ANA = Caller(1, "ana", Role.REVIEWER)
CY = Caller(2, "cy", Role.REVIEWER)
XSS = '<script>alert("owned")</script>'
INVOICE = f"INVOICE\nInvoice number: INV-2041\nDate: 2026-03-14\nTotal: $45.10\nNote {XSS}"


def _failed(deps: DocumentsDeps, owner: int, text: str, reason: str) -> tuple[int, int]:
    read = ReadResult("application/pdf", [PageText(text, ocr=False, seconds=0.0)], "pypdf")
    doc = deps.repo.add_document(owner, filename=f"doc-{owner}.pdf", data=text.encode(), read=read)
    ext = deps.repo.create_extraction(owner, doc.id)
    deps.repo.set_fields(owner, ext.id, {"invoice_number": "INV-2041"}, {"invoice_number": 0.9})
    deps.repo.fail(owner, ext.id, reason)
    return doc.id, ext.id


def _review(deps: DocumentsDeps) -> DocumentsReview:
    return DocumentsReview(Settings(), deps=deps, strategy="rules", background=False)


def test_failed_extractions_are_listed_with_text_and_fields(deps: DocumentsDeps) -> None:
    doc_id, ext_id = _failed(deps, 7, INVOICE, "limit:model_calls: the agent ran out of calls")
    _failed(deps, -1, "evaluation document", "error")  # the evaluation's owner: not listed
    review = _review(deps)
    [item] = review.items(ReviewFilters(), limit=10)
    assert (item.kind, item.id, item.status, item.title) == (
        KIND,
        str(ext_id),
        WAITING,
        f"Extraction {ext_id} of doc-7.pdf failed",
    )
    assert (
        item.summary == f"document {doc_id}, agent: limit:model_calls: the agent ran out of calls"
    )
    assert review.count(ReviewFilters()) == 1
    detail = review.get(item.id)
    assert detail.decision is not None
    assert detail.decision.reasoning == "limit:model_calls: the agent ran out of calls"
    assert [e.ref for e in detail.decision.evidence] == [
        f"document {doc_id}",
        f"extraction {ext_id}",
    ]
    fields, text, history = detail.sections
    assert fields.fields == {"invoice_number": '"INV-2041"  (0.9)'}
    assert [line[0].text for line in text.lines][-1] == f"Note {XSS}"
    assert history.rows == [
        [ext_id, "failed", "agent", 1, "limit:model_calls: the agent ran out of calls"]
    ]
    assert detail.actions == ["approve", "edit", "reject"]
    assert detail.edit_value == '{"invoice_number": "INV-2041"}'  # the fields to correct
    assert detail.action_labels["approve"] == "Retry the extraction"
    assert detail.trajectory == []
    with pytest.raises(NotFoundError):
        review.get("99")


def test_the_trajectory_is_the_failed_runs_tool_calls(deps: DocumentsDeps) -> None:
    _doc, ext_id = _failed(deps, 7, INVOICE, "error")
    deps.repo.create_run(7, "run1", "extract", extraction_id=ext_id)
    deps.repo.append_event("run1", 1, {"tool": "read_document", "input": {"page": 1}})
    deps.repo.append_event("run1", 2, {"text": "Reading."})
    deps.repo.append_event("run1", 3, {"tool": "set_fields", "input": {"fields": {"total": 45.1}}})
    deps.repo.append_event("run1", 4, {"complete": True, "error": "error"})
    calls = _review(deps).get(str(ext_id)).trajectory
    assert [(c.name, c.args, c.id) for c in calls] == [
        ("read_document", {"page": 1}, "run1:1"),
        ("set_fields", {"fields": {"total": 45.1}}, "run1:3"),
    ]


def test_retry_runs_the_extraction_once(deps: DocumentsDeps) -> None:
    doc_id, ext_id = _failed(deps, 7, INVOICE, "error")
    review = _review(deps)
    out = review.decide(str(ext_id), "approve", note="try again", edit=None, caller=ANA)
    extractions = deps.repo.extractions_of(7, doc_id)
    assert len(extractions) == 2 and extractions[0].id == ext_id
    retried = extractions[1]
    assert (out.applied, out.outcome, out.decided_by) == (
        True,
        f"retried as extraction {retried.id}",
        "ana",
    )
    assert (retried.status, retried.method) == ("completed", "rules")
    late = review.decide(str(ext_id), "reject", note="", edit=None, caller=CY)
    assert (late.applied, late.decided_by, late.outcome) == (False, "ana", out.outcome)
    assert len(deps.repo.extractions_of(7, doc_id)) == 2
    assert review.items(ReviewFilters(), limit=10) == []
    [done] = review.items(ReviewFilters(status=DECIDED), limit=10)
    assert done.id == str(ext_id)
    detail = review.get(str(ext_id))
    assert (detail.actions, detail.decided_by, detail.item.status) == ([], "ana", DECIDED)


def test_two_reviewers_at_once_settle_it_once(deps: DocumentsDeps) -> None:
    doc_id, ext_id = _failed(deps, 7, INVOICE, "error")
    review = _review(deps)
    outcomes = []
    start = threading.Barrier(2)

    def press(who: Caller) -> None:
        start.wait()
        outcomes.append(review.decide(str(ext_id), "approve", note="", edit=None, caller=who))

    threads = [threading.Thread(target=press, args=(c,)) for c in (ANA, CY)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o.applied for o in outcomes) == [False, True]
    assert len({o.decided_by for o in outcomes}) == 1
    assert len(deps.repo.extractions_of(7, doc_id)) == 2


def test_mark_reviewed_with_a_note_and_paging(deps: DocumentsDeps) -> None:
    blank, older = _failed(deps, 7, "nothing here", "Cannot complete: no fields extracted")
    _doc, newer = _failed(deps, 8, INVOICE, "error")
    review = _review(deps)
    first, second = review.items(ReviewFilters(), limit=10)
    assert (first.id, second.id) == (str(newer), str(older))
    page = review.items(ReviewFilters(), limit=1, before=Cursor(first.created_at, first.sort_id))
    assert page == [second]
    with pytest.raises(InputError, match="JSON object"):
        review.decide(str(older), "edit", note="", edit="x", caller=ANA)
    out = review.decide(str(older), "reject", note="blank scan", edit=None, caller=CY)
    assert (out.applied, out.outcome, out.decided_by) == (True, "marked reviewed: blank scan", "cy")
    assert [x.id for x in deps.repo.extractions_of(7, blank)] == [older]
    assert [i.id for i in review.items(ReviewFilters(), limit=10)] == [str(newer)]
    assert review.count(ReviewFilters(status=DECIDED)) == 1
