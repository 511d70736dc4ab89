"""Typed settings, read once and passed in.

Precedence (highest first): explicit overrides, ``CASEWORK_*`` environment variables, a
``casework.toml`` file (``./casework.toml`` or the path in ``CASEWORK_CONFIG``), defaults.
"""

from __future__ import annotations

import ipaddress
import json
import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from casework.errors import ConfigError

__all__ = [
    "Limits",
    "Models",
    "ServerSettings",
    "Settings",
    "config_sources",
    "default_model_dir",
    "get_settings",
]

LOCAL_MODEL = "local:qwen2.5-coder-1.5b"


class Models(BaseModel):
    """Model per role, as ``provider:name`` (see ``casework.llm.resolve_model``)."""

    default: str = LOCAL_MODEL
    """Used by any role left unset. Default: the bundled offline model."""
    orchestrator: str | None = None
    """Supervisors and case managers (the specs use a large model here)."""
    specialist: str | None = None
    """Specialist sub-agents (a small model is fine)."""
    judge: str | None = None
    """LLM judges; should differ from the model it judges."""
    annotator: str | None = None
    """Generators of annotations (HED)."""
    outreach: str | None = None
    """Agents that write to people (emails, replies); a mid-size model with a good tone."""
    classifier: str | None = None
    """Small single-label classifiers (e.g. sorting a reply into a bucket); a small model."""
    local: str = LOCAL_MODEL
    """The cheap model layer of a cascade (choices among fixed options, scored). ``--model``
    does not replace it: a configured remote model is the cascade's last layer, not this one.
    Default: the bundled offline model."""
    vision: str | None = None
    """Image describers (HED's vision agent): a vision-capable model such as
    ``openrouter:qwen/qwen2.5-vl-72b-instruct`` or ``ollama:llava``. Default: none; unlike the
    other roles it never falls back to ``default`` (the bundled model reads no images)."""

    def for_role(self, role: str) -> str:
        value = getattr(self, role, None) if role in type(self).model_fields else None
        return value or self.default


class Limits(BaseModel):
    """Limits and budgets applied to every agent run unless an app asks for less."""

    max_model_calls: int = 12
    """Model calls per run before it ends as NEEDS_REVIEW. Default 12."""
    max_tool_calls: int = 30
    """Tool calls per run. Default 30."""
    recursion_limit: int = 60
    """LangGraph super-steps per run. Default 60."""
    max_tokens: int | None = None
    """Token budget per run (prompt + completion). Default: none."""
    max_cost_usd: float | None = None
    """Cost budget per run in USD, where the price table knows the model. Default: none."""
    max_seconds: float | None = None
    """Wall-time budget per run. Default: none."""


