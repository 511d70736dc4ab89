"""One validation end to end with the bundled local model (slow: ~10-60 s on 2 cores)."""

from __future__ import annotations

import pytest

from casework.apps.receipts.service import make_validator


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_validates_a_word_end_to_end(seeded, ref):
    pytest.importorskip("xllamacpp")
    validator = make_validator("agent", seeded, model="local:qwen2.5-coder-1.5b")
    # "05/02/2026" suggested as TIME: the word context says a date-shaped word cannot be TIME.
    result = validator.validate(ref("bluebottle", 7, 1, "TIME"))
    run = validator.last_run
    assert run.ended_by == "submit", run.ended_by  # a real decision, not the fallback
    assert result.tool_calls[0] == "get_word_context" and result.tool_calls[-1] == "submit_decision"
    assert len(result.tool_calls) <= 6
    assert result.decision in ("VALID", "INVALID", "NEEDS_REVIEW") and 0 <= result.confidence <= 100
    assert result.policy_applied == (result.raw_decision != result.decision)
    assert result.model == "local:qwen2.5-coder-1.5b" and result.input_tokens > 0
    assert result.reasoning
    assert result.decision != "VALID"  # the one thing a validator must not do here
