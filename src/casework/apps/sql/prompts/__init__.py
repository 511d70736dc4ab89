"""Prompt templates, loaded by name and rendered from typed inputs (``string.Template``)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template

__all__ = ["load", "render"]


@cache
def load(name: str) -> Template:
    return Template(files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **values: object) -> str:
    """Render ``prompts/<name>.md``; a missing value is a bug, so ``substitute`` (not safe)."""
    return load(name).substitute({k: str(v) for k, v in values.items()}).strip()
