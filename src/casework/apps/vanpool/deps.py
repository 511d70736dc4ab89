"""The deps every run shares: repository, distance provider, mailer, journal, clock (a run's
models come in its ``RunConfig``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from casework.apps.vanpool.geography import DistanceProvider, GreatCircleDistance
from casework.apps.vanpool.mail import Mailer, SmtpMailer
from casework.apps.vanpool.repository import VanpoolRepository
from casework.apps.vanpool.settings import VanpoolSettings
from casework.config import Settings, get_settings
from casework.runtime.approvals import SideEffectJournal
from casework.runtime.context import caller_name
from casework.stores import open_stores

__all__ = ["VanpoolDeps", "build_deps", "system_clock"]


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class VanpoolDeps:
    repo: VanpoolRepository
    settings: Settings
    app: VanpoolSettings
    distance: DistanceProvider
    mailer: Mailer
    journal: SideEffectJournal
    clock: Callable[[], datetime] = system_clock
    checkpointer: Any = None
    """A LangGraph checkpointer for agent runs that may pause for approval (durable)."""

    def now(self) -> datetime:
        return self.clock()

    def by(self, caller: str) -> VanpoolDeps:
        """The same deps writing for ``caller`` (every audit row names them)."""
        return replace(self, repo=self.repo.by(caller))

    def at(self, now: datetime) -> VanpoolDeps:
        """The same deps with the clock fixed at ``now`` (``vanpool tick --now``)."""
        return replace(self, clock=lambda: now)


def build_deps(
    settings: Settings | None = None,
    *,
    app: VanpoolSettings | None = None,
    mailer: Mailer | None = None,
    distance: DistanceProvider | None = None,
    clock: Callable[[], datetime] | None = None,
    checkpointer: Any = None,
    run_migrations: bool = True,
    caller: str | None = None,
) -> VanpoolDeps:
    """Deps on the configured stores (migrated on first use), writing for ``caller`` (the
    local operator, ``cli:<os user>``, by default; the service writes for each run's caller)."""
    settings = settings or get_settings()
    app = app or VanpoolSettings()
    engine = open_stores(settings, run_migrations=run_migrations).engine
    return VanpoolDeps(
        repo=VanpoolRepository(engine, caller or caller_name(None)),
        settings=settings,
        app=app,
        distance=distance or GreatCircleDistance(),
        mailer=mailer or SmtpMailer(app),
        journal=SideEffectJournal(engine),
        clock=clock or system_clock,
        checkpointer=checkpointer,
    )
