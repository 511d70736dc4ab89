"""Model resolution: ``resolve_model("provider:name")``, the role -> model source every run
reads (``RoleModels``) and the models tests use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import lazy_names

if TYPE_CHECKING:
    from casework.llm.replay import RecordingChatModel, ReplayChatModel
    from casework.llm.resolve import PROVIDERS, resolve_model
    from casework.llm.roles import LOCAL_ROLE, VISION_ROLE, RoleModels, model_name
    from casework.llm.scripted import ScriptedChatModel, call, say

__all__ = [
    "LOCAL_ROLE",
    "PROVIDERS",
    "VISION_ROLE",
    "RecordingChatModel",
    "ReplayChatModel",
    "RoleModels",
    "ScriptedChatModel",
    "call",
    "model_name",
    "resolve_model",
    "say",
]

# LangChain loads with the first model, not with the package (``casework --help`` stays quick).
__getattr__ = lazy_names(
    "casework.llm",
    {
        "RecordingChatModel": "replay",
        "ReplayChatModel": "replay",
        "PROVIDERS": "resolve",
        "resolve_model": "resolve",
        "LOCAL_ROLE": "roles",
        "VISION_ROLE": "roles",
        "RoleModels": "roles",
        "model_name": "roles",
        "ScriptedChatModel": "scripted",
        "call": "scripted",
        "say": "scripted",
    },
)
