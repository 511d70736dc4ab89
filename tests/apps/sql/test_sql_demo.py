"""``casework sql demo`` on a fresh home with a scripted model."""

from __future__ import annotations

from rich.console import Console

from casework.apps.sql.demo import DEMO_QUERY, run_demo
from casework.llm import RoleModels, ScriptedChatModel, call


def test_demo_builds_the_database_and_answers(settings):
    model = ScriptedChatModel(
        steps=[call("submit_answer", query=DEMO_QUERY, explanation="x", confidence=0.8)]
    )
    console = Console(record=True, width=200)
    run_demo(console, models=RoleModels.given(model))
    text = console.export_text()
    assert (settings.home / "sql" / "security.sqlite").is_file()
    assert "DATETIME(CURRENT_TIMESTAMP, '-30 days')" in text
    assert "Did you mean users.username, users.full_name?" in text
    assert "no query, The request would change or delete data" in text
    assert "confidence 0.80 (validation), 1 model calls" in text
    model.assert_exhausted()
