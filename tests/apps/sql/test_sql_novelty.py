"""sql's model layers are less sure of a question far from every verified question of its
database (``_familiar``): once the caller has examples, a novel question's answer reaches a
person; a caller without examples keeps the layer's confidence. Scripted models; the examples
are embedded with the bundled MiniLM."""

from __future__ import annotations

import pytest

from casework.apps.sql.consistency import GREEDY_CONFIDENCE
from casework.apps.sql.strategies import (
    CONSISTENCY_THRESHOLD,
    NOVELTY_FAR,
    NOVELTY_NEAR,
    STRATEGIES,
    query_memory,
)
from casework.llm import RoleModels, ScriptedChatModel, call
from casework.runtime import RunConfig

QUESTION = "How many critical alerts are there?"
COUNT = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'"
GREEDY = round(100 * GREEDY_CONFIDENCE, 2)  # 66.67: a lone greedy answer decides at 60


def submit(query: str, confidence: float = 0.9):
    return call("submit_answer", query=query, explanation="because", confidence=confidence)


@pytest.fixture
def local(monkeypatch):
    """A config whose scripted model stands in for the bundled one (no remote layer)."""
    from casework.runtime import cascade as runtime_cascade

    monkeypatch.setattr(
        runtime_cascade, "is_local_model", lambda m: m.model_name == "scripted-local"
    )

    def run_with(steps):
        model = ScriptedChatModel(steps=list(steps), model_name="scripted-local")
        return RunConfig(models=RoleModels.given(model))

    return run_with


def _verify(deps, question: str, sql: str, schema: str = "security") -> int:
    memory = query_memory(deps, RunConfig(models=RoleModels.given({})))
    inputs = {"question": question, "schema": schema}
    return memory.add(question, inputs, {"sql": sql}, verified_by="ana", source="api").id


def test_the_near_and_far_leave_a_greedy_answer_sure_only_near_a_verified_question():
    assert NOVELTY_FAR < NOVELTY_NEAR and GREEDY >= CONSISTENCY_THRESHOLD


def test_a_caller_without_examples_keeps_the_consistency_confidence(make_deps, local):
    deps, _, _, _ = make_deps()
    decision = STRATEGIES["cascade"](QUESTION, deps, local([submit(COUNT)]))
    assert decision.verdict == "ANSWERED" and decision.run.decided_by == "consistency"
    assert decision.confidence == GREEDY and "Confidence" not in decision.reasoning


def test_a_novel_question_reaches_a_person_once_the_caller_has_examples_of_its_database(
    make_deps, local
):
    deps, _, _, _ = make_deps()
    _verify(deps, "Which hosts run Windows?", "SELECT hostname FROM hosts WHERE os = 'windows'")
    decision = STRATEGIES["cascade"](QUESTION, deps, local([submit(COUNT)]))  # at 0.02
    assert decision.verdict == "NEEDS_REVIEW" and decision.run.decided_by is None
    consistency = decision.run.layers[-1]
    assert consistency.layer == "consistency" and consistency.confidence == 33.34  # 66.67 * 0.5
    assert decision.response.query == COUNT  # the draft a person reviews
    said = consistency.output["reasoning"]
    assert (
        "66.67 -> 33.34: the nearest verified question of this database is at similarity 0.02"
        in said
    )


def test_a_question_between_far_and_near_is_scaled_in_proportion(make_deps, local):
    deps, _, _, _ = make_deps()
    incidents = "SELECT COUNT(*) FROM incidents WHERE severity = 'critical'"
    _verify(deps, "How many critical incidents are there?", incidents)  # MiniLM 0.70
    decision = STRATEGIES["cascade"](QUESTION, deps, local([submit(COUNT)]))
    consistency = decision.run.layers[-1]
    assert consistency.layer == "consistency"
    assert consistency.confidence == 52.05  # 66.67 * (0.5 + 0.5 * (0.70 - 0.58) / 0.22)
    assert decision.run.decided_by is None and decision.response.query == COUNT


def test_a_question_near_a_verified_one_keeps_its_confidence(make_deps, local):
    deps, _, _, _ = make_deps()
    _verify(deps, "How many alerts are there?", "SELECT COUNT(*) FROM alerts")  # at 0.85
    decision = STRATEGIES["cascade"](QUESTION, deps, local([submit(COUNT)]))
    assert decision.run.decided_by == "consistency" and decision.confidence == GREEDY


def test_only_another_databases_examples_make_the_question_as_novel_as_it_gets(make_deps, local):
    deps, _, _, _ = make_deps()
    _verify(deps, QUESTION, COUNT, schema="concert_singer")  # the same words, another database
    decision = STRATEGIES["cascade"](QUESTION, deps, local([submit(COUNT)]))
    assert decision.verdict == "NEEDS_REVIEW" and decision.confidence == 33.34
    said = decision.run.layers[-1].output["reasoning"]
    assert "66.67 -> 33.34: no question of this database has been verified" in said


def test_the_remote_agent_is_as_sure_as_the_question_is_familiar(
    security, security_db, settings, monkeypatch
):
    from casework.apps.sql.deps import SQLConfig, SQLDeps
    from casework.apps.sql.judge import JUDGE_TOOL
    from casework.runtime import cascade as runtime_cascade

    monkeypatch.setattr(
        runtime_cascade, "is_local_model", lambda m: m.model_name == "scripted-local"
    )
    local = ScriptedChatModel(
        steps=[submit("SELECT nope FROM alerts")] * 3, model_name="scripted-local"
    )
    remote = ScriptedChatModel(steps=[submit(COUNT, confidence=0.9)], model_name="remote")
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
    _verify(deps, "Which hosts run Windows?", "SELECT hostname FROM hosts WHERE os = 'windows'")
    decision = STRATEGIES["cascade"](QUESTION, deps, config)
    agent = decision.run.layers[-1]
    assert agent.layer == "agent" and agent.remote
    assert agent.confidence < CONSISTENCY_THRESHOLD and decision.run.decided_by is None
    assert decision.response.query == COUNT
