"""Package names that load on first use (PEP 562), so ``--help`` does not import LangChain,
SQLAlchemy or the report writers: ``casework.runtime``, ``casework.access`` and
``casework.evals`` each map a name to the module that defines it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The package's module ``__getattr__``: ``homes`` maps a name to its submodule; a name
    is imported once, then kept as a plain attribute of the package."""

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
