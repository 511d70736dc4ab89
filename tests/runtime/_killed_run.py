"""Subprocess body for test_checkpoint_resume: dies (os._exit) in the middle of a run."""

import os
import sys

from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime.checkpoint import sqlite_checkpointer
from casework.runtime.runconfig import RunConfig
from casework.smoke import OrderRef, build_smoke_agent


def responder(messages, tools):
    done = sum(m.type == "tool" for m in messages)
    if done == 0:
        return call("get_order_status")
    if done == 1:
        if sys.argv[2] == "die":
            os._exit(17)  # the process is killed after step 1 was checkpointed
        return call("get_customer")
    return call("submit_decision", verdict="VALID", confidence=90, reasoning="delivered, no claims")


agent = build_smoke_agent(
    RunConfig(models=RoleModels.given(ScriptedChatModel(responder=responder))),
    checkpointer=sqlite_checkpointer(__import__("pathlib").Path(sys.argv[1])),
)
if sys.argv[2] == "die":
    agent.run("check A-1001", context=OrderRef("A-1001"), thread_id="killed", trace=False)
else:
    state = agent.graph.get_state({"configurable": {"thread_id": "killed"}})
    print("resumed-from", len(state.values["messages"]))
    result = agent.run(None, context=OrderRef("A-1001"), thread_id="killed", trace=False)
    print(result.ended_by, result.decision.verdict, ",".join(result.tool_names))
