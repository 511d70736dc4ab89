"""Errors, grouped by who must act.

Every error a user can cause ends in one clear sentence (the CLI prints ``str(err)`` and exits
non-zero); messages name the variable, command or id that fixes it.
"""

from __future__ import annotations

__all__ = [
    "BudgetExceeded",
    "CaseworkError",
    "ConfigError",
    "InputError",
    "ModelError",
    "NotFoundError",
    "ReplayDriftError",
    "RunError",
    "SourceUnavailable",
    "StoreUnavailable",
    "ToolRetry",
]


class CaseworkError(Exception):
    """Base class of every error casework raises on purpose."""

    exit_code = 1


class ConfigError(CaseworkError):
    """Settings or set-up are wrong (missing model, bad URL, unknown provider): fix config."""

    exit_code = 2


class InputError(CaseworkError):
    """The user passed something malformed (bad path, bad SQL, invalid id format)."""

    exit_code = 2


class NotFoundError(InputError):
    """An id the user named does not exist."""


class ModelError(CaseworkError):
    """A model could not be reached or produced unusable output."""


class ReplayDriftError(CaseworkError):
    """A replayed run asked the model something the cassette did not record.

    Deliberately not a ``ModelError``: runs end cleanly on model errors, but drift must fail loudly.
    """


class RunError(CaseworkError):
    """A run failed; carries the run's identifiers for the trace."""

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class BudgetExceeded(RunError):
    """A run used up its token, cost, call or time budget."""


class ToolRetry(CaseworkError):
    """Raised inside a tool to send a correction back to the model instead of failing."""


class SourceUnavailable(CaseworkError):
    """Raised inside a tool when its data source (a store, an index, a service) cannot answer.

    The runtime turns it into an observation the model can read (``{"status": "unavailable",
    "source": ..., "reason": ...}``), never an exception that ends the run: one rule, decided
    in the runtime, for every app's tools.
    """

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source} is unavailable: {reason}")
        self.source = source
        self.reason = reason


class StoreUnavailable(CaseworkError):
    """Casework's own database file is damaged, unreadable or cannot be written: the operator
    restores it or fixes its permissions (an HTTP 503: nothing works until then)."""

    def __init__(self, message: str, *, store: str) -> None:
        super().__init__(message)
        self.store = store
        """The database file's name (no folder: what an unauthenticated answer may say)."""
