"""The bundled model drives a two-tool ReAct run to a parsed decision, offline."""

import pytest

from casework.llm import resolve_model
from casework.smoke import OrderRef, build_smoke_agent

pytestmark = [pytest.mark.slow, pytest.mark.local_model]


def test_local_model_two_tool_react_run(tmp_path):
    agent = build_smoke_agent(resolve_model("local:qwen2.5-coder-1.5b"), trace_dir=tmp_path)
    result = agent.run(
        "Order A-1002: the customer claims it was delivered. Check the order status and the "
        "customer, then submit your decision on whether the delivery claim is VALID.",
        context=OrderRef("A-1002"),
    )
    assert result.ended_by == "submit", result.ended_by
    assert result.decision.verdict in {"VALID", "INVALID", "NEEDS_REVIEW"}
    assert 0 <= result.decision.confidence <= 100 and result.decision.reasoning
    assert "get_order_status" in result.tool_names
    assert result.tool_names[-1] == "submit_decision"
    assert result.usage.model_calls >= 2 and result.usage.input_tokens > 0
    assert result.trace_path and result.trace_path.exists()
