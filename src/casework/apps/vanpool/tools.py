"""The agents' tools, with the spec's names: thin wrappers over checks, lifecycle and the store.

Ids the model must not choose (vanpool, case, thread, the reply under review, the group of
employees) come from the run context (``ToolRuntime.context``). Where a tool takes an employee
id, it must be one of the context's riders, or the model gets a correction (``ToolRetry``).
A store that cannot answer becomes ``SourceUnavailable`` (an observation, not a crash).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime, tool
from langchain_core.tools import BaseTool
from sqlalchemy.exc import SQLAlchemyError

from casework.apps.vanpool import checks, lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import Bucket, OutreachResult
from casework.apps.vanpool.verification import Verification
from casework.errors import SourceUnavailable, ToolRetry

__all__ = [
    "CaseContext",
    "OfferedTools",
    "OutreachContext",
    "ShiftGroup",
    "VanpoolRef",
    "case_manager_offer",
    "case_manager_tools",
    "dumps",
    "location_tools",
    "outreach_tools",
    "shift_tools",
]


def dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), default=str)


def _store(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except SQLAlchemyError as exc:
        raise SourceUnavailable("vanpool database", type(exc).__name__) from exc


@dataclass(frozen=True)
class VanpoolRef:
    vanpool_id: str


@dataclass(frozen=True)
class ShiftGroup:
    employee_ids: tuple[str, ...]
    on: date
    vanpool_id: str | None = None


@dataclass
class OutreachContext:
    case_id: str
    thread_id: str | None
    vanpool_id: str
    reply_message_id: str | None = None
    done: dict[str, Any] = field(default_factory=dict)
    """What the tools decided (bucket, the email's body, whether a person reviews it): the
    reply's handling writes it."""


@dataclass
class CaseContext:
    vanpool_id: str
    results: dict[str, Any] = field(default_factory=dict)
    """Specialist decisions, the case id and the outreach result of this run."""


# ---------------------------------------------------------------------------- location
def location_tools(deps: VanpoolDeps) -> list[BaseTool]:
    def rider(vanpool_id: str, employee_id: str) -> Any:
        vanpool = _store(lambda: deps.repo.get_vanpool(vanpool_id))
        eid = employee_id.strip().upper()
        for e in vanpool.riders:
            if e.employee_id == eid:
                return vanpool, e
        ids = ", ".join(e.employee_id for e in vanpool.riders)
        raise ToolRetry(f"{employee_id} is not a rider of {vanpool_id}; its riders are {ids}.")

    @tool
    def get_employee_profile(employee_id: str, runtime: ToolRuntime[VanpoolRef]) -> str:
        """An employee's home ZIP, home coordinates and site assignment."""
        _, e = rider(runtime.context.vanpool_id, employee_id)
        return dumps(checks.employee_profile(e))

    @tool
    def check_commute_distance(
        runtime: ToolRuntime[VanpoolRef], employee_ids: list[str] | None = None
    ) -> str:
        """Distance in miles from each employee's home to the vanpool's pickup, and the vanpool's threshold. Leave employee_ids empty to check every rider at once."""
        vanpool_id = runtime.context.vanpool_id
        vanpool = _store(lambda: deps.repo.get_vanpool(vanpool_id))
        wanted = employee_ids or [e.employee_id for e in vanpool.riders]
        checked = [rider(vanpool_id, eid) for eid in wanted]
        distances = [checks.commute_distance(deps, vp, e) for vp, e in checked]
        beyond = [d["employee_id"] for d in distances if not d["within_threshold"]]
        payload = {
            "vanpool_id": vanpool_id,
            "pickup_zip": vanpool.pickup_zip,
            "threshold_miles": vanpool.max_commute_miles,
            "beyond_threshold": beyond,
            "distances": distances,
        }
        return dumps(payload)

    return [check_commute_distance, get_employee_profile]


# ---------------------------------------------------------------------------- shift
def shift_tools(deps: VanpoolDeps) -> list[BaseTool]:
    @tool
    def get_employee_shifts(runtime: ToolRuntime[ShiftGroup]) -> str:
        """Shift, schedule (24-hour), timezone and PTO of every employee in the group, the group's majority shift, and each employee's overlap with it in minutes per workday."""
        ctx = runtime.context
        employees = _store(lambda: [deps.repo.get_employee(e) for e in ctx.employee_ids])
        vanpool_id = ctx.vanpool_id
        vanpool = _store(lambda: deps.repo.get_vanpool(vanpool_id)) if vanpool_id else None
        payload = checks.employee_shifts(employees, ctx.on, vanpool)
        return dumps(payload)

    return [get_employee_shifts]


# ---------------------------------------------------------------------------- outreach
def outreach_tools(deps: VanpoolDeps, classify: Callable[[str], str]) -> list[BaseTool]:
    @tool
    def classify_reply(runtime: ToolRuntime[OutreachContext]) -> str:
        """Classify the rider's new reply: acknowledgment, question, update or escalation."""
        ctx = runtime.context
        reply_id = ctx.reply_message_id
        if not reply_id:
            raise ToolRetry("There is no new reply to classify; send the initial email instead.")
        body = _store(lambda: deps.repo.get_message(reply_id)).body
        bucket = Bucket(classify(body))
        ctx.done["bucket"] = bucket.value
        return dumps({"bucket": bucket.value, "hitl_required": bucket is Bucket.ESCALATION})

    # The two writing tools only say what to write: the reply's handling writes it after the
    # run, in one transaction with the reply marked handled (nothing half-written on a crash).
    @tool
    def send_email(body: str, runtime: ToolRuntime[OutreachContext]) -> str:
        """Send an email to the case's thread now (for acknowledgment, question and update replies)."""
        ctx = runtime.context
        if ctx.done.get("bucket") == Bucket.ESCALATION:
            raise ToolRetry(
                "The reply is an escalation: use send_email_for_review so a person reviews it."
            )
        if "body" in ctx.done:
            raise ToolRetry("An email was already written in this run; call submit_outcome.")
        ctx.done.update(body=body, review=False)
        return dumps({"status": "queued: it is sent once the reply's handling is recorded"})

    @tool
    def send_email_for_review(body: str, runtime: ToolRuntime[OutreachContext]) -> str:
        """Save the email as a draft for a person to approve, edit or reject (for escalations)."""
        ctx = runtime.context
        if "body" in ctx.done:
            raise ToolRetry("An email was already written in this run; call submit_outcome.")
        ctx.done.update(body=body, review=True)
        return dumps({"sent": False, "status": "awaiting review"})

    return [classify_reply, send_email, send_email_for_review]


# ---------------------------------------------------------------------------- case manager
SPECIALISTS = {"location": "run_location_specialist", "shift": "run_shift_specialist"}


def case_manager_offer(
    results: dict[str, Any], case_status: str | None, submit: str = "submit_decision"
) -> frozenset[str]:
    """The Case Manager tools that can act now, given the run's results so far and the
    vanpool's open case (its status, None without one): the spec's flow as a table.

    - a specialist that has not answered yet (both, before anything else);
    - a check without a verdict: the decision (NEEDS_REVIEW: no case, a person looks);
    - a failed check: ``upsert_case``, then ``run_outreach``, then the decision;
    - both passed: ``close_case`` for an open case (a re-audit that passed), then the decision;
    - a pre-cancel case: ``cancel_membership`` and the decision (approve or reject, no audit
      needed), and after a cancellation the decision.

    A small model then has no premature or illegal move to make (the bundled model decided
    after one specialist, and skipped ``upsert_case`` after a failed check); the tools' own
    refusals stay behind this as the guard.
    """
    offer = {tool for check, tool in SPECIALISTS.items() if check not in results}
    if case_status == "pre_cancel":
        offer |= {"cancel_membership", submit}
    if "cancelled" in results:
        offer.add(submit)
    if offer - {submit, "cancel_membership"}:
        return frozenset(offer)  # a specialist is still to run
    verdicts = [getattr(results[c], "verdict", None) for c in SPECIALISTS]
    if any(v not in ("pass", "fail") for v in verdicts):
        offer.add(submit)
    elif "fail" in verdicts:
        if "case_id" not in results:
            offer.add("upsert_case")
        elif "outreach" not in results:
            offer.add("run_outreach")
        else:
            offer.add(submit)
    elif case_status not in (None, "pre_cancel"):
        offer.add("close_case")
    else:
        offer.add(submit)
    return frozenset(offer)


def case_manager_tools(
    deps: VanpoolDeps,
    run_location: Callable[[str], Any],
    run_shift: Callable[[str], Any],
    run_outreach_agent: Callable[[str], OutreachResult],
) -> list[BaseTool]:
    """The Case Manager's tools; the specialists and the outreach agent run as tools."""
    return [
        *_specialist_tools(run_location, run_shift),
        *_case_opening_tools(deps, run_outreach_agent),
        *_case_closing_tools(deps),
    ]


def _specialist_tools(
    run_location: Callable[[str], Any], run_shift: Callable[[str], Any]
) -> list[BaseTool]:
    """The Location and Shift Specialists, run as tools."""

    @tool
    def run_location_specialist(runtime: ToolRuntime[CaseContext]) -> str:
        """Run the Location Specialist on the vanpool's riders: verdict, confidence, reasoning, evidence."""
        ctx = runtime.context
        decision = run_location(ctx.vanpool_id)
        ctx.results["location"] = decision
        return dumps(decision.spec_output())

    @tool
    def run_shift_specialist(runtime: ToolRuntime[CaseContext]) -> str:
        """Run the Shift Specialist on the vanpool's riders: verdict, confidence, reasoning, evidence."""
        ctx = runtime.context
        decision = run_shift(ctx.vanpool_id)
        ctx.results["shift"] = decision
        return dumps(decision.spec_output())

    return [run_location_specialist, run_shift_specialist]


def _case_opening_tools(
    deps: VanpoolDeps, run_outreach_agent: Callable[[str], OutreachResult]
) -> list[BaseTool]:
    """Open (or update) the vanpool's case and run the Outreach Agent on it."""

    @tool
    def upsert_case(
        failed_checks: list[Literal["location", "shift"]], runtime: ToolRuntime[CaseContext]
    ) -> str:
        """Create the vanpool's case, or update its open one, with the checks that failed."""
        ctx = runtime.context
        missing = [c for c in ("location", "shift") if c not in ctx.results]
        if missing:
            raise ToolRetry(f"Run the {' and '.join(missing)} specialist(s) before upsert_case.")
        verification = Verification(ctx.results["location"], ctx.results["shift"])
        if verification.undecided:
            raise ToolRetry(
                f"The {' and '.join(verification.undecided)} check ended without a verdict: "
                "open no case; submit NEEDS_REVIEW so a person looks."
            )
        actual = verification.failed_checks
        if sorted(set(failed_checks)) != sorted(actual):
            raise ToolRetry(
                f"The specialists' failed checks are {actual or 'none'}; pass exactly those."
            )
        if not actual:
            raise ToolRetry("Both checks passed: no case is needed; submit 'verified'.")
        case = lifecycle.upsert_case(deps, ctx.vanpool_id, verification, "case_manager_agent")
        ctx.results["case_id"] = case.case_id
        return dumps(
            {"case_id": case.case_id, "status": case.status, "failed_checks": case.failed_checks}
        )

    @tool
    def run_outreach(runtime: ToolRuntime[CaseContext]) -> str:
        """Run the Outreach Agent on the case's email thread (initial email or reply handling)."""
        ctx = runtime.context
        case_id = ctx.results.get("case_id")
        if not case_id:
            open_case = deps.repo.open_case_for(ctx.vanpool_id)
            if open_case is None:
                raise ToolRetry("There is no case yet: call upsert_case first.")
            case_id = open_case.case_id
        result = run_outreach_agent(case_id)
        ctx.results["outreach"] = result
        return dumps(
            result.model_dump(
                include={"email_thread_id", "message_id", "bucket", "hitl_required", "sent"}
            )
        )

    return [upsert_case, run_outreach]


def _case_closing_tools(deps: VanpoolDeps) -> list[BaseTool]:
    """Close the case, or cancel the failing riders' membership once approved."""

    @tool
    def close_case(
        outcome: Literal["resolved", "cancelled"], runtime: ToolRuntime[CaseContext]
    ) -> str:
        """Close the vanpool's open case with an outcome."""
        ctx = runtime.context
        case = deps.repo.open_case_for(ctx.vanpool_id)
        if case is None:
            raise ToolRetry("The vanpool has no open case to close.")
        closed = lifecycle.close_case(
            deps, case.case_id, outcome, "case_manager_agent", "closed by the case manager"
        )
        return dumps(
            {"case_id": closed.case_id, "status": closed.status, "outcome": closed.outcome}
        )

    @tool
    def cancel_membership(runtime: ToolRuntime[CaseContext]) -> str:
        """Cancel the failing riders' membership (always waits for a person's approval)."""
        ctx = runtime.context
        case = deps.repo.open_case_for(ctx.vanpool_id)
        if case is None or case.status != "pre_cancel":
            raise ToolRetry("Memberships are cancelled only for a case in pre_cancel.")
        approval = case.meta.get("approval") or {}
        ctx.results["cancelled"] = True
        removed = lifecycle.cancel_membership(
            deps, case.case_id, approval.get("employee_ids", []), "case_manager_agent"
        )
        closed = lifecycle.close_case(
            deps,
            case.case_id,
            "cancelled",
            "case_manager_agent",
            "membership cancelled after approval",
        )
        return dumps({"case_id": closed.case_id, "removed": removed, "outcome": closed.outcome})

    return [close_case, cancel_membership]


class OfferedTools(AgentMiddleware):
    """Each Case Manager model call sees only the tools ``case_manager_offer`` names and must
    call one of them: the run's results come from the tool runtime's context, the case status
    from the store at that moment."""

    def __init__(self, deps: VanpoolDeps, submit_name: str = "submit_decision") -> None:
        super().__init__()
        self.deps = deps
        self.submit_name = submit_name

    @property
    def name(self) -> str:
        return "vanpool_offered_tools"

    def _narrow(self, request: Any) -> Any:
        ctx = request.runtime.context
        case = self.deps.repo.open_case_for(ctx.vanpool_id)
        offer = case_manager_offer(ctx.results, case.status if case else None, self.submit_name)
        forced = request.tool_choice if request.tool_choice not in (None, "auto") else None
        tools = [t for t in request.tools if getattr(t, "name", None) in offer | {forced}]
        # Every step of the flow is a tool call, the last one the decision: the bundled model,
        # given only the specialists, or only the decision, answered in text and stopped.
        return request.override(tools=tools, tool_choice=forced or "any")

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(self._narrow(request))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(self._narrow(request))
