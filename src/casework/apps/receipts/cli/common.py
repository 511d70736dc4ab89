"""What every receipts command shares: the console, the deps on the configured stores, the
run config of a command, and escaping a word for Rich markup."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

__all__ = ["console", "esc", "open_deps", "run_config"]

# Piped output (README examples, CI logs) gets 120 columns rather than Rich's 80.
console = Console(width=None if sys.stdout.isatty() else 120)


def open_deps(*, with_vectors: bool = True) -> Any:
    """Deps on the configured stores."""
    from casework.apps.receipts.deps import build_deps
    from casework.config import get_settings

    return build_deps(get_settings(), with_vectors=with_vectors)


def run_config(deps: Any, model: str | None) -> Any:
    """The run config of a command: ``model`` (provider:name) for every model role."""
    from casework.runtime.runconfig import RunConfig

    return RunConfig.of(deps.settings, model)


def esc(text: str) -> str:
    return text.replace("[", r"\[")
