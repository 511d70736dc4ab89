"""Which chat model each role of a run gets: ``RoleModels``, the one model source.

A role is what a model does in a run (``specialist``, ``judge``, ``orchestrator``, ...: the
fields of ``casework.config.Models``). ``RoleModels(settings)`` answers with each role's
configured model; ``override`` (``--model``, a request's model) replaces every role but two:
a cascade's cheap layer (``local``) stays on ``settings.models.local``, and ``vision`` needs a
vision-capable model of its own (``vision``, else ``settings.models.vision``). Each role's
model is resolved once, on first use. ``name(role)`` is the ``provider:name`` the run used:
what its ``RunInfo.model`` says, and what calibrations and cascade policies are stored under.

``api_key`` is a caller's own provider key (BYOK, from a request header): it is handed to the
provider client of ``override`` (and of a vision model on the same provider) and kept only as
a ``SecretStr`` for this object's life: never stored, logged, traced or shown in its repr.

Models handed in as objects (tests' scripted models, a demo's) go through
``RoleModels.given``; the evaluation harness subclasses ``RoleModels`` and overrides
``resolve`` and ``name`` to record or replay each case's calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from casework.config import Settings, get_settings
from casework.errors import ConfigError, InputError
from casework.llm.resolve import resolve_model

__all__ = ["LOCAL_ROLE", "VISION_ROLE", "RoleModels", "model_name"]

LOCAL_ROLE = "local"
"""The model role of a cascade's cheap model layer: ``settings.models.local`` (the bundled
model by default), which an override does not replace."""
VISION_ROLE = "vision"
"""Image describers: never a text model's default (the bundled model reads no images)."""


def model_name(model: Any) -> str:
    """A chat model object's own name (``model_name``, ``model`` or ``name``), else its class
    name: the name of a model that was handed in rather than resolved from a spec."""
    for attr in ("model_name", "model", "name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


class RoleModels:
    """``models(role)`` -> the chat model of ``role``, resolved once per role (thread-safe)."""

    def __init__(
        self,
        settings: Settings,
        override: str | None = None,
        *,
        vision: str | None = None,
        api_key: str | None = None,
        roles: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.override = override
        self.vision = vision
        self.roles = dict(roles or {})
        """Specs for named roles (``{"judge": "openai:gpt-4o"}``), before ``override``."""
        self._api_key = SecretStr(api_key) if api_key else None
        if self._api_key is not None and not override:
            raise InputError(
                "A provider key needs the model it is for: name it (provider:name) with the key."
            )
        self._models: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(override={self.override!r}, vision={self.vision!r})"

    def spec(self, role: str) -> str:
        """The ``provider:name`` configured for ``role`` (nothing is resolved)."""
        if role == LOCAL_ROLE:
            return self.settings.models.local
        if role == VISION_ROLE:
            vision = self.vision or self.settings.models.vision
            if not vision:
                raise ConfigError(
                    "No vision model is configured; pass --vision-model (e.g. "
                    "openrouter:qwen/qwen2.5-vl-72b-instruct or ollama:llava) or set models.vision."
                )
            return vision
        return self.roles.get(role) or self.override or self.settings.models.for_role(role)

    def name(self, role: str) -> str:
        """The model a run of ``role`` used, as its ``RunInfo.model`` names it."""
        return self.spec(role)

    def __call__(self, role: str) -> BaseChatModel:
        with self._lock:
            model = self._models.get(role)
            if model is None:
                model = self._models[role] = self.resolve(role)
            return model

    def resolve(self, role: str) -> BaseChatModel:
        """A new model for ``role`` (``__call__`` keeps it); the harness overrides this."""
        return self.resolve_spec(self.spec(role))

    def resolve_spec(self, spec: str) -> BaseChatModel:
        """A new model for ``spec`` under these settings and key (the evaluation's model
        cache keys its models by spec, so roles on one model share it)."""
        key = self._key_for(spec)
        return resolve_model(spec, settings=self.settings, **({"api_key": key} if key else {}))

    def _key_for(self, spec: str) -> str | None:
        if self._api_key is None or self.override is None:
            return None
        if spec.partition(":")[0] != self.override.partition(":")[0]:
            return None
        return self._api_key.get_secret_value()

    def routed(self, routes: Mapping[str, str]) -> RoleModels:
        """These models with each role of ``routes`` served by another role's model (hed's
        cascade runs its annotator on ``local``): ``routed({"annotator": LOCAL_ROLE})``."""
        return _Routed(self, dict(routes))

    @classmethod
    def given(
        cls,
        models: BaseChatModel | Mapping[str, BaseChatModel] | Callable[[str], BaseChatModel],
        *,
        settings: Settings | None = None,
    ) -> RoleModels:
        """Models handed in as objects: one for every role, one per role (``default`` for
        the others), or a function of the role. Each is named by its own ``model_name``."""
        if isinstance(models, BaseChatModel):
            one = models
            source: Callable[[str], BaseChatModel] = lambda role: one  # noqa: E731
        elif isinstance(models, Mapping):
            table = dict(models)

            def source(role: str) -> BaseChatModel:
                found = table.get(role) or table.get("default")
                if found is None:
                    raise ConfigError(f"No model was given for the {role} role.")
                return found

        else:
            source = models
        return _Given(settings or get_settings(), source)


class _Given(RoleModels):
    def __init__(self, settings: Settings, source: Callable[[str], BaseChatModel]) -> None:
        super().__init__(settings)
        self._source = source

    def __repr__(self) -> str:
        return "RoleModels.given(...)"

    def spec(self, role: str) -> str:
        return model_name(self(role))

    def resolve(self, role: str) -> BaseChatModel:
        return self._source(role)


class _Routed(RoleModels):
    def __init__(self, inner: RoleModels, routes: dict[str, str]) -> None:
        super().__init__(inner.settings, inner.override, vision=inner.vision)
        self._inner = inner
        self._routes = routes

    def __repr__(self) -> str:
        return f"{self._inner!r}.routed({self._routes!r})"

    def spec(self, role: str) -> str:
        return self._inner.spec(self._routes.get(role, role))

    def name(self, role: str) -> str:
        return self._inner.name(self._routes.get(role, role))

    def __call__(self, role: str) -> BaseChatModel:
        return self._inner(self._routes.get(role, role))
