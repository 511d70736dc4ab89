"""Append-only labels: history, the consolidation chain, review decisions, edge cases."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from casework.apps.receipts.labels import resolve_ref
from casework.apps.receipts.models import LabelDecision, ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import record_result, review_decide
from casework.apps.receipts.tables import LabelRow
from casework.errors import InputError, NotFoundError
from casework.runtime.decision import EndReason, RunInfo
from casework.stores.sql import session_scope


def _rows(deps):
    with session_scope(deps.repo.engine) as s:
        return {
            r.id: (r.label_type, r.status, r.reasoning, r.replaces_id)
            for r in s.scalars(select(LabelRow))
        }


def _result(ref, decision, confidence=95.0):
    return LabelDecision(
        verdict=decision,
        confidence=confidence,
        reasoning="test",
        run=RunInfo(ended_by=EndReason.RULES, strategy="baseline"),
    )


def test_a_change_is_a_new_row_and_old_rows_never_change(small):
    ref = resolve_ref(small, "chevron", 9, 3, "LINE_TOTAL")  # $60.83
    before = _rows(small)
    [old] = [
        lab
        for lab in small.repo.labels_for_word(
            small.repo.get_word(small.repo.resolve_receipt("chevron").id, 9, 3).id
        )
    ]
    new = record_result(small, ref, _result(ref, "NEEDS_REVIEW", 60))
    after = _rows(small)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing overwritten
    assert len(after) == len(before) + 1
    assert new[0].replaces_id == old.id and new[0].status == ValidationStatus.NEEDS_REVIEW
    history = small.repo.labels_for_word(old.word_pk)
    assert [(lab.id, lab.current) for lab in history] == [(old.id, False), (new[0].id, True)]


def test_a_label_is_superseded_only_once(small):
    word = small.repo.get_word(small.repo.resolve_receipt("chevron").id, 1, 1)
    [old] = small.repo.labels_for_word(word.id)
    change = LabelChange(
        word_pk=word.id,
        label_type="MERCHANT_NAME",
        status=ValidationStatus.VALID,
        proposed_by="t",
        replaces_id=old.id,
    )
    small.repo.append_labels([change])
    with pytest.raises(InputError, match="already changed"):
        small.repo.append_labels([change])


def test_review_accept_writes_the_chain(small):
    rid = small.repo.resolve_receipt("casaverde").id
    word = small.repo.get_word(rid, 13, 3)  # "13.50" LINE_TOTAL on "3 Horchata 13.50"
    [old] = small.repo.labels_for_word(word.id)
    [suggestion] = small.repo.append_labels(
        [
            LabelChange(
                word_pk=word.id,
                label_type="UNIT_PRICE",
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="harmonizer",
                consolidated_from_id=old.id,
            )
        ]
    )
    assert [lab.id for lab in small.repo.review_queue()] == [suggestion.id]
    rows = review_decide(
        small, suggestion.id, accept=True, reviewer="ana", note="checked the paper receipt"
    )
    assert [(r.label_type, r.status.value, r.replaces_id, r.validated_by) for r in rows] == [
        ("UNIT_PRICE", "VALID", suggestion.id, "human:ana"),
        ("LINE_TOTAL", "INVALID", old.id, "human:ana"),
    ]
    assert (
        rows[0].consolidated_from_id == old.id and rows[0].reasoning == "checked the paper receipt"
    )
    assert small.repo.review_queue() == []
    current = [
        (lab.label_type, lab.status.value)
        for lab in small.repo.labels_for_word(word.id)
        if lab.current
    ]
    assert sorted(current) == [("LINE_TOTAL", "INVALID"), ("UNIT_PRICE", "VALID")]
    with pytest.raises(InputError, match="already reviewed"):
        review_decide(small, suggestion.id, accept=False)


def test_review_reject_keeps_the_old_label(small):
    rid = small.repo.resolve_receipt("casaverde").id
    word = small.repo.get_word(rid, 13, 3)
    [old] = small.repo.labels_for_word(word.id)
    [suggestion] = small.repo.append_labels(
        [
            LabelChange(
                word_pk=word.id,
                label_type="UNIT_PRICE",
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="harmonizer",
                consolidated_from_id=old.id,
            )
        ]
    )
    [row] = review_decide(small, suggestion.id, accept=False, reviewer="bo")
    assert (row.label_type, row.status.value, row.replaces_id) == (
        "UNIT_PRICE",
        "INVALID",
        suggestion.id,
    )
    assert (
        small.repo.get_label(old.id).current
        and small.repo.get_label(old.id).status == ValidationStatus.VALID
    )
    with pytest.raises(NotFoundError):
        review_decide(small, 999999, accept=True)
    with pytest.raises(InputError, match="not waiting for review"):
        review_decide(small, old.id, accept=True)


def test_edge_cases_are_editable(small):
    seeded = small.repo.edge_cases("WEBSITE")
    assert len(seeded) == 2
    added = small.repo.add_edge_case("WEBSITE", "(or|for)", "Connectives are not web addresses.")
    assert [c.id for c in small.repo.edge_cases("WEBSITE")][-1] == added.id
    with pytest.raises(InputError, match="already has"):
        small.repo.add_edge_case("WEBSITE", "(or|for)", "again")
    with pytest.raises(InputError, match="not a valid regular expression"):
        small.repo.add_edge_case("WEBSITE", "(", "bad")
    small.repo.deactivate_edge_case(added.id)
    assert added.id not in [c.id for c in small.repo.edge_cases("WEBSITE")]
    assert added.id in [c.id for c in small.repo.edge_cases("WEBSITE", include_inactive=True)]
    with pytest.raises(NotFoundError):
        small.repo.deactivate_edge_case(added.id)
