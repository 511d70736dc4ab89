"""The app demo: seeds, validates two words with the baseline and one with the agent."""

from __future__ import annotations

from rich.console import Console

from casework.apps.receipts.demo import run_demo
from casework.config import get_settings
from casework.llm import ScriptedChatModel, call


def test_demo_prints_three_decisions(seeded, seeded_home, monkeypatch):
    monkeypatch.setenv("CASEWORK_HOME", str(seeded_home))
    get_settings.cache_clear()
    try:
        model = ScriptedChatModel(
            steps=[
                call("get_word_context"),
                call("submit_decision", verdict="INVALID", confidence=90, reasoning="gallons"),
            ]
        )
        console = Console(record=True, width=200)
        run_demo(console, model=model)
        text = console.export_text()
    finally:
        get_settings.cache_clear()
    assert "12 receipts (0 new)" in text
    assert "'303.83' as GRAND_TOTAL: VALID" in text
    assert "'14.00' as UNIT_PRICE: NEEDS_REVIEW" in text
    assert "'12.417' as LINE_TOTAL: INVALID 90% by agent" in text
    # the default, the cascade: its rules settle what the neighbour vote could not, no model
    assert "'14.00' as UNIT_PRICE: INVALID 80% by cascade, decided by its rules layer" in text
