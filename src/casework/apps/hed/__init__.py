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

from casework.registry import AppSpec, lazy_attr, lazy_call

__all__ = ["APP"]


APP = AppSpec(
    name="hed",
    description="Annotate event descriptions with valid HED tags: annotate, validate, evaluate, assess.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=lazy_attr("casework.apps.hed.cli:app"),
    router=lazy_call("casework.apps.hed.api:router"),
    demo=lazy_call("casework.apps.hed.demo:run_demo"),
    eval_suite=lazy_call("casework.apps.hed.evalsuite:eval_suite"),
    service="casework.apps.hed.service",
    strategies=lazy_attr("casework.apps.hed.strategies:STRATEGIES"),
    examples=lazy_attr("casework.apps.hed.examples:EXAMPLES"),
    review=lazy_call("casework.apps.hed.review:HedReview"),
)
