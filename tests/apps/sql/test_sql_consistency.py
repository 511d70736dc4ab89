"""Self-consistency and the cascade with scripted models: the vote on result rows, early
stopping, refusals as votes, and which layer decides."""

from __future__ import annotations

import pytest

from casework.apps.sql.consistency import GREEDY_CONFIDENCE, Candidate, settled, vote
from casework.apps.sql.models import SubmitAnswer
from casework.apps.sql.strategies import CONSISTENCY_THRESHOLD, STRATEGIES
from casework.apps.sql.strategies.self_consistent import run_self_consistent
from casework.llm import RoleModels, ScriptedChatModel, call
from casework.runtime import RunConfig

QUESTION = "How many critical alerts are there?"
COUNT = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'"
SAME_ROWS = "SELECT COUNT(id) FROM alerts WHERE severity = 'critical'"
OTHER = "SELECT COUNT(*) FROM alerts"


def submit(query: str, confidence: float = 0.9):
    return call("submit_answer", query=query, explanation="because", confidence=confidence)


def answer(query: str) -> SubmitAnswer:
    return SubmitAnswer(query=query, explanation="x", confidence=0.5)


def test_vote_groups_equal_rows_and_ties_go_to_the_greedy_candidate():
    a = Candidate(answer("q1"), rows=[[3]])
    b = Candidate(answer("q2"), rows=[[4]])
    c = Candidate(answer("q3"), rows=[[4]])
    assert vote([a, b, c]) == (1, 2)
    assert vote([a, b]) == (0, 1)  # a tie: the greedy (first) candidate's group
    # rows in another order, columns swapped: the same result
    d = Candidate(answer("q4"), rows=[[1, "x"], [2, "y"]])
    e = Candidate(answer("q5"), rows=[["y", 2], ["x", 1]])
    assert vote([d, e]) == (0, 2)
    # refusals are one group; candidates that did not run are no vote
    r1, r2 = Candidate(answer("")), Candidate(answer(""))
    broken = Candidate(answer("SELECT nope"), error="not valid")
    assert vote([broken, r1, r2]) == (1, 2)
    assert vote([broken]) == (None, 0)


def test_only_a_greedy_candidate_with_rows_settles_alone():
    assert settled(Candidate(answer("q"), rows=[[0]]))
    assert not settled(Candidate(answer("q"), rows=[]))  # ran, no rows
    assert not settled(Candidate(answer("q"), error="not valid"))
    assert not settled(Candidate(answer("")))  # a refusal asks for the samples' votes


EMPTY = "SELECT COUNT(*) FROM alerts WHERE severity = 'none' GROUP BY severity"  # no rows


def vote_step(response):
    return next(s for s in response.reasoning_steps if s["kind"] == "vote")


def test_a_greedy_query_that_runs_with_rows_is_the_answer_alone_in_one_call(make_deps):
    deps, config, model, _ = make_deps(agent=[submit(COUNT), submit(OTHER), submit(OTHER)])
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 1 and response.model_calls == 1  # no samples asked
    assert response.query == COUNT
    # one candidate claims no agreement: the measured share of such ones that are right
    assert response.confidence == GREEDY_CONFIDENCE and response.confidence_source == "greedy"
    step = vote_step(response)
    assert step["alone"] is True and step["asked"] == 1 and step["agreeing"] == 1


def test_a_greedy_query_that_does_not_validate_asks_for_samples(make_deps):
    deps, config, model, _ = make_deps(
        agent=[submit("SELECT nope FROM alerts"), submit(COUNT), submit(SAME_ROWS)]
    )
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 3 and response.model_calls == 3
    assert response.query == COUNT
    assert response.confidence == round(2 / 3, 4) and response.confidence_source == "consistency"
    step = vote_step(response)
    assert step["alone"] is False and step["agreeing"] == 2 and step["winner"] == 1


def test_a_greedy_query_with_no_rows_asks_for_samples_and_two_agreeing_stop_them(make_deps):
    deps, config, model, _ = make_deps(agent=[submit(EMPTY), submit(COUNT), submit(SAME_ROWS)])
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 3  # the empty greedy result is one vote, the two samples agree
    assert response.query == COUNT and response.confidence == round(2 / 3, 4)
    deps, config, model, _ = make_deps(agent=[submit(EMPTY), submit(EMPTY), submit(OTHER)])
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 2  # greedy and a sample agree on the empty result: a majority
    assert response.query == EMPTY and response.confidence == round(2 / 3, 4)


def test_a_lone_answer_after_samples_keeps_a_third_of_the_confidence(make_deps):
    deps, config, model, _ = make_deps(
        agent=[submit("SELECT nope FROM x"), submit(COUNT), submit(OTHER)]
    )
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 3 and response.query == COUNT
    assert response.confidence == round(1 / 3, 4) and vote_step(response)["alone"] is False


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Drop the alerts table.", "destructive"),
        ("Write a poem about autumn leaves.", "off_topic"),
        ("How many printers are out of toner?", "off_topic"),
        ("Dump the users table with every field.", "sensitive"),
    ],
)
def test_cascade_screen_refuses_without_a_model_call(make_deps, question, kind):
    deps, config, model, _ = make_deps()
    decision = STRATEGIES["cascade"](question, deps, config)
    assert decision.verdict == "REFUSED" and model.calls == 0
    assert decision.run is not None and decision.run.decided_by == "rules"
    assert decision.response.reasoning_steps[0]["refusal"] == kind
    assert decision.response.confidence == 0.0  # a refusal's answer confidence stays capped


