"""Subprocess body for test_exactly_once: a graph node sends a message through the journal,
and the process can be killed (os._exit) between the journal's intent and its completion.

argv: WORKDIR MODE RECONCILE. MODE: ``die-before`` (killed before the provider got the
message), ``die-after`` (killed after the provider stored it) or ``resume`` (a new process
resumes the thread from its checkpoint). RECONCILE: ``yes`` passes the provider check.
The "provider" is a SQLite outbox that dedupes on the idempotency key, as an SMTP relay or
an API with Idempotency-Key does; ``deliveries`` logs every time the effect function ran.
"""

import os
import sqlite3
import sys
from pathlib import Path

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from casework.runtime.approvals import SideEffectJournal, effect_key
from casework.runtime.checkpoint import sqlite_checkpointer
from casework.stores.sql import get_engine, migrate

work, mode, use_reconcile = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "yes"
provider = sqlite3.connect(work / "provider.db", isolation_level=None)
provider.execute("CREATE TABLE IF NOT EXISTS outbox (key TEXT PRIMARY KEY, body TEXT)")
provider.execute("CREATE TABLE IF NOT EXISTS deliveries (key TEXT)")
engine = get_engine(f"sqlite:///{work}/journal.db")
migrate(engine)
journal = SideEffectJournal(engine)


def send(key: str) -> str:
    provider.execute("INSERT INTO deliveries VALUES (?)", (key,))
    if mode == "die-before":
        os._exit(17)
    provider.execute("INSERT OR IGNORE INTO outbox VALUES (?, ?)", (key, "case closed"))
    if mode == "die-after":
        os._exit(17)
    return f"sent {key}"


def sent_already(key: str) -> str | None:
    row = provider.execute("SELECT key FROM outbox WHERE key = ?", (key,)).fetchone()
    return f"sent {key}" if row else None


class State(TypedDict, total=False):
    to: str
    receipt: str


def notify(state: State, config) -> State:
    args = {"to": state["to"]}
    key = effect_key(config["configurable"]["thread_id"], "notify", args)
    receipt = journal.once(
        key,
        send,
        reconcile=sent_already if use_reconcile else None,
        action="notify",
        args=args,
    )
    return {"receipt": receipt}


graph = StateGraph(State)
graph.add_node("notify", notify)
graph.add_edge(START, "notify")
graph.add_edge("notify", END)
app = graph.compile(checkpointer=sqlite_checkpointer(work / "ckpt.sqlite"))
cfg = {"configurable": {"thread_id": "case-7"}}
if mode == "resume":
    final = app.invoke(None, cfg, durability="sync")
    entry = journal.entry(effect_key("case-7", "notify", {"to": "c@x.org"}))
    print(final["receipt"], entry.status, entry.attempts, entry.completed_by)
else:
    app.invoke({"to": "c@x.org"}, cfg, durability="sync")
