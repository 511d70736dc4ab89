"""One validation end to end with the bundled local model (slow: ~10-60 s on 2 cores)."""

from __future__ import annotations

import pytest

from casework.apps.receipts.models import LabelInput
from casework.apps.receipts.strategies import agent
from casework.runtime import RunConfig
from casework.runtime.decision import EndReason


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_validates_a_word_end_to_end(seeded):
    pytest.importorskip("xllamacpp")
    config = RunConfig.of(seeded.settings, "local:qwen2.5-coder-1.5b")
    # "05/02/2026" suggested as TIME: the word context says a date-shaped word cannot be TIME.
    request = LabelInput(receipt="bluebottle", line_id=7, word_id=1, suggested_label="TIME")
    result = agent(request, seeded, config)
    run = result.run
    assert run.ended_by == EndReason.SUBMIT, run.detail  # a real decision, not the fallback
    assert run.tool_names[0] == "get_word_context" and run.tool_names[-1] == "submit_decision"
    assert len(run.tool_names) <= 6
    assert result.policy_applied == (result.raw_verdict != result.verdict)
    assert run.usage.input_tokens > 0 and result.reasoning
    assert result.verdict != "VALID"  # the one thing a validator must not do here
