"""The sql review face: an answer nobody was sure of waits in the inbox with its draft; a
correction is kept only after it ran read-only on the question's database."""

from __future__ import annotations

import pytest

from casework.apps.sql import service
from casework.apps.sql.deps import open_repository
from casework.apps.sql.review import SqlReview
from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller
from casework.runtime.review_provider import ReviewFilters

ALICE = Caller(user_id=1, name="alice", role="reviewer")
BOB = Caller(user_id=2, name="bob", role="reviewer")
QUESTION = "How many critical alerts are still new?"


@pytest.fixture
def review(make_deps, security, security_db, settings) -> SqlReview:
    open_repository(settings).save(security, db_url=security_db)
    deps, config, _, _ = make_deps()
    answered = service.ask(deps, QUESTION, config, strategy="rules")
    assert answered.review_id == 1  # the rules floor writes no SQL: nobody was sure
    return SqlReview(settings)


def test_an_unsure_answer_waits_with_its_draft(review: SqlReview) -> None:
    waiting = review.items(ReviewFilters(), limit=10)
    assert [(i.id, i.kind, i.status) for i in waiting] == [("1", "unsure_answer", "waiting")]
    assert review.count(ReviewFilters()) == 1
    detail = review.get("1")
    assert detail.actions == ["edit", "reject"]  # no valid draft to accept
    assert detail.sections[0].lines[0][0].text == QUESTION
    assert detail.sections[1].fields["query"] == "(none)"
    assert detail.item.summary == "on security: (no query)"
    with pytest.raises(NotFoundError):
        review.get("7")


def test_a_correction_must_run_before_it_is_kept(review: SqlReview) -> None:
    with pytest.raises(InputError, match="no query to keep"):
        review.decide("1", "approve", note="", edit=None, caller=ALICE)
    with pytest.raises(InputError, match="not run"):
        review.decide("1", "edit", note="", edit="SELECT COUNT(*) FROM alertz", caller=ALICE)
    with pytest.raises(InputError, match="not run"):
        review.decide("1", "edit", note="", edit="DELETE FROM alerts", caller=ALICE)
    assert review.count(ReviewFilters()) == 1  # refused corrections changed nothing

    fixed = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical' AND status = 'new'"
    done = review.decide("1", "edit", note="", edit=fixed, caller=ALICE)
    assert (done.applied, done.outcome, done.decided_by) == (True, f"corrected to {fixed}", "alice")
    assert done.example is not None  # the query that ran becomes a verified example
    assert (done.example.inputs, done.example.answer) == (
        {"question": QUESTION, "schema": "security"},
        {"sql": fixed},
    )
    again = review.decide("1", "reject", note="", edit=None, caller=BOB)
    assert (again.applied, again.decided_by) == (False, "alice")

    page = review.get("1")
    assert (page.actions, page.outcome) == ([], f"corrected to {fixed}")
    assert [i.id for i in review.items(ReviewFilters(status="decided"), limit=5)] == ["1"]


def test_answered_questions_do_not_wait(make_deps, settings) -> None:
    deps, config, _, _ = make_deps(agent=[], judge=[])
    # A refusal (a write asked for) is not an unsure answer: nothing waits.
    refused = service.ask(deps, "Delete every alert from last week", config, strategy="rules")
    assert refused.review_id is None
    assert SqlReview(settings).count(ReviewFilters()) == 0


def test_the_cli_says_the_answer_waits_for_a_person(settings) -> None:
    from typer.testing import CliRunner

    from casework.apps.sql.cli import app

    result = CliRunner().invoke(app, ["ask", QUESTION, "--strategy", "rules"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "Nobody was sure: waiting for a person as sql review item 1 (the inbox of `casework "
        "serve`)."
    )
