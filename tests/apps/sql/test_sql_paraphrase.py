"""Does a question ask what a remembered query answers (``paraphrase``)? A paraphrase agrees
with the verified query; a near question that asks something else disagrees with it somewhere
(a group for a count of distinct values, 30 for 40, France for Germany, the most for the
least). The memory layer answers a paraphrase MiniLM puts at 0.81 (the plain cosine memory
wanted 0.95) with no model call, and is not sure of near questions that ask something else."""

from __future__ import annotations

import pytest

from casework.apps.sql.paraphrase import (
    AGREED_SIMILARITY,
    NOT_SURE,
    agreed_confidence,
    agreement,
    cue_disagreements,
    literal_disagreements,
    name_disagreements,
    query_constructs,
)
from casework.apps.sql.strategies import SQL_MEMORY_THRESHOLD, STRATEGIES, query_memory
from casework.llm import RoleModels, ScriptedChatModel, call
from casework.runtime import RunConfig
from casework.runtime.memory_layer import examples_used

SINGERS = "SELECT count(*) FROM singer"


def test_a_paraphrase_agrees_with_the_verified_query():
    said = "How many singers do we have?"
    assert agreement("What is the total number of singers?", SINGERS, remembered=said) == []
    assert agreement("Count the singers.", SINGERS, remembered=said) == []
    french = "SELECT name FROM singer WHERE country = 'France'"
    assert (
        agreement("Which singers come from France?", french, remembered="Who is from France?") == []
    )
    # a translated database: the value is 'Frankreich', both questions say France
    translated = "SELECT name FROM sänger WHERE land = 'Frankreich'"
    assert literal_disagreements("Singers from France?", translated, "Who is from France?") == []


def test_each_and_distinct_disagree_both_ways():
    distinct = "SELECT count(DISTINCT country) FROM players"
    grouped = "SELECT country, count(*) FROM players GROUP BY country"
    assert cue_disagreements("How many players are from each country?", distinct) == [
        "the question asks for 'each', the query does no GROUP",
        "the query computes COUNT_DISTINCT, the question does not ask for it",
    ]
    assert cue_disagreements("How many distinct countries do players come from?", grouped) == [
        "the question asks for 'distinct', the query does no DISTINCT"
    ]
    # German cues
    assert cue_disagreements("Wie viele Spieler gibt es in jedem Land?", distinct)


def test_another_number_or_name_disagrees():
    older = "SELECT name FROM singer WHERE age > 30"
    assert literal_disagreements(
        "List singers older than 40.", older, "Singers older than 30."
    ) == [
        "the question's 40 is not in the query",
        "the query's 30 is not in the question",
    ]
    assert literal_disagreements("List singers older than 30.", older, None) == []
    french = "SELECT name FROM singer WHERE country = 'France'"
    assert literal_disagreements("Who is from Germany?", french, "Who is from France?") == [
        "the verified question says france, this one does not"
    ]


def test_the_most_and_the_least_disagree():
    most = "SELECT stadium_id FROM concert GROUP BY stadium_id ORDER BY count(*) DESC LIMIT 1"
    assert query_constructs(most) >= {"GROUP", "ORDER", "DESC", "TOP", "COUNT"}
    assert cue_disagreements("Which stadium has the fewest concerts?", most) == [
        "the question asks for 'least', the query does no BOTTOM/MIN",
        "the query computes TOP, the question does not ask for it",
    ]
    assert cue_disagreements("Which stadium has the most concerts?", most) == []
    oldest = "SELECT name FROM singer ORDER BY age DESC LIMIT 1"  # or birth year ascending
    assert cue_disagreements("Who is the youngest singer?", oldest, "Who is the oldest?")
    assert cue_disagreements("Who is the oldest singer?", oldest, "Who is the oldest?") == []
    # "at least 3" is a comparison, not the least
    at_least = "SELECT country FROM singer GROUP BY country HAVING count(*) >= 3"
    assert cue_disagreements("Which countries have at least 3 singers?", at_least) == []


def test_a_name_the_query_does_not_read_disagrees(make_deps):
    deps, _, _, _ = make_deps()
    count = "SELECT COUNT(*) FROM alerts"
    assert name_disagreements("How many incidents are there?", count, deps.schema) == [
        "the question names 'incidents', the query reads no such table or column"
    ]
    assert name_disagreements("How many alerts are there?", count, deps.schema) == []
    # a column the verified question asked for, and this one does not
    two = "SELECT id, severity FROM alerts"
    assert name_disagreements(
        "List the severity of alerts.", two, None, "List id and severity."
    ) == ["the verified question asks for 'id', this one does not"]


def test_agreed_confidence_reaches_the_threshold_at_the_fitted_similarity():
    assert agreed_confidence(AGREED_SIMILARITY) == SQL_MEMORY_THRESHOLD == 90.0
    assert agreed_confidence(1.0) == 100.0
    assert agreed_confidence(0.55) < SQL_MEMORY_THRESHOLD < agreed_confidence(0.7) == 92.5


QUESTION = "How many critical alerts are there?"
COUNT = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'"
PARAPHRASE = "Count the alerts whose severity is critical."  # MiniLM similarity 0.81
NEAR_OTHERS = [  # 0.84, 0.81, 0.82 to QUESTION, each another question
    "How many alerts are there for each severity?",
    "How many different severities do alerts have?",
    "How many high alerts are there?",
]


@pytest.fixture
def verified(make_deps):
    deps, _, _, _ = make_deps()
    memory = query_memory(deps, RunConfig(models=RoleModels.given({})))
    inputs = {"question": QUESTION, "schema": "security"}
    example = memory.add(QUESTION, inputs, {"sql": COUNT}, verified_by="ana", source="api")
    return deps, example.id


def test_the_memory_answers_a_paraphrase_with_no_model_call(verified, monkeypatch):
    from casework.runtime import cascade as runtime_cascade

    deps, example = verified
    monkeypatch.setattr(runtime_cascade, "is_local_model", lambda m: True)
    model = ScriptedChatModel(steps=[], model_name="scripted-local")  # a call would fail
    decision = STRATEGIES["cascade"](PARAPHRASE, deps, RunConfig(models=RoleModels.given(model)))
    assert decision.verdict == "ANSWERED" and decision.run.decided_by == "memory"
    assert model.calls == 0 and decision.run.usage.model_calls == 0
    assert decision.response.query == COUNT and examples_used(decision) == [example]
    assert 90.0 <= decision.confidence < 100.0


def test_the_memory_is_not_sure_of_a_near_question_that_asks_something_else(verified, monkeypatch):
    deps, _ = verified
    config = RunConfig(models=RoleModels.given({}))
    for asked in NEAR_OTHERS:
        decision = STRATEGIES["memory"](asked, deps, config)
        assert decision.confidence <= NOT_SURE < SQL_MEMORY_THRESHOLD, asked
        assert "not sure" in decision.response.explanation
    # in the cascade it goes on to the model
    from casework.runtime import cascade as runtime_cascade

    monkeypatch.setattr(runtime_cascade, "is_local_model", lambda m: True)
    grouped = "SELECT severity, COUNT(*) FROM alerts GROUP BY severity"
    answer = call("submit_answer", query=grouped, explanation="per severity", confidence=0.9)
    model = ScriptedChatModel(steps=[answer], model_name="scripted-local")
    decision = STRATEGIES["cascade"](
        NEAR_OTHERS[0], deps, RunConfig(models=RoleModels.given(model))
    )
    assert decision.run.layers[0].layer == "memory" and decision.run.decided_by != "memory"
    assert model.calls == 1 and decision.response.query == grouped
