"""One easy question end to end with the bundled local model (slow: minutes on a busy CPU)."""

from __future__ import annotations

import pytest

from casework.apps.sql.agent import run_single_pass
from casework.apps.sql.benchmark import gold_and_predicted
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.metrics import execution_match
from casework.apps.sql.service import execute_validated
from casework.llm import RoleModels, resolve_model
from casework.runtime import RunConfig


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_answers_an_easy_question_that_executes_correctly(
    security, security_db, settings
):
    pytest.importorskip("xllamacpp")
    from casework.config import get_settings

    model = resolve_model("local:qwen2.5-coder-1.5b", settings=get_settings())
    deps = SQLDeps(schema=security, settings=settings, db_url=security_db)
    deps = deps.with_config(retrieval_type="keyword", top_k=2)
    config = RunConfig(models=RoleModels.given(model))
    response = run_single_pass(deps, config, "How many alerts are critical?", "keyword").decision
    assert response.ended_by == "submit", response.ended_by
    assert response.valid, response.validation_errors
    assert response.tables_used == ["alerts"]
    expected = {"sql": "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'", "ordered": False}
    out = gold_and_predicted(deps, expected["sql"], response.query, execute=execute_validated)
    assert execution_match(expected, out) is True, (response.query, out)
    assert 0 < response.confidence <= 1 and response.confidence_source == "validation"
