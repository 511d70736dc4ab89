"""vanpool: Pool Patrol, the vanpool misuse audit (location and shift mismatches).

A Case Manager runs a Location Specialist and a Shift Specialist in parallel on a vanpool's
riders; any failure opens one case per vanpool and an Outreach Agent emails the riders
(SMTP), files and classifies their replies (SMTP receiver), and asks a person before it
sends a reply to an escalation. Timeouts and re-audits follow the spec's lifecycle, and
cancelling a membership always waits for a person's approval. A rules-only auditor
(distance + shift overlap, no model; the ``rules`` strategy) runs the same lifecycle.
"""

from __future__ import annotations

from pathlib import Path

from casework.registry import AppSpec, lazy_attr, lazy_call

__all__ = ["APP"]


APP = AppSpec(
    name="vanpool",
    description="Pool Patrol: audit vanpools for location and shift mismatches, with outreach and approvals.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=lazy_attr("casework.apps.vanpool.cli:app"),
    router=lazy_call("casework.apps.vanpool.api:router"),
    demo=lazy_call("casework.apps.vanpool.demo:run_demo"),
    review=lazy_call("casework.apps.vanpool.review:VanpoolReview"),
    eval_suite=lazy_call("casework.apps.vanpool.evalsuite:eval_suite"),
    service="casework.apps.vanpool.service",
    strategies=lazy_attr("casework.apps.vanpool.strategies:STRATEGIES"),
    examples=lazy_attr("casework.apps.vanpool.strategies:EXAMPLES"),
)
