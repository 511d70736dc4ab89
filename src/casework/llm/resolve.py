"""``resolve_model("provider:name")``: a chat model from a spec, with the provider's key."""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from casework.config import Settings, get_settings
from casework.errors import ConfigError
from casework.llm.replay import ReplayChatModel

__all__ = ["PROVIDERS", "resolve_model"]

# provider -> the environment variable holding its key (None: no key needed)
PROVIDERS: dict[str, str | None] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "ollama": None,
    "local": None,
    "replay": None,
}


def resolve_model(
    spec: str,
    *,
    settings: Settings | None = None,
    api_key: str | None = None,
    **kwargs: Any,
) -> BaseChatModel:
    """A chat model from ``provider:name``.

    ``local:qwen2.5-coder-1.5b`` is the bundled offline model; ``replay:PATH`` answers from a
    cassette; ``openai:``, ``anthropic:``, ``ollama:`` and ``openrouter:`` use LangChain's
    integrations with keys from the environment, or ``api_key`` (a caller's own key, passed
    to the provider client only).
    """
    settings = settings or get_settings()
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise ConfigError(
            f"Model {spec!r} is not of the form provider:name (e.g. local:qwen2.5-coder-1.5b)."
        )
    if provider not in PROVIDERS:
        raise ConfigError(
            f"Unknown model provider {provider!r}; use one of {', '.join(PROVIDERS)}."
        )
    key_var = PROVIDERS[provider]
    if api_key is not None and key_var is None:
        raise ConfigError(f"{provider} models take no API key; send none with {spec}.")
    if provider == "local":
        from casework.llm.local import load_local_model

        return load_local_model(name, **kwargs)
    if provider == "replay":
        return ReplayChatModel.from_path(name)
    if not settings.allow_network_models:
        raise ConfigError(
            f"Network models are disabled here (CASEWORK_ALLOW_NETWORK_MODELS=false); {spec} was asked for."
        )
    key = api_key or (os.environ.get(key_var) if key_var else None)
    if key_var and not key:
        raise ConfigError(f"{spec} needs {key_var} set in the environment.")
    secret = SecretStr(key) if key else None
    kwargs.setdefault("temperature", 0)
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=name, api_key=secret, **kwargs)
    if provider == "openrouter":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=name,
            base_url=os.environ.get("OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1"),
            api_key=secret,
            **kwargs,
        )
    if provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=name, api_key=secret, **kwargs)
    from langchain_ollama import ChatOllama

    return ChatOllama(model=name, base_url=os.environ.get("OLLAMA_HOST"), **kwargs)
