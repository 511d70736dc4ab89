"""Audits: one vanpool by a strategy (or as the Case Manager's event stream), many through
the batch seam, and which verifier a strategy's lifecycle uses."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from casework.apps.vanpool import agent, verification
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.models import CaseManagerResult, check_id
from casework.apps.vanpool.service.callers import config_or_default, deps_for
from casework.apps.vanpool.settings import VanpoolSettings
from casework.apps.vanpool.strategies import STRATEGIES, AuditInput
from casework.apps.vanpool.verification import Verifier
from casework.config import Settings
from casework.errors import CaseworkError
from casework.registry import strategy_named
from casework.runtime.batch import BatchConfig, BatchResult, run_batch
from casework.runtime.events import Event as RunEvent
from casework.runtime.runconfig import RunConfig

__all__ = [
    "AGENT_ACTOR",
    "VanpoolAuditor",
    "audit_events",
    "audit_many",
    "audit_row",
    "run_audit",
    "verifier_for",
]


AGENT_ACTOR = "case_manager_agent"


def verifier_for(strategy: str, config: RunConfig) -> tuple[Verifier, str]:
    """The lifecycle's verifier and actor for a strategy: the specialist agents (under
    ``config``) for ``agent``, the distance and overlap rules otherwise."""
    if strategy == "agent":
        return agent.verifier(config), AGENT_ACTOR
    return verification.rules_verify, verification.RULES_ACTOR


def run_audit(
    strategy: str, vanpool_id: str, deps: VanpoolDeps, config: RunConfig | None = None
) -> CaseManagerResult:
    """One vanpool's audit with a strategy of ``STRATEGIES`` by name, under ``config`` (the
    settings' by default)."""
    run = strategy_named(STRATEGIES, strategy)
    result = run(AuditInput(vanpool_id), deps_for(deps, config), config_or_default(deps, config))
    assert isinstance(result, CaseManagerResult)
    return result


def audit_events(
    deps: VanpoolDeps, vanpool_id: str, config: RunConfig | None = None
) -> Iterator[RunEvent]:
    """The Case Manager agent's audit of one vanpool as the runtime's event stream; an
    unknown vanpool raises before the first event."""
    vid = check_id("VP", vanpool_id)
    deps.repo.get_vanpool(vid)
    return agent.iter_case_manager(deps_for(deps, config), config_or_default(deps, config), vid)


def audit_row(vanpool_id: str, r: CaseManagerResult) -> dict[str, Any]:
    """One audit as a summary row (plain data: it travels back from a Ray worker)."""
    email = "-"
    if r.outreach is not None and r.outreach.message_id:
        email = "sent" if r.outreach.sent else r.outreach.verdict
    usage = r.run.usage if r.run is not None else None
    return {
        "vanpool_id": vanpool_id,
        "verdict": r.verdict,
        "failed_checks": list(r.failed_checks),
        "case_id": r.case_id,
        "email": email,
        "reasoning": r.reasoning,
        "model_calls": getattr(usage, "model_calls", 0) if usage is not None else 0,
    }


def _error_row(vanpool_id: str, error: BaseException) -> dict[str, Any]:
    if isinstance(error, CaseworkError):
        sentence = str(error)
    else:  # a bug or a lost worker: its first line, so the batch report stays one row each
        first = (str(error).strip().splitlines() or [""])[0]
        sentence = f"{type(error).__name__}: {first}".rstrip(": ")
    return {
        "vanpool_id": vanpool_id,
        "verdict": "error",
        "failed_checks": [],
        "case_id": None,
        "email": "-",
        "reasoning": sentence,
        "model_calls": 0,
    }


_deps_lock = threading.Lock()


@dataclass
class VanpoolAuditor:
    """``run_batch``'s function for ``vanpool audit --all``: a vanpool id -> its summary row.

    It pickles as its settings alone, so a Ray worker builds its own deps (store, mailer) and
    run config (models) on its first vanpool and keeps them for the rest; locally the caller's
    are shared by the worker threads."""

    strategy: str
    settings: Settings
    app: VanpoolSettings
    deps: VanpoolDeps | None = field(default=None, repr=False)
    config: RunConfig | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "deps": None, "config": None}

    def _ready(self) -> tuple[VanpoolDeps, RunConfig]:
        with _deps_lock:
            if self.deps is None:
                self.deps = build_deps(self.settings, app=self.app)
            if self.config is None:
                self.config = RunConfig.of(self.settings)
            return self.deps, self.config

    def __call__(self, vanpool_id: str) -> dict[str, Any]:
        deps, config = self._ready()
        return audit_row(vanpool_id, run_audit(self.strategy, vanpool_id, deps, config))


def audit_many(
    deps: VanpoolDeps,
    vanpool_ids: Sequence[str],
    strategy: str,
    config: BatchConfig,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    *,
    run_config: RunConfig | None = None,
) -> list[dict[str, Any]]:
    """Audit every vanpool once through the platform's batch seam (``local`` threads or
    ``ray``) under ``run_config``; one row per vanpool in the order given. A vanpool whose
    audit fails is an ``error`` row with its one sentence, and the others go on."""
    ids = list(dict.fromkeys(vanpool_ids))  # a vanpool named twice is audited once
    auditor = VanpoolAuditor(
        strategy, deps.settings, deps.app, deps, config_or_default(deps, run_config)
    )

    def row(item: BatchResult[dict[str, Any]]) -> dict[str, Any]:
        if item.value is not None:
            return item.value
        return _error_row(str(item.key), item.error or RuntimeError("no result"))

    def done(item: BatchResult[dict[str, Any]]) -> None:
        if on_done is not None:
            on_done(row(item))

    results = run_batch(ids, auditor, replace(config, progress=done), key=lambda v: v)
    return [row(r) for r in results]
