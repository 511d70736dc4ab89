"""A recorded run: its events stored one by one under a run id (the spec's flat events plus
a sequence number) as ``work`` emits them, in its own thread, so it goes on when no client
listens; the last event is ``{complete, ...}``, also when the work failed."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from casework.apps.documents.repository import (
    DocumentsRepository,
)
from casework.errors import CaseworkError


@dataclass(frozen=True)
class RunHandle:
    run_id: str
    extraction_id: int | None
    thread: threading.Thread | None


class RunRecorder:
    def __init__(self, repo: DocumentsRepository, run_id: str) -> None:
        self.repo, self.run_id, self.seq = repo, run_id, 0
        self.lock = threading.Lock()

    def emit(self, data: dict[str, Any]) -> None:
        with self.lock:
            self.seq += 1
            self.repo.append_event(self.run_id, self.seq, data)


def start_run(
    repo: DocumentsRepository,
    user_id: int,
    kind: str,
    work: Callable[[Callable[[dict[str, Any]], None]], Any],
    *,
    complete: Callable[[Any], dict[str, Any]],
    extraction_id: int | None = None,
    stack_id: int | None = None,
    background: bool = True,
) -> RunHandle:
    """Record ``work(emit)``'s events under a new run id; the last event is ``{complete, ...}``."""
    run_id = uuid.uuid4().hex[:16]
    repo.create_run(user_id, run_id, kind, extraction_id=extraction_id, stack_id=stack_id)
    recorder = RunRecorder(repo, run_id)

    def body() -> None:
        cost = 0.0
        try:
            outcome = work(recorder.emit)
            final = complete(outcome)
            cost = float(final.get("cost") or 0.0)
        except CaseworkError as exc:
            final = {"complete": True, "error": str(exc)}
            if extraction_id is not None:
                final["extraction_id"] = extraction_id
        except Exception as exc:  # a bug must still close the stream, not hang the client
            final = {"complete": True, "error": f"{type(exc).__name__}: {exc}"}
        recorder.emit(final)
        repo.finish_run(run_id, cost)

    if not background:
        body()
        return RunHandle(run_id, extraction_id, None)
    thread = threading.Thread(target=body, name=f"documents-run-{run_id}", daemon=True)
    thread.start()
    return RunHandle(run_id, extraction_id, thread)
