"""Prompt files: ``prompts/<name>.md`` inside an app's package, rendered from named values.

Placeholders are ``$name`` / ``${name}`` (``string.Template``). A template that names a value
the caller did not pass is a programming error, reported in one sentence that names it.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template

from casework.errors import ConfigError

__all__ = ["load_prompt", "prompt_template"]


@cache
def prompt_template(package: str, name: str) -> Template:
    """The template ``<package>/prompts/<name>.md`` (``package`` as ``casework.apps.receipts``)."""
    try:
        text = files(package).joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise ConfigError(f"No prompt {name!r} in {package}: add prompts/{name}.md.") from exc
    return Template(text)


def load_prompt(package: str, name: str, /, **values: object) -> str:
    """Render ``<package>/prompts/<name>.md`` with ``values`` (stripped of outer blank space)."""
    template = prompt_template(package, name)
    try:
        return template.substitute({k: str(v) for k, v in values.items()}).strip()
    except KeyError as exc:
        raise ConfigError(
            f"Prompt {name!r} of {package} needs a value for {exc.args[0]!r}; pass it to load_prompt."
        ) from exc
    except ValueError as exc:
        raise ConfigError(
            f"Prompt {name!r} of {package} has a malformed placeholder ({exc})."
        ) from exc
