"""Prompt files of the documents app, loaded by name (``string.Template``)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template

__all__ = ["load", "render"]


@cache
def load(name: str) -> Template:
    return Template(files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8"))


def render(template: str, **values: object) -> str:
    return load(template).substitute({k: str(v) for k, v in values.items()}).strip()
