"""vanpool: Pool Patrol, the vanpool misuse audit (location and shift mismatches).

A Case Manager runs a Location Specialist and a Shift Specialist in parallel on a vanpool's
riders; any failure opens one case per vanpool and an Outreach Agent emails the riders
(SMTP), files and classifies their replies (SMTP receiver), and asks a person before it
sends a reply to an escalation. Timeouts and re-audits follow the spec's lifecycle, and
cancelling a membership always waits for a person's approval. A rules-only auditor
(distance + shift overlap, no model) runs the same lifecycle as the baseline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casework.registry import AppSpec

__all__ = ["APP"]


def _cli() -> Any:
    from casework.apps.vanpool.cli import app

    return app


def _router(settings: Any) -> Any:
    from casework.apps.vanpool.api import router

    return router(settings)


def _strategies() -> Any:
    from casework.apps.vanpool.strategies import STRATEGIES

    return STRATEGIES


def _eval_suite() -> Any:
    from casework.apps.vanpool.evalsuite import eval_suite

    return eval_suite()


def _review(settings: Any) -> Any:
    from casework.apps.vanpool.review import VanpoolReview

    return VanpoolReview(settings)


def _demo() -> None:
    from casework.apps.vanpool.demo import run_demo

    run_demo()


APP = AppSpec(
    name="vanpool",
    description="Pool Patrol: audit vanpools for location and shift mismatches, with outreach and approvals.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=_cli,
    router=_router,
    demo=_demo,
    review=_review,
    eval_suite=_eval_suite,
    strategies=_strategies,
)
