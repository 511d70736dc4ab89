"""The deps every run shares: settings, the validator choice, the limits, the repository (a
run's models come in its ``RunConfig``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from casework.apps.hed.models import ValidatorKind
from casework.apps.hed.rules import MAX_TOTAL_ITERATIONS, MAX_VALIDATION_ATTEMPTS
from casework.config import Settings, get_settings
from casework.stores import open_stores

__all__ = ["HedDeps", "build_deps", "open_repository"]


@dataclass(frozen=True)
class HedDeps:
    """What the graph's steps need; tests build it with scripted models."""

    settings: Settings
    validator: ValidatorKind = "auto"
    compact_vocabulary: bool = True
    """The compact vocabulary fits the bundled model; large models can take the full one."""
    grammar: bool = True
    """The bundled model annotates under the schema's grammar (``grammar.py``); off only to
    measure what the grammar is worth."""
    draft: bool = True
    """The first annotation prompt shows the vocabulary look-up's tags as a draft."""
    short_prompt: bool = False
    """The annotation prompt shows the rules and the few schema entries the case and its
    demonstrations point to (``shortprompt.py``), not the whole vocabulary: for the bundled
    model under the grammar, which holds the answer space."""
    demonstrations: tuple[tuple[str, str], ...] = ()
    """Verified (description, annotation) pairs the annotation prompt shows in place of its
    two generic examples (the memory's nearest, for one case; empty: the generic ones)."""
    max_validation_attempts: int = MAX_VALIDATION_ATTEMPTS
    max_total_iterations: int = MAX_TOTAL_ITERATIONS
    repo: Any = None
    """A ``HedRepository`` where finished runs are stored (None: not stored)."""
    raise_errors: bool = False
    """A model error mid-run propagates (after the trace is closed) instead of ending the run
    as ``error:model``: the evaluation harness then retries transient ones (429, timeouts)."""
    extra: dict[str, Any] = field(default_factory=dict)


def open_repository(settings: Settings) -> Any:
    """The ``HedRepository`` on the settings' database (migrated on first use)."""
    from casework.apps.hed.repository import HedRepository

    return HedRepository(open_stores(settings).engine)


def build_deps(
    settings: Settings | None = None,
    *,
    validator: ValidatorKind = "auto",
    with_repo: bool = True,
    repo: Any = None,
) -> HedDeps:
    """Deps on the configured database; ``repo`` reuses an open repository (else one is
    opened when ``with_repo``)."""
    settings = settings or get_settings()
    if repo is None and with_repo:
        repo = open_repository(settings)
    return HedDeps(settings=settings, validator=validator, repo=repo)
