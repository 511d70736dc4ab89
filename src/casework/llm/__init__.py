"""Model resolution: ``resolve_model("provider:name")``, the role -> model source every run
reads (``RoleModels``) and the models tests use."""

from __future__ import annotations

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
