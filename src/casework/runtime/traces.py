"""JSONL run traces: one line per event, with a start and an end record.

A trace is for reading and for the eval reports (``read_trace``); deterministic replay of
the model lives in ``casework.llm.replay``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict

from casework.redact import scrub
from casework.runtime.events import Event, to_json

__all__ = ["TraceWriter", "read_trace"]


def _safe(obj: Any) -> Any:
    if isinstance(obj, dict) and "messages" in obj and isinstance(obj["messages"], list):
        msgs = obj["messages"]
        if all(isinstance(m, BaseMessage) for m in msgs):
            return {**obj, "messages": messages_to_dict(msgs)}
    return obj


class TraceWriter:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._t0 = time.perf_counter()
        self._fh = path.open("a", encoding="utf-8")

    def _write(self, record: dict[str, Any]) -> None:
        # No flush per record: the file's buffer writes in blocks and ``end`` closes it, so a
        # step costs no system call (a run that crashes still has its buffer flushed on exit).
        record.setdefault("t", round(time.perf_counter() - self._t0, 4))
        self._fh.write(scrub(json.dumps(record, default=str)) + "\n")

    def start(self, **fields: Any) -> None:
        fields["payload"] = _safe(fields.get("payload"))
        self._write({"type": "run_start", "ts": time.time(), **fields})

    def event(self, event: Event) -> None:
        self._write(dict(to_json(event)))

    def end(self, result: Any) -> None:
        record = to_json({"type": "complete", "result": result})
        record["type"] = "run_end"
        record["messages"] = messages_to_dict(result.messages)
        self._write(record)
        self._fh.close()


def read_trace(path: Path) -> list[dict[str, Any]]:
    """All records of a trace file, in order."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
