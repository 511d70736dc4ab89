"""The bundled model drives a two-tool ReAct run to the right decision, offline.

The case is unambiguous on purpose: order A-1001 is delivered, the claim says it was, and
the system prompt says VALID when the status supports the claim. A wrong verdict, a skipped
lookup or a run that ends without a submit fails the test.
"""

import pytest

from casework.llm import resolve_model
from casework.llm.roles import RoleModels
from casework.runtime import EndReason
from casework.runtime.runconfig import RunConfig
from casework.runtime.traces import read_trace
from casework.smoke import OrderRef, build_smoke_agent

pytestmark = [pytest.mark.slow, pytest.mark.local_model]


def test_local_model_looks_the_order_up_and_decides_valid(tmp_path):
    agent = build_smoke_agent(
        RunConfig(
            models=RoleModels.given(resolve_model("local:qwen2.5-coder-1.5b")), traces=tmp_path
        )
    )
    result = agent.run(
        "Order A-1001: the customer says the order was delivered. Look up the order status, "
        "then submit your decision on whether the delivery claim is VALID.",
        context=OrderRef("A-1001"),
    )
    assert result.ended_by is EndReason.SUBMIT, (result.ended_by, result.detail)
    assert result.decision.verdict == "VALID", result.decision
    assert result.tool_names[0] == "get_order_status"
    assert result.tool_names[-1] == "submit_decision"
    assert all(call.ok for call in result.tool_calls)
    lookup = result.tool_calls[0]
    assert '"status": "delivered"' in lookup.output or "'status': 'delivered'" in lookup.output
    assert result.usage.model_calls == len(result.tool_calls)  # one call per turn, no retries
    trace = read_trace(result.trace_path)
    assert [r["tool"] for r in trace if r["type"] == "tool"] == result.tool_names
