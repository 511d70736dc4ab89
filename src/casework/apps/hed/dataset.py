"""The app's data files: validator test strings and the annotation evaluation cases."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

__all__ = [
    "DATA_DIR",
    "load_eval_cases",
    "load_jsonl",
    "load_routing_cases",
    "load_validator_cases",
]

DATA_DIR = Path(str(files(__package__).joinpath("data")))


def load_jsonl(name: str) -> list[dict[str, Any]]:
    text = (DATA_DIR / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_validator_cases() -> list[dict[str, Any]]:
    """HED strings written for the project, each with the HED spec's expected error codes."""
    return load_jsonl("validator_cases.jsonl")


def load_eval_cases() -> list[dict[str, Any]]:
    """Event descriptions with gold HED strings (``{"id", "inputs", "expected", "metadata"}``)."""
    return load_jsonl("eval/cases.jsonl")


def load_routing_cases() -> list[dict[str, Any]]:
    """The spec's routing rules: a state after a node, and the node that must follow."""
    return load_jsonl("eval/routing_cases.jsonl")
