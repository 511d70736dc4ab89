"""Apps plug in through a registry; built-in apps register like external ones.

An app package exposes ``APP = AppSpec(...)`` in its ``__init__``. Built-in apps are listed in
``BUILTIN_APPS``; external packages add an entry point in the ``casework.apps`` group that
points at their ``AppSpec``. Nothing here imports an app until it is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from casework.errors import InputError

if TYPE_CHECKING:
    from casework.config import Settings
    from casework.runtime.strategy import Strategy

__all__ = [
    "BUILTIN_APPS",
    "AppSpec",
    "all_apps",
    "app_service",
    "get_app",
    "migration_dirs",
    "strategy_named",
]

S = TypeVar("S")

BUILTIN_APPS = [
    "casework.apps.receipts",
    "casework.apps.vanpool",
    "casework.apps.documents",
    "casework.apps.sql",
    "casework.apps.hed",
]

# Components below the apps that own tables too.
_COMPONENT_MIGRATIONS = [
    Path(__file__).parent / "evals" / "migrations" / "versions",
    Path(__file__).parent / "access" / "migrations" / "versions",
    Path(__file__).parent / "web" / "migrations" / "versions",
]


@dataclass(frozen=True)
class AppSpec:
    """What an app offers the platform. Every hook is lazy so start-up stays cheap."""

    name: str
    description: str
    migrations: Path | None = None
    """The app's Alembic ``versions`` folder (its first revision has ``branch_labels=(name,)``)."""
    cli: Callable[[], Any] | None = None
    """Returns the app's Typer sub-app, mounted as ``casework <name>``."""
    router: Callable[[Settings], Any] | None = None
    """Given the server's settings, returns the app's FastAPI ``APIRouter``, mounted under
    ``/<name>`` behind the platform's token check. Routes get settings and the caller through
    FastAPI dependencies (``casework.runtime.context``), never from ``get_settings()``."""
    demo: Callable[[], None] | None = None
    """Runs the app's demo on embedded defaults and the bundled model."""
    eval_suite: Callable[[], Any] | None = None
    """Returns the app's ``casework.evals.EvalSuite`` (datasets, strategies, evaluators, targets)."""
    strategies: Callable[[], Mapping[str, Strategy[Any, Any]]] | None = None
    """Returns the app's strategies by name: plain functions ``run(input, deps, config) ->
    Decision`` (``casework.runtime.strategy``) that the CLI, the API and the evaluation all
    call."""
    review: Callable[[Settings], Any] | None = None
    """Given the settings, returns the app's ``casework.runtime.review_provider.ReviewProvider``: what
    waits for a person (listed in the web inbox) and, optionally, runs the UI can start."""
    service: str | None = None
    """The app's ``service`` module by name (``casework.apps.<name>.service``): what the
    platform's benchmarks call, through :func:`app_service`, without importing the app."""
    extra: dict[str, Any] = field(default_factory=dict)
    examples: Callable[[], Any] | None = None
    """Returns the app's ``casework.runtime.memory.ExamplesHook``: how a case input becomes
    the key text it is found by and what its verified answer is. An app that has one gets
    ``casework <name> examples`` and ``/<name>/examples`` (its memory of verified answers)."""


def lazy_attr(target: str) -> Callable[[], Any]:
    """A hook returning ``module:attribute``, imported on first use (start-up stays cheap)."""
    module, _, attr = target.partition(":")
    return lambda: getattr(importlib.import_module(module), attr)


def lazy_call(target: str) -> Callable[..., Any]:
    """A hook calling ``module:function`` with the hook's arguments, imported on first use."""
    module, _, attr = target.partition(":")
    return lambda *args: getattr(importlib.import_module(module), attr)(*args)


_cache: dict[str, AppSpec] | None = None


def all_apps() -> dict[str, AppSpec]:
    global _cache
    if _cache is None:
        apps: dict[str, AppSpec] = {}
        for module_name in BUILTIN_APPS:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name == module_name:
                    continue
                raise
            spec = getattr(module, "APP", None)
            if isinstance(spec, AppSpec):
                apps[spec.name] = spec
        for ep in entry_points(group="casework.apps"):
            spec = ep.load()
            apps.setdefault(spec.name, spec)
        _cache = apps
    return _cache


def get_app(name: str) -> AppSpec:
    apps = all_apps()
    if name not in apps:
        known = ", ".join(sorted(apps)) or "none"
        raise InputError(f"Unknown app {name!r}; registered apps: {known}.")
    return apps[name]


def app_service(name: str) -> Any:
    """The ``service`` module of the registered app ``name``, imported now; one sentence when
    the app is not installed or names no service."""
    spec = get_app(name)
    if spec.service is None:
        raise InputError(f"The app {name!r} offers no service module to the platform.")
    return importlib.import_module(spec.service)


def strategy_named(strategies: Mapping[str, S], name: str, *, app: str | None = None) -> S:
    """The strategy ``name`` of an app's registry (its ``STRATEGIES``, what ``AppSpec.strategies``
    returns); an unknown name is one sentence naming the choices in the registry's order. Every
    face that takes a strategy by name (CLI, API, web, evaluation) looks it up here."""
    if name not in strategies:
        of = f" for {app}" if app else ""
        raise InputError(f"Unknown strategy {name!r}{of}; use one of {', '.join(strategies)}.")
    return strategies[name]


def migration_dirs() -> list[Path]:
    dirs = [d for d in _COMPONENT_MIGRATIONS if d.is_dir()]
    dirs += [a.migrations for a in all_apps().values() if a.migrations and a.migrations.is_dir()]
    return dirs
