"""Who a service call acts for: the deps writing as the run's caller, and the run config
(the settings' when the caller gives none)."""

from __future__ import annotations

from casework.apps.vanpool.deps import VanpoolDeps
from casework.runtime.context import caller_name
from casework.runtime.runconfig import RunConfig

__all__ = ["config_or_default", "deps_for"]


def config_or_default(deps: VanpoolDeps, config: RunConfig | None) -> RunConfig:
    """The run config a caller gave, else the settings' (what the agents run under)."""
    return config or RunConfig.of(deps.settings)


def deps_for(deps: VanpoolDeps, config: RunConfig | None) -> VanpoolDeps:
    """``deps`` writing for the run's caller (a signed-in user); the local operator's own
    deps (``cli:<os user>``) when the run names none."""
    if config is None or config.caller is None:
        return deps
    return deps.by(caller_name(config.caller))
