"""Runs started from the UI: a small thread pool runs each provider's event iterator and
persists every event with its sequence number, so followers can re-attach at any point."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from casework.runtime.context import Caller
from casework.runtime.events import Event
from casework.runtime.review_provider import ReviewProvider
from casework.web.store import RunRecord, RunStore

__all__ = ["RunManager"]

log = logging.getLogger(__name__)

MAX_PARALLEL_RUNS = 2
"""The machines have two cores; more runs at once only queue on the model."""


class RunManager:
    def __init__(self, store: RunStore, *, workers: int = MAX_PARALLEL_RUNS) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="casework-web-run")

    def start(self, provider: ReviewProvider, params: dict[str, str], caller: Caller) -> RunRecord:
        """Validate and start one run (``InputError`` before anything is stored)."""
        events = provider.start_run(params, caller)
        title = ", ".join(f"{k}={v}" for k, v in params.items())
        record = self.store.create(provider.app, title, caller.name, params)
        self._pool.submit(self._drive, record.id, events)
        return record

    def _drive(self, run_id: str, events: Iterator[Event]) -> None:
        seq = 0
        items: list[str] = []
        status = "done"
        try:
            for event in events:
                seq += 1
                self.store.append(run_id, seq, event)
                if event.get("type") == "complete":
                    items = [str(i) for i in event.get("items", [])]
        except Exception as exc:  # the run failed: say so in its stream, never lose the row
            log.exception("web run %s failed", run_id)
            status = "failed"
            seq += 1
            error: dict[str, Any] = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
            self.store.append(run_id, seq, error)
        self.store.finish(run_id, status, items)
