"""hed: natural-language event descriptions to valid HED annotations.

An annotation agent writes short-form HED tags from the schema's vocabulary; deterministic
code validates them (the npm ``hed-validator`` kept warm in Node, ``hedtools`` as the
fallback), augments each error with how to fix it and the closest valid tags; an evaluation
agent checks faithfulness, an optional assessment agent completeness, and a feedback
summariser condenses what went wrong for the next attempt, on a LangGraph state machine with
the spec's attempt and iteration limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casework.registry import AppSpec

__all__ = ["APP"]


def _cli() -> Any:
    from casework.apps.hed.cli import app

    return app


def _router(settings: Any) -> Any:
    from casework.apps.hed.api import router

    return router(settings)


def _strategies() -> Any:
    from casework.apps.hed.strategies import STRATEGIES

    return STRATEGIES


def _eval_suite() -> Any:
    from casework.apps.hed.evalsuite import eval_suite

    return eval_suite()


def _demo() -> None:
    from casework.apps.hed.demo import run_demo

    run_demo()


APP = AppSpec(
    name="hed",
    description="Annotate event descriptions with valid HED tags: annotate, validate, evaluate, assess.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=_cli,
    router=_router,
    demo=_demo,
    eval_suite=_eval_suite,
    strategies=_strategies,
)
