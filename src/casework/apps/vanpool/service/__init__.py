"""The vanpool service: the one module the app's faces call (``cli``, ``api``, ``review``,
``demo``, ``evalsuite``).

It owns the orchestration above a single strategy run, one module per job: ``records``
(seeding and importing rosters, a case's record), ``audits`` (one vanpool or many through
``run_batch``), ``replies`` (filing and routing replies, advancing time with ``tick``),
``approvals`` (the ones a person decides), ``eval_runs`` (a case's life as an evaluation
scenario, the pairwise judging of two stored evaluation runs) and ``callers`` (who a call acts
for). This package exports them all, so a face imports from ``service`` alone.
Below it: ``strategies`` (one decision per input), ``agent`` (the graphs), ``lifecycle`` (the
case steps as plain functions), ``mail``, ``roster`` and the repository. Nothing below
imports it, so the Case Manager's paused run is resumed from here (``decide_approval``),
never from the lifecycle.
"""

from __future__ import annotations

from casework.apps.vanpool.lifecycle import case_result
from casework.apps.vanpool.scenarios import LifecycleResult, Scenario
from casework.apps.vanpool.service.approvals import (
    decide_approval,
    decide_approval_request,
    pending_approvals,
    settled_approval,
)
from casework.apps.vanpool.service.audits import (
    VanpoolAuditor,
    audit_events,
    audit_many,
    audit_row,
    run_audit,
    verifier_for,
)
from casework.apps.vanpool.service.eval_runs import (
    RunComparison,
    compare_runs,
    judge_runs,
    run_scenario,
)
from casework.apps.vanpool.service.records import (
    BUNDLED_ROSTER,
    case_detail,
    case_history,
    check_roster,
    import_roster,
)
from casework.apps.vanpool.service.replies import (
    handle_reply,
    process_reply,
    reply_to_case,
    serve_inbound,
    tick,
)
from casework.apps.vanpool.strategies import (
    LOCATION_STRATEGIES,
    OUTREACH_STRATEGIES,
    SHIFT_STRATEGIES,
    STRATEGIES,
    AuditInput,
    ReplyInput,
    ShiftInput,
)
from casework.apps.vanpool.synth import DATA_DIR

__all__ = [
    "BUNDLED_ROSTER",
    "DATA_DIR",
    "LOCATION_STRATEGIES",
    "OUTREACH_STRATEGIES",
    "SHIFT_STRATEGIES",
    "STRATEGIES",
    "AuditInput",
    "LifecycleResult",
    "ReplyInput",
    "RunComparison",
    "Scenario",
    "ShiftInput",
    "VanpoolAuditor",
    "audit_events",
    "audit_many",
    "audit_row",
    "case_detail",
    "case_history",
    "case_result",
    "check_roster",
    "compare_runs",
    "decide_approval",
    "decide_approval_request",
    "handle_reply",
    "import_roster",
    "judge_runs",
    "pending_approvals",
    "process_reply",
    "reply_to_case",
    "run_audit",
    "run_scenario",
    "serve_inbound",
    "settled_approval",
    "tick",
    "verifier_for",
]