def test_cascade_keeps_an_agreed_answer_and_reviews_a_lone_one_after_samples(
    make_deps, security, security_db, monkeypatch
):
    from casework.apps.sql.deps import SQLConfig, SQLDeps
    from casework.runtime import cascade as runtime_cascade

    # the scripted model stands in for the bundled one: no remote layer in this run
    monkeypatch.setattr(
        runtime_cascade, "is_local_model", lambda m: m.model_name == "scripted-local"
    )

    def run_with(steps):
        model = ScriptedChatModel(steps=steps, model_name="scripted-local")
        return RunConfig(models=RoleModels.given(model))

    deps, _, _, _ = make_deps()
    deps = SQLDeps(
        schema=security,
        settings=deps.settings,
        db_url=security_db,
        config=SQLConfig(retrieval_type="keyword"),
    )
    broken = submit("SELECT nope FROM alerts")
    agreed = STRATEGIES["cascade"](
        QUESTION, deps, run_with([broken, submit(COUNT), submit(SAME_ROWS)])
    )
    assert agreed.verdict == "ANSWERED" and agreed.run.decided_by == "consistency"
    assert agreed.confidence == round(100 * 2 / 3, 2)
    assert [o.layer for o in agreed.run.layers] == ["memory", "rules", "consistency"]
    lone = STRATEGIES["cascade"](
        QUESTION, deps, run_with([broken, submit(COUNT), submit(OTHER + " LIMIT 0")])
    )
    assert lone.verdict == "NEEDS_REVIEW" and lone.run.decided_by is None
    assert lone.confidence == round(100 / 3, 2)
    assert lone.response.query == COUNT  # the draft a person reviews
    # a greedy query that ran with rows: one call, the measured confidence, not an agreement
    greedy = STRATEGIES["cascade"](QUESTION, deps, run_with([submit(COUNT)]))
    assert greedy.response.model_calls == 1 and greedy.response.query == COUNT
    assert greedy.confidence == round(100 * GREEDY_CONFIDENCE, 2)
    sure = 100 * GREEDY_CONFIDENCE >= CONSISTENCY_THRESHOLD
    assert (greedy.run.decided_by == "consistency") is sure


def test_every_try_asking_for_missing_columns_is_an_unanswerable_refusal(make_deps):
    deps, config, model, _ = make_deps(
        agent=[
            submit("SELECT AVG(age) FROM users"),
            submit("SELECT AVG(age) FROM users u"),
            submit("SELECT AVG(salary) FROM employees"),
        ]
    )
    response = run_self_consistent(deps, config, "What is the average age of users?").decision
    assert model.calls == 3 and response.refused and response.query is None
    assert "does not hold" in response.explanation and "age" in response.explanation
    assert response.confidence <= 0.1  # a refusal's answer confidence stays capped
    vote = next(s for s in response.reasoning_steps if s["kind"] == "vote")
    assert vote["winner"] == "unanswerable" and vote["agreeing"] == 3


def test_a_syntax_error_is_not_evidence_of_an_unanswerable_question(make_deps):
    deps, config, _, _ = make_deps(
        agent=[
            submit("SELECT AVG(age) FROM users"),
            submit("SELEC x"),
            submit("SELECT AVG(age) FROM users"),
        ]
    )
    response = run_self_consistent(deps, config, "What is the average age of users?").decision
    assert not response.refused


def test_with_a_remote_model_the_agent_on_it_decides_what_the_vote_could_not(
    security, security_db, settings, monkeypatch
):
    from casework.apps.sql.deps import SQLConfig, SQLDeps
    from casework.apps.sql.judge import JUDGE_TOOL
    from casework.runtime import cascade as runtime_cascade

    monkeypatch.setattr(
        runtime_cascade, "is_local_model", lambda m: m.model_name == "scripted-local"
    )
    local = ScriptedChatModel(
        steps=[submit("SELECT nope FROM alerts"), submit(OTHER), submit(OTHER + " LIMIT 0")],
        model_name="scripted-local",
    )
    remote = ScriptedChatModel(
        steps=[
            call("llm_judge_evaluate", query=COUNT, question=QUESTION),
            submit(COUNT, confidence=0.9),
        ],
        model_name="scripted-remote",
    )
    judge = ScriptedChatModel(
        steps=[
            call(
                JUDGE_TOOL,
                is_correct=True,
                correctness_score=0.9,
                issues=[],
                suggestions=[],
                reasoning="counts the critical ones",
            )
        ],
        model_name="scripted-judge",
    )
    config = RunConfig(
        models=RoleModels.given({"local": local, "specialist": remote, "judge": judge})
    )
    deps = SQLDeps(
        schema=security,
        settings=settings,
        db_url=security_db,
        config=SQLConfig(retrieval_type="keyword"),
    )
    decision = STRATEGIES["cascade"](QUESTION, deps, config)
    for model in (local, remote, judge):
        model.assert_exhausted()
    layers = [(o.layer, o.kept, o.remote) for o in decision.run.layers]
    assert layers == [
        ("memory", False, False),
        ("rules", False, False),
        ("consistency", False, False),
        ("agent", True, True),
    ]
    assert decision.verdict == "ANSWERED" and decision.run.decided_by == "agent"
    assert decision.response.query == COUNT and decision.confidence == 90.0
