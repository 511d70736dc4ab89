"""One deps object per run: settings, the model per role, the validator choice, the limits."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from casework.apps.hed.rules import MAX_TOTAL_ITERATIONS, MAX_VALIDATION_ATTEMPTS
from casework.apps.hed.validation import ValidatorKind
from casework.config import Settings, get_settings
from casework.errors import ConfigError
from casework.runtime import ModelSource

__all__ = ["ROLES", "HedDeps", "build_deps"]

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
    max_validation_attempts: int = MAX_VALIDATION_ATTEMPTS
    max_total_iterations: int = MAX_TOTAL_ITERATIONS
    repo: Any = None
    """A ``HedRepository`` where finished runs are stored (None: not stored)."""
    extra: dict[str, Any] = field(default_factory=dict)


class _ModelsByRole:
    """Resolves each role's model once and reuses it (the bundled model loads once anyway)."""

    def __init__(self, settings: Settings, override: str | None, vision: str | None = None) -> None:
        self.settings = settings
        self.override = override
        self.vision = vision
        self._models: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()

    def spec(self, role: str) -> str:
        if role == ROLES["vision"]:
            # A text-only default must not be sent an image: vision needs its own setting.
            vision = self.vision or getattr(self.settings.models, "vision", None)
            if not vision:
                raise ConfigError(
                    "No vision model is configured; pass --vision-model (e.g. "
                    "openrouter:qwen/qwen2.5-vl-72b-instruct or ollama:llava) or set models.vision."
                )
            return vision
        return self.override or self.settings.models.for_role(role)

    def __call__(self, role: str) -> BaseChatModel:
        from casework.llm import resolve_model

        with self._lock:
            if role not in self._models:
                self._models[role] = resolve_model(self.spec(role), settings=self.settings)
            return self._models[role]


def build_deps(
    settings: Settings | None = None,
    *,
    model: str | None = None,
    vision_model: str | None = None,
    validator: ValidatorKind = "auto",
    with_repo: bool = True,
) -> HedDeps:
    """Deps on the configured models and database; ``model`` overrides every text role
    (``--model``), ``vision_model`` the vision role."""
    settings = settings or get_settings()
    repo = None
    if with_repo:
        from casework.apps.hed.repository import HedRepository
        from casework.stores.sql import get_engine, migrate

        engine = get_engine(settings.db_url)
        migrate(engine)
        repo = HedRepository(engine)
    return HedDeps(
        settings=settings,
        models=_ModelsByRole(settings, model, vision_model),
        validator=validator,
        repo=repo,
    )
