"""One deps object per run: settings, the model per role, the validator choice, the limits."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from casework.apps.hed.models import ValidatorKind
from casework.apps.hed.rules import MAX_TOTAL_ITERATIONS, MAX_VALIDATION_ATTEMPTS
from casework.config import Settings, get_settings
from casework.errors import ConfigError, InputError
from casework.runtime import ModelSource

__all__ = ["ROLES", "HedDeps", "ModelsByRole", "build_deps", "open_repository"]

# Which configured model each agent uses (``settings.models.for_role``; unset roles use default).
ROLES = {
    "annotate": "annotator",
    "evaluate": "judge",
    "assess": "judge",
    "summarize": "specialist",
    "vision": "vision",
}


@dataclass(frozen=True)
class HedDeps:
    """What the graph's steps need; tests build it with scripted models."""

    settings: Settings
    models: ModelSource
    """``models(role)`` -> chat model (roles: annotator, judge, specialist, vision)."""
    validator: ValidatorKind = "auto"
    compact_vocabulary: bool = True
    """The compact vocabulary fits the bundled model; large models can take the full one."""
    grammar: bool = True
    """The bundled model annotates under the schema's grammar (``grammar.py``); off only to
    measure what the grammar is worth."""
    draft: bool = True
    """The first annotation prompt shows the vocabulary look-up's tags as a draft."""
    max_validation_attempts: int = MAX_VALIDATION_ATTEMPTS
    max_total_iterations: int = MAX_TOTAL_ITERATIONS
    repo: Any = None
    """A ``HedRepository`` where finished runs are stored (None: not stored)."""
    raise_errors: bool = False
    """A model error mid-run propagates (after the trace is closed) instead of ending the run
    as ``error:model``: the evaluation harness then retries transient ones (429, timeouts)."""
    extra: dict[str, Any] = field(default_factory=dict)


class ModelsByRole:
    """Resolves each role's model once and reuses it (the bundled model loads once anyway).

    ``api_key`` is a caller's own provider key (BYOK, from a request header): it is handed to
    the provider client of ``override`` (and of a vision model on the same provider) and kept
    only as a ``SecretStr`` in memory for this object's life: never stored, logged or traced.
    """

    def __init__(
        self,
        settings: Settings,
        override: str | None,
        vision: str | None = None,
        *,
        api_key: str | None = None,
    ) -> None:
        self.settings = settings
        self.override = override
        self.vision = vision
        self._api_key = SecretStr(api_key) if api_key else None
        if self._api_key is not None and not override:
            raise InputError(
                "A provider key needs the model it is for: name it (provider:name) with the key."
            )
        self._models: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"ModelsByRole(override={self.override!r}, vision={self.vision!r})"

    def spec(self, role: str) -> str:
        if role == ROLES["vision"]:
            # A text-only default must not be sent an image: vision needs its own setting.
            vision = self.vision or self.settings.models.vision
            if not vision:
                raise ConfigError(
                    "No vision model is configured; pass --vision-model (e.g. "
                    "openrouter:qwen/qwen2.5-vl-72b-instruct or ollama:llava) or set models.vision."
                )
            return vision
        return self.override or self.settings.models.for_role(role)

    def _key_for(self, spec: str) -> str | None:
        if self._api_key is None or self.override is None:
            return None
        if spec.partition(":")[0] != self.override.partition(":")[0]:
            return None
        return self._api_key.get_secret_value()

    def __call__(self, role: str) -> BaseChatModel:
        from casework.llm import resolve_model

        with self._lock:
            if role not in self._models:
                spec = self.spec(role)
                key = self._key_for(spec)
                extra = {"api_key": key} if key else {}
                self._models[role] = resolve_model(spec, settings=self.settings, **extra)
            return self._models[role]


def open_repository(settings: Settings) -> Any:
    """The ``HedRepository`` on the settings' database (migrated)."""
    from casework.apps.hed.repository import HedRepository
    from casework.stores.sql import get_engine, migrate

    engine = get_engine(settings.db_url)
    migrate(engine)
    return HedRepository(engine)


def build_deps(
    settings: Settings | None = None,
    *,
    model: str | None = None,
    vision_model: str | None = None,
    api_key: str | None = None,
    validator: ValidatorKind = "auto",
    with_repo: bool = True,
    repo: Any = None,
) -> HedDeps:
    """Deps on the configured models and database; ``model`` overrides every text role
    (``--model``), ``vision_model`` the vision role, ``api_key`` is the caller's own key for
    ``model``'s provider. ``repo`` reuses an open repository (else one is opened when
    ``with_repo``)."""
    settings = settings or get_settings()
    if repo is None and with_repo:
        repo = open_repository(settings)
    return HedDeps(
        settings=settings,
        models=ModelsByRole(settings, model, vision_model, api_key=api_key),
        validator=validator,
        repo=repo,
    )
