"""Table retrieval: BM25 keyword mode (no embedding model) and MiniLM semantic mode."""

from __future__ import annotations

import pytest

from casework.apps.sql.retrieval import link_tables, retrieve_tables, tokenize
from casework.errors import SourceUnavailable


def test_tokenize_splits_names_and_drops_stop_words():
    assert tokenize("Which users had failed login_attempts?") == [
        "user",
        "fail",
        "login",
        "attempt",
    ]


def test_keyword_retrieval_ranks_the_tables_a_question_needs(security):
    found = retrieve_tables(
        security, "Find the top 10 users by failed login attempts who have never been blocked", 3
    )
    assert [t.table for t in found] == ["login_attempts", "account_blocks", "users"]
    assert found[0].score > found[1].score > found[2].score > 0
    assert found[0].columns[0].name == "id" and found[0].category == "authentication"
    dns = retrieve_tables(security, "How many DNS lookups returned NXDOMAIN last week?", 5)
    assert dns[0].table == "dns_queries"


def test_keyword_retrieval_returns_nothing_for_an_unrelated_question(security):
    assert retrieve_tables(security, "What is the weather in Paris?", 5) == []


def test_semantic_retrieval_scores_with_minilm(security, tmp_path):
    found = retrieve_tables(
        security, "Which hosts have critical vulnerabilities that are still open?", 3,
        mode="semantic", vectors_dir=tmp_path / "chroma",
    )  # fmt: skip
    assert [t.table for t in found][:2] == ["host_vulnerabilities", "vulnerabilities"]
    assert 0 < found[1].score < found[0].score <= 1


def test_a_broken_vector_directory_is_an_unavailable_source(security, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(SourceUnavailable, match="semantic table index is unavailable"):
        retrieve_tables(security, "hosts", 3, mode="semantic", vectors_dir=blocker / "chroma")


def _linked(security, question: str, queries=(), **kw) -> list[str]:
    retrieved = [security.tables[t.table] for t in retrieve_tables(security, question, 5)]
    return [t.name for t in link_tables(question, retrieved, security, queries, **kw)]


def test_the_prompt_keeps_the_tables_the_question_names_and_the_bridges_between_them(security):
    # of the 5 retrieved: the tables whose names hold the question's "alerts"
    assert _linked(security, "How many alerts are critical?") == ["alerts", "incident_alerts"]
    # a word the named tables leave unexplained brings the table with that column
    assert _linked(security, "Which accounts are currently blocked? Give their user ids.") == [
        "account_blocks",
        "users",
    ]
    # incidents and alerts are named; incident_alerts joins the two
    assert _linked(security, "List the titles of incidents linked to at least 2 alerts.") == [
        "incident_alerts",
        "incidents",
        "alerts",
    ]


def test_the_examples_queries_bring_their_tables_and_small_or_unnamed_sets_stay_whole(security):
    question = "How many alerts are critical?"
    shown = ["SELECT COUNT(*) FROM hosts WHERE criticality = 'critical'"]
    assert _linked(security, question, shown) == ["alerts", "incident_alerts", "hosts"]
    whole = [t.table for t in retrieve_tables(security, question, 5)]
    assert len(whole) == 5 and _linked(security, question, budget=100_000) == whole
    # nothing named by a table's name: nothing to link by
    assert _linked(security, "Which 5 destination ports were denied most often?") == [
        t.table
        for t in retrieve_tables(security, "Which 5 destination ports were denied most often?", 5)
    ]


def test_the_one_shot_tool_holds_the_explanation_short_and_leaves_the_model_class_alone():
    from casework.apps.sql.agent import SHORT_EXPLANATION, submit_schema
    from casework.apps.sql.models import SubmitAnswer

    schema = submit_schema()
    assert list(schema["properties"]) == ["query", "explanation", "confidence"]  # query first
    assert schema["properties"]["explanation"]["maxLength"] == SHORT_EXPLANATION == 160
    assert SubmitAnswer.model_json_schema()["properties"]["explanation"]["maxLength"] == 800


def test_linking_shortens_the_bundled_questions_prompts_and_keeps_their_gold_tables():
    from casework.apps.sql.data.prompt_size import prompt_sizes

    sizes = prompt_sizes()
    assert sizes["questions"] == 30 and sizes["lost"] == 0
    assert sizes["tables_before"]["total"] == 56_313 and sizes["tables_after"]["total"] == 32_910
