"""sql learns from review: the memory layer answers a verified question of the same database
(and a close paraphrase) by running its query afresh, with no model call; the bundled model
sees the database's nearest verified questions in its prompt; deleting an example restores the
answer it changed. Scripted models; the examples are embedded with the bundled MiniLM."""

from __future__ import annotations

import pytest

from casework.apps.sql.data.memory_sweep import split_cases
from casework.apps.sql.database import execute_read_only
from casework.apps.sql.examples import example_schema
from casework.apps.sql.strategies import SQL_MEMORY_THRESHOLD, STRATEGIES, query_memory
from casework.llm import RoleModels, ScriptedChatModel, call
from casework.runtime import RunConfig
from casework.runtime.memory_layer import examples_used, lowest_threshold, threshold_table

QUESTION = "How many critical alerts are there?"
PARAPHRASE = "What is the number of critical alerts?"  # MiniLM similarity 0.97
LOOSE = "How many alerts are there?"  # 0.85 to QUESTION, and another answer
COUNT = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'"
SAME_ROWS = "SELECT COUNT(id) FROM alerts WHERE severity = 'critical'"
ALL = "SELECT COUNT(*) FROM alerts"


def submit(query: str):
    return call("submit_answer", query=query, explanation="because", confidence=0.9)


# a greedy query that does not validate: two agreeing samples decide, not a lone greedy one
BROKEN = submit("SELECT nope FROM alerts")


@pytest.fixture
def local(monkeypatch):
    """A scripted model standing in for the bundled one (no remote layer in the run)."""
    from casework.runtime import cascade as runtime_cascade

    monkeypatch.setattr(
        runtime_cascade, "is_local_model", lambda m: m.model_name == "scripted-local"
    )

    def run_with(steps):
        """(model, config, the messages of each call)."""
        seen: list = []

        def seeing(message):
            return lambda messages: seen.append(messages) or message

        model = ScriptedChatModel(steps=[seeing(m) for m in steps], model_name="scripted-local")
        return model, RunConfig(models=RoleModels.given(model)), seen

    return run_with


def _verify(deps, question: str, sql: str, schema: str = "security") -> int:
    memory = query_memory(deps, RunConfig(models=RoleModels.given({})))
    inputs = {"question": question, "schema": schema}
    return memory.add(question, inputs, {"sql": sql}, verified_by="ana", source="api").id


def test_a_verified_question_and_its_paraphrase_run_the_query_afresh_with_no_model_call(
    make_deps, local
):
    deps, _, _, _ = make_deps()
    example = _verify(deps, QUESTION, COUNT)
    rows = execute_read_only(deps.db_url, COUNT).rows
    for asked in (QUESTION, PARAPHRASE):
        model, config, _ = local([])  # any model call would fail: the script is empty
        decision = STRATEGIES["cascade"](asked, deps, config)
        assert decision.verdict == "ANSWERED" and decision.run.decided_by == "memory"
        assert [o.layer for o in decision.run.layers] == ["memory"]
        assert model.calls == 0 and decision.run.usage.model_calls == 0
        assert decision.response.query == COUNT and decision.response.result.rows == rows
        assert examples_used(decision) == [example]
        assert decision.confidence >= SQL_MEMORY_THRESHOLD
    exact = STRATEGIES["memory"](QUESTION, deps, local([])[1])
    assert exact.confidence == 100.0 and exact.response.confidence_source == "memory"


def test_a_loose_neighbour_goes_on_to_the_model_which_sees_it_as_a_demonstration(make_deps, local):
    deps, _, _, _ = make_deps()
    example = _verify(deps, QUESTION, COUNT)
    _, config, seen = local([BROKEN, submit(ALL), submit(ALL)])
    decision = STRATEGIES["cascade"](LOOSE, deps, config)
    assert decision.run.decided_by == "consistency" and decision.response.query == ALL
    memory = decision.run.layers[0]
    assert memory.layer == "memory" and 0 < memory.confidence < SQL_MEMORY_THRESHOLD
    system = seen[0][0].content
    assert f"Question: {QUESTION}\nSQL: {COUNT}" in system
    assert examples_used(decision) == [example]  # shown to the model, recorded


