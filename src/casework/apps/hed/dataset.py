"""The app's data files: validator test strings and the annotation evaluation cases."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

__all__ = ["load_jsonl", "load_validator_cases"]


def load_jsonl(name: str) -> list[dict[str, Any]]:
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_validator_cases() -> list[dict[str, Any]]:
    """HED strings written for the project, each with the HED spec's expected error codes."""
    return load_jsonl("validator_cases.jsonl")