class ServerSettings(BaseModel):
    """Limits of the HTTP server (API and web UI) against oversized or hostile requests."""

    max_body_bytes: int = 10 * 1024 * 1024
    """Largest request body, in bytes; a larger one gets a 413. Default 10 MB."""
    max_upload_bytes: int = 51 * 1024 * 1024
    """Largest ``multipart/form-data`` body (file uploads: documents accept files up to 50 MB),
    in bytes. Default 51 MB."""
    max_json_depth: int = 100
    """Deepest nesting of arrays and objects in a JSON body; a deeper one gets a 422.
    Default 100."""
    login_failures: int = 5
    """Failed sign-ins in a row, per user name and client address, before the web UI's sign-in
    locks. Default 5."""
    login_lockout_seconds: int = 300
    """How long a locked sign-in stays locked (a 429), in seconds; failures older than this
    are forgotten. Default 300."""
    allowed_models: list[str] = Field(default_factory=list)
    """Models (``provider:name``) an API or web caller may choose besides the configured ones
    (``[models]``); ``replay:`` files never. Default: none, only the configured models."""
    login_name_failures: int = 10
    """Failed sign-ins for one user name from all addresses together before that name locks
    (guesses spread over many addresses). Default 10."""
    login_address_failures: int = 20
    """Failed sign-ins from one client address for all names together before that address
    locks (one password tried on many names). Default 20."""
    token_failures: int = 20
    """Failed API tokens from one client address before the address gets 429s for
    ``login_lockout_seconds``. Default 20."""
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Addresses or networks (``10.0.0.5``, ``10.0.0.0/8``) of reverse proxies whose
    ``X-Forwarded-For`` / ``Forwarded`` / ``X-Forwarded-Proto`` headers are believed; from any
    other peer they are ignored. Comma-separated in ``CASEWORK_SERVER__TRUSTED_PROXIES``.
    Default: none (every client is the address it connects from)."""
    session_idle_seconds: int = 1800
    """A web session unused this long ends (sign in again), in seconds. Default 1800."""
    session_max_seconds: int = 12 * 3600
    """A web session ends this long after sign-in however busy, in seconds. Default 43200."""

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: Any) -> Any:
        if isinstance(value, str) and value.lstrip().startswith("["):
            return json.loads(value)  # the JSON list pydantic-settings reads for list fields
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _check_proxies(cls, value: list[str]) -> list[str]:
        for entry in value:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"server.trusted_proxies: {entry!r} is not an IP address or network"
                ) from None
        return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CASEWORK_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    home: Path = Path(".casework")
    """Working directory for the database, vectors, traces and model cache. Default ./.casework"""
    database_url: str | None = None
    """SQLAlchemy URL. Default: sqlite file ``<home>/casework.db``."""
    vector_path: Path | None = None
    """Chroma persistent directory. Default ``<home>/chroma``."""
    model_path: Path | None = None
    """Where the joined bundled GGUF lives. Default: the user's shared model cache,
    ``$XDG_CACHE_HOME/casework/models`` or ``~/.cache/casework/models`` (one 1.1 GB copy per
    machine, whatever the home)."""
    models: Models = Field(default_factory=Models)
    limits: Limits = Field(default_factory=Limits)
    server: ServerSettings = Field(default_factory=ServerSettings)
    local_threads: int = 2
    """CPU threads for the bundled model. Default 2 (the machines have 2 cores)."""
    local_ctx: int = 8192
    """Context window for the bundled model, in tokens. Default 8192."""
    trace_dir: Path | None = None
    """Where JSONL run traces go. Default ``<home>/traces``."""
    allow_network_models: bool = True
    """Tests set this false so nothing reaches a real provider."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=_toml_path()),
        )

    # Derived paths: one place computes each default.
    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.home / 'casework.db').as_posix()}"

    @property
    def vectors_dir(self) -> Path:
        return self.vector_path or self.home / "chroma"

    @property
    def models_dir(self) -> Path:
        return self.model_path or default_model_dir()

    @property
    def traces_dir(self) -> Path:
        return self.trace_dir or self.home / "traces"

    @property
    def checkpoint_path(self) -> Path:
        return self.home / "checkpoints.sqlite"


def default_model_dir() -> Path:
    """The shared model cache: ``$XDG_CACHE_HOME/casework/models``, else
    ``~/.cache/casework/models``."""
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache else Path.home() / ".cache"
    return base / "casework" / "models"


def _toml_path() -> Path | None:
    explicit = os.environ.get("CASEWORK_CONFIG")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"CASEWORK_CONFIG points at {path}, which is not a file.")
        return path
    path = Path("casework.toml")
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests call ``get_settings.cache_clear()``)."""
    try:
        return Settings()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"casework.toml is not valid TOML: {exc}.") from exc
    except ValueError as exc:
        raise ConfigError(f"Invalid casework settings: {exc}".splitlines()[0]) from exc


def config_sources(settings: Settings) -> list[tuple[str, Any, str]]:
    """Every effective value with where it came from: (dotted key, value, source)."""
    toml_file = _toml_path()
    toml_data: dict[str, Any] = tomllib.loads(toml_file.read_text()) if toml_file else {}
    rows: list[tuple[str, Any, str]] = []

    def source(path: list[str]) -> str:
        env_name = "CASEWORK_" + "__".join(p.upper() for p in path)
        if env_name in os.environ or (
            len(path) == 1 and f"CASEWORK_{path[0].upper()}" in os.environ
        ):
            return f"env {env_name}"
        node: Any = toml_data
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return "default"
            node = node[part]
        return f"file {toml_file}"

    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            for sub in type(value).model_fields:
                rows.append((f"{name}.{sub}", getattr(value, sub), source([name, sub])))
        else:
            rows.append((name, value, source([name])))
    rows.append(("(effective) database url", settings.db_url, "derived"))
    rows.append(("(effective) vector path", settings.vectors_dir, "derived"))
    rows.append(("(effective) model path", settings.models_dir, "derived"))
    for role in ("orchestrator", "specialist", "judge", "annotator"):
        rows.append((f"(effective) model for {role}", settings.models.for_role(role), "derived"))
    return rows
