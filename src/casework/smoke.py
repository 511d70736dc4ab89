"""A two-tool ReAct agent over an in-memory order book: the platform's smoke run.

Used by ``casework demo`` (before any app demo) and by the local-model tests. The order id
travels in the run context; the tools read it from there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain.tools import ToolRuntime, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import BaseModel, Field

from casework.config import Limits
from casework.runtime.react import ReactAgent
from casework.runtime.runconfig import RunConfig

__all__ = ["ORDERS", "OrderRef", "SmokeDecision", "build_smoke_agent"]

ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {
        "status": "delivered",
        "carrier": "UPS",
        "delivered_on": "2026-11-18",
        "customer": "C-7",
    },
    "A-1002": {"status": "in transit", "carrier": "USPS", "delivered_on": None, "customer": "C-9"},
}
CUSTOMERS: dict[str, dict[str, Any]] = {
    "C-7": {"name": "Dana Ruiz", "open_claims": 0},
    "C-9": {"name": "Lee Park", "open_claims": 3},
}


@dataclass(frozen=True)
class OrderRef:
    order_id: str = "A-1001"


class SmokeDecision(BaseModel):
    """Your decision on the claim."""

    verdict: Literal["VALID", "INVALID", "NEEDS_REVIEW"] = Field(
        description="VALID, INVALID or NEEDS_REVIEW."
    )
    confidence: float = Field(ge=0, le=100, description="0 to 100.")
    reasoning: str = Field(max_length=300, description="One or two sentences.")


@tool
def get_order_status(runtime: ToolRuntime[OrderRef]) -> dict[str, Any]:
    """Get the shipping status of the order under review."""
    return {"order_id": runtime.context.order_id, **ORDERS[runtime.context.order_id]}


@tool
def get_customer(runtime: ToolRuntime[OrderRef]) -> dict[str, Any]:
    """Get the customer of the order under review and their open claims."""
    customer = ORDERS[runtime.context.order_id]["customer"]
    return {"customer_id": customer, **CUSTOMERS[customer]}


SMOKE_LIMITS = Limits(max_model_calls=5, max_tool_calls=6, recursion_limit=20)

SYSTEM = (
    "You check delivery claims. Use the tools to look up the order, then call submit_decision "
    "with VALID if the order status supports the claim, INVALID if it contradicts it."
)


def build_smoke_agent(
    config: RunConfig, *, checkpointer: BaseCheckpointSaver[Any] | None = None
) -> ReactAgent[SmokeDecision]:
    """The smoke agent on ``config``'s default model, its trace in ``config.traces``."""
    return ReactAgent(
        config=replace(config, limits=SMOKE_LIMITS),
        role="default",
        tools=[get_order_status, get_customer],
        decision_model=SmokeDecision,
        system_prompt=SYSTEM,
        name="smoke",
        context_schema=OrderRef,
        checkpointer=checkpointer,
    )
