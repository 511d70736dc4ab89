"""Self-consistency and the cascade with scripted models: the vote on result rows, early
stopping, refusals as votes, and which layer decides."""

from __future__ import annotations

import pytest

from casework.apps.sql.consistency import Candidate, vote
from casework.apps.sql.models import SubmitAnswer
from casework.apps.sql.strategies import STRATEGIES, run_self_consistent
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


def test_two_agreeing_candidates_stop_the_sampling(make_deps):
    deps, config, model, _ = make_deps(agent=[submit(COUNT), submit(SAME_ROWS), submit(OTHER)])
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 2  # the third candidate could not change the majority
    assert response.query == COUNT and response.model_calls == 2
    assert response.confidence == round(2 / 3, 4) and response.confidence_source == "consistency"
    step = next(s for s in response.reasoning_steps if s["kind"] == "vote")
    assert step["agreeing"] == 2 and step["asked"] == 2 and step["winner"] == 0


def test_disagreement_asks_every_sample_and_the_majority_wins(make_deps):
    deps, config, model, _ = make_deps(agent=[submit(OTHER), submit(COUNT), submit(SAME_ROWS)])
    response = run_self_consistent(deps, config, QUESTION).decision
    assert model.calls == 3
    assert response.query == COUNT and response.confidence == round(2 / 3, 4)


def test_a_lone_answer_is_kept_with_a_third_of_the_confidence(make_deps):
    deps, config, _, _ = make_deps(
        agent=[submit(COUNT), submit(OTHER), submit("SELECT nope FROM x")]
    )
    response = run_self_consistent(deps, config, QUESTION).decision
    assert response.query == COUNT and response.confidence == round(1 / 3, 4)


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


def test_cascade_keeps_an_agreed_answer_and_reviews_a_lone_one(
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
    agreed = STRATEGIES["cascade"](QUESTION, deps, run_with([submit(COUNT), submit(SAME_ROWS)]))
    assert agreed.verdict == "ANSWERED" and agreed.run.decided_by == "consistency"
    assert agreed.confidence == round(100 * 2 / 3, 2)
    assert [o.layer for o in agreed.run.layers] == ["memory", "rules", "consistency"]
    lone = STRATEGIES["cascade"](
        QUESTION, deps, run_with([submit(COUNT), submit(OTHER), submit(OTHER + " LIMIT 0")])
    )
    assert lone.verdict == "NEEDS_REVIEW" and lone.run.decided_by is None
    assert lone.response.query == COUNT  # the draft a person reviews


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
        steps=[submit(COUNT), submit(OTHER), submit(OTHER + " LIMIT 0")],
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
