"""What every vanpool command shares: the deps (at a pretended time), the run config, the
``--now`` and ``--strategy`` values checked before anything runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from casework.errors import InputError
from casework.registry import strategy_named

__all__ = ["STRATEGY_HELP", "checked_strategy", "open_deps", "parse_now", "run_config"]


STRATEGY_HELP = (
    "cascade (the rules; a reply without a cue word goes to the bundled model's bucket choice; "
    "a remote model only when one is configured), rules (no model) or agent (Case Manager and "
    "specialists on the configured models)."
)


def open_deps(now: datetime | None = None) -> Any:
    from casework.apps.vanpool.deps import build_deps

    deps = build_deps()
    return deps.at(now) if now else deps


def run_config(deps: Any) -> Any:
    """The run config of a command: the settings' models, traces and budgets."""
    from casework.runtime.runconfig import RunConfig

    return RunConfig.of(deps.settings)


def parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(
            f"--now {value!r} is not an ISO date-time (e.g. 2026-12-01T09:00)."
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def checked_strategy(name: str) -> str:
    from casework.apps.vanpool.service import STRATEGIES

    strategy_named(STRATEGIES, name)  # refused before anything runs
    return name