def _tables_in(system: str) -> list[str]:
    """The tables a prompt describes (one ``name: description Columns: ...`` line each)."""
    listed = system.split("Relevant tables:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in listed.splitlines() if " Columns: " in line]


def test_the_models_prompt_shows_only_the_linked_tables_and_those_of_its_examples(make_deps, local):
    deps, _, _, _ = make_deps()
    asked = "How many alerts are critical?"
    _, config, seen = local([submit(ALL), submit(ALL)])
    STRATEGIES["consistency"](asked, deps, config)
    # 5 tables retrieved; the prompt keeps the two whose names hold "alerts"
    assert _tables_in(seen[0][0].content) == ["alerts", "incident_alerts"]
    hosts = "SELECT COUNT(*) FROM hosts WHERE criticality = 'critical'"
    _verify(deps, "How many critical hosts are there?", hosts)
    _, config, seen = local([submit(ALL), submit(ALL)])
    decision = STRATEGIES["consistency"](asked, deps, config)
    assert examples_used(decision) != []  # the example is shown: its table comes with it
    assert _tables_in(seen[0][0].content) == ["alerts", "incident_alerts", "hosts"]


def test_another_databases_example_is_neither_recalled_nor_shown(make_deps, local):
    deps, _, _, _ = make_deps()
    _verify(deps, QUESTION, COUNT, schema="concert_singer")
    _, config, seen = local([BROKEN, submit(COUNT), submit(SAME_ROWS)])
    decision = STRATEGIES["cascade"](QUESTION, deps, config)
    assert examples_used(decision) == [] and decision.response.query == COUNT
    # with no verified question of this database the vote is as novel as it gets: a person
    assert decision.run.decided_by is None and decision.confidence == 33.34  # 66.67 * 0.5
    assert "Questions a person answered" not in seen[0][0].content
    assert example_schema({"db_id": "pets_1"}) == "pets_1"


def test_a_remembered_query_that_no_longer_validates_is_not_used(make_deps, local):
    deps, _, _, _ = make_deps()
    _verify(deps, QUESTION, "SELECT COUNT(*) FROM printers")
    decision = STRATEGIES["memory"](QUESTION, deps, local([])[1])
    assert decision.verdict == "NEEDS_REVIEW" and decision.confidence == 0
    assert "does not validate now" in decision.reasoning


def test_a_question_verified_as_one_to_refuse_is_refused_from_memory(make_deps, local):
    deps, _, _, _ = make_deps()
    memory = query_memory(deps, RunConfig(models=RoleModels.given({})))
    asked = "How many alerts did the intern silence to hide the breach?"
    inputs = {"question": asked, "schema": "security"}
    example = memory.add(asked, inputs, {"refuse": True}, verified_by="ana", source="api").id
    model, config, _ = local([])
    decision = STRATEGIES["cascade"](asked, deps, config)
    assert (decision.verdict, decision.run.decided_by, model.calls) == ("REFUSED", "memory", 0)
    assert decision.confidence == 100.0 and decision.response.query is None
    assert examples_used(decision) == [example]


def test_removing_the_example_restores_the_models_answer(make_deps, local):
    deps, _, _, _ = make_deps()
    _, config, _ = local([BROKEN, submit(ALL), submit(ALL)])
    before = STRATEGIES["cascade"](QUESTION, deps, config)
    assert before.response.query == ALL and before.run.decided_by == "consistency"
    example = _verify(deps, QUESTION, COUNT)  # a reviewer's correction
    learned = STRATEGIES["cascade"](QUESTION, deps, local([])[1])
    assert learned.response.query == COUNT and learned.run.decided_by == "memory"
    query_memory(deps, config).delete(example)
    _, config, _ = local([BROKEN, submit(ALL), submit(ALL)])
    after = STRATEGIES["cascade"](QUESTION, deps, config)
    assert after.response.query == ALL and after.run.decided_by == "consistency"
    assert examples_used(after) == []


def test_split_and_threshold_table():
    cases = [{"id": str(i), "metadata": {"db_id": db}} for i, db in enumerate("aaaabb")]
    stored, measured = split_cases(cases, "half")
    assert [c["id"] for c in stored] == ["0", "1", "4"]
    assert [c["id"] for c in measured] == ["2", "3", "5"]
    stored, measured = split_cases(cases, "alternate")
    assert [c["id"] for c in stored] == ["0", "2", "4"]
    table = threshold_table([(0.0, False), (70.0, False), (92.0, True), (100.0, True)], [60, 90])
    assert [(r.answered, r.right) for r in table] == [(3, 2), (2, 2)]
    assert table[0].precision == pytest.approx(2 / 3) and table[1].answered_share == 0.5
    assert lowest_threshold(table).threshold == 90
    assert lowest_threshold(table[:1]) is None


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_answers_with_a_verified_question_of_the_database_in_its_prompt(
    security, security_db, settings
):
    pytest.importorskip("xllamacpp")
    from casework.apps.sql.benchmark import gold_and_predicted
    from casework.apps.sql.deps import SQLDeps
    from casework.apps.sql.metrics import execution_match
    from casework.apps.sql.service import execute_validated
    from casework.config import get_settings
    from casework.llm import resolve_model

    model = resolve_model("local:qwen2.5-coder-1.5b", settings=get_settings())
    deps = SQLDeps(schema=security, settings=settings, db_url=security_db)
    deps = deps.with_config(retrieval_type="keyword", top_k=2)
    example = _verify(deps, QUESTION, COUNT)
    config = RunConfig(models=RoleModels.given(model))
    decision = STRATEGIES["consistency"]("How many alerts have high severity?", deps, config)
    assert examples_used(decision) == [example]  # shown to the model, recorded
    assert decision.response.valid, decision.response.validation_errors
    gold = "SELECT COUNT(*) FROM alerts WHERE severity = 'high'"
    out = gold_and_predicted(deps, gold, decision.response.query, execute=execute_validated)
    assert execution_match({"sql": gold, "ordered": False}, out) is True, decision.response.query


def test_a_learn_runs_stream_per_database_halves_repeats_and_memory_decisions():
    from casework.apps.sql.data.learn_stream import (
        median_decided_seconds,
        per_database,
        stream_cases,
    )

    def case(db, sql, right, calls, decided_by=None, memory=0.0, seconds=1.0):
        return {
            "wall_seconds": seconds,
            "metadata": {"db_id": db},
            "expected": {"sql": sql},
            "domain": {
                "execution_accuracy": 1.0 if right else 0.0,
                "model_calls_per_question": calls,
            },
            "decided_by": decided_by,
            "verdict": "ANSWERED",
            "output": {"response": {"strategy": "cascade"}},
            "layers": [{"layer": "memory", "confidence": memory}],
        }

    cases = [
        case("a", "SELECT 1", False, 2),
        case("b", "SELECT 9", True, 3, "consistency", seconds=30.0),
        case("a", "SELECT 2", True, 3, "consistency", seconds=12.0),
        case("a", "select 1;", True, 0, "memory", 96.0, seconds=0.5),  # a paraphrase of the first
        case("a", "SELECT 3", False, 2, memory=40.0),
    ]
    rows = stream_cases(cases)
    assert [(r.db_id, r.second_half, r.repeat) for r in rows] == [
        ("a", False, False),
        ("a", False, False),
        ("a", True, True),
        ("a", True, False),
        ("b", True, False),  # one question: the second half (cases[n // 2 :])
    ]
    assert [r.confidence for r in rows] == [0.0, 0.0, 96.0, 40.0, 0.0]
    assert per_database(rows)["a"] == {
        "questions": 4,
        "second_half": 2,
        "second_half_right": 1,
        "model_calls": 7,
        "repeats": 1,
        "memory_no_model": 1,
    }
    # the undecided ones (to review) do not count: the median of 30, 12 and 0.5 s
    assert median_decided_seconds(rows) == 12.0
    assert median_decided_seconds(rows[:1]) is None
