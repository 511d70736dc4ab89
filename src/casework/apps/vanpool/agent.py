"""The four agents on ``casework.runtime.ReactAgent``: wiring only (prompts in ``prompts/``).

- Location Specialist (role ``specialist``): get_employee_profile, check_commute_distance.
- Shift Specialist (role ``specialist``): get_employee_shifts.
- Outreach Agent (role ``outreach``): classify_reply (role ``classifier``), send_email,
  send_email_for_review. The initial email needs no model: its template follows failed_checks.
- Case Manager (role ``orchestrator``): the two specialists (as tools, run in parallel when
  called in one turn), upsert_case, run_outreach, close_case, cancel_membership. Roster, case
  status and thread are preloaded into the prompt before the model runs.

What a run *did* (the case it opened, the email it sent) is read from the store and the run
context afterwards, never taken from the model's own account.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date
from typing import Any, TypeVar

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from casework.apps.vanpool import lifecycle, reply_routing
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import (
    ROLES,
    Bucket,
    CaseManagerResult,
    LocationDecision,
    OutreachResult,
    ShiftDecision,
)
from casework.apps.vanpool.reply_cues import classify_reply_keywords, has_escalation_cue
from casework.apps.vanpool.tools import (
    CaseContext,
    OfferedTools,
    OutreachContext,
    ShiftGroup,
    VanpoolRef,
    case_manager_tools,
    location_tools,
    outreach_tools,
    shift_tools,
)
from casework.apps.vanpool.verification import Verification, Verifier
from casework.config import Limits
from casework.errors import InputError
from casework.runtime import Event, ReactAgent, RunInfo, RunResult
from casework.runtime.checkpoint import shared_sqlite_checkpointer
from casework.runtime.decision import Decision
from casework.runtime.harness import run_info
from casework.runtime.prompts import load_prompt
from casework.runtime.runconfig import RunConfig

__all__ = [
    "PROMPT_VERSION",
    "agent_verify",
    "classify_with_model",
    "iter_case_manager",
    "resume_case_manager",
    "run_case_manager",
    "run_location_specialist",
    "run_outreach_agent",
    "run_shift_specialist",
    "verifier",
]

APP_PACKAGE = "casework.apps.vanpool"
"""Where ``load_prompt`` finds the ``prompts/*.md`` files."""

PROMPT_VERSION = "vanpool-2"
D = TypeVar("D", bound=Decision)


def _run_info(result: RunResult[Any], config: RunConfig, agent: str) -> RunInfo:
    return run_info(result, strategy="agent", model=config.models.name(ROLES[agent]))


def _limits(deps: VanpoolDeps, config: RunConfig, model_calls: int) -> Limits:
    base = config.limits or deps.settings.limits
    return base.model_copy(update={"max_model_calls": min(base.max_model_calls, model_calls)})


def _agent(config: RunConfig, name: str, limits: Limits, **kwargs: Any) -> ReactAgent[Any]:
    return ReactAgent(
        config=replace(config, limits=limits),
        role=ROLES[name],
        name=f"{name}@{PROMPT_VERSION}",
        **kwargs,
    )


# ---------------------------------------------------------------------------- specialists
def _failures_from_evidence(decision: D, rule_field: str) -> D:
    """A ``fail`` whose failing riders the model left out (the bundled model did on every
    location fail) lists the riders it cited whose grounded figures break the rule
    (``within_threshold`` / ``meets_rule`` false): the model cites, the tool output decides.
    Without them a case would name no rider and its email would go to the whole vanpool."""
    if decision.verdict != "fail" or getattr(decision, "failed_employees", None):
        return decision
    failing = sorted(
        {
            str(e.fields["employee_id"])
            for e in decision.evidence
            if e.fields.get(rule_field) is False and e.fields.get("employee_id")
        }
    )
    return decision.model_copy(update={"failed_employees": failing}) if failing else decision


def run_location_specialist(
    deps: VanpoolDeps, config: RunConfig, vanpool_id: str
) -> LocationDecision:
    vanpool = deps.repo.get_vanpool(vanpool_id)
    riders = ", ".join(e.employee_id for e in vanpool.riders)
    agent = _agent(
        config,
        "location_specialist",
        tools=location_tools(deps),
        decision_model=LocationDecision,
        system_prompt=load_prompt(
            APP_PACKAGE, "location_specialist", vanpool_id=vanpool_id, riders=riders
        ),
        context_schema=VanpoolRef,
        limits=_limits(deps, config, len(vanpool.riders) * 2 + 3),
    )
    ctx = VanpoolRef(vanpool_id)
    result = agent.run(f"Check the commute of every rider of {vanpool_id}.", context=ctx)
    decision = result.decision or LocationDecision(
        verdict="NEEDS_REVIEW", confidence=0, reasoning="No decision."
    )
    decision = _failures_from_evidence(decision, "within_threshold")
    return decision.model_copy(update={"run": _run_info(result, config, "location_specialist")})


def run_shift_specialist(
    deps: VanpoolDeps,
    config: RunConfig,
    employee_ids: Sequence[str],
    vanpool_id: str | None = None,
    on: date | None = None,
) -> ShiftDecision:
    ids = tuple(employee_ids)
    # The spec's sequencing: the vanpool and every employee exist before shifts are fetched;
    # an unknown id fails here, in one sentence, before any model call.
    if vanpool_id:
        deps.repo.get_vanpool(vanpool_id)
    for e in ids:
        deps.repo.get_employee(e)
    group = f"vanpool {vanpool_id}: " if vanpool_id else ""
    agent = _agent(
        config,
        "shift_specialist",
        tools=shift_tools(deps),
        decision_model=ShiftDecision,
        system_prompt=load_prompt(APP_PACKAGE, "shift_specialist", group=group + ", ".join(ids)),
        context_schema=ShiftGroup,
        limits=_limits(deps, config, 4),
    )
    ctx = ShiftGroup(ids, on or deps.now().date(), vanpool_id)
    result = agent.run("Are these shifts compatible for one vanpool?", context=ctx)
    decision = result.decision or ShiftDecision(
        verdict="NEEDS_REVIEW", confidence=0, reasoning="No decision."
    )
    decision = _failures_from_evidence(decision, "meets_rule")
    return decision.model_copy(update={"run": _run_info(result, config, "shift_specialist")})


def agent_verify(
    deps: VanpoolDeps,
    config: RunConfig,
    vanpool_id: str,
    checks: Sequence[str] = ("location", "shift"),
) -> Verification:
    """Both specialist agents, in parallel (the lifecycle's ``Verifier`` for the agent strategy)."""
    vanpool = deps.repo.get_vanpool(vanpool_id)
    ids = [e.employee_id for e in vanpool.riders]
    with ThreadPoolExecutor(max_workers=2) as pool:
        loc = (
            pool.submit(run_location_specialist, deps, config, vanpool_id)
            if "location" in checks
            else None
        )
        sh = (
            pool.submit(run_shift_specialist, deps, config, ids, vanpool_id)
            if "shift" in checks
            else None
        )
        return Verification(loc.result() if loc else None, sh.result() if sh else None)


# ---------------------------------------------------------------------------- outreach
_BUCKET_RE = re.compile("|".join(b.value for b in Bucket))


def verifier(config: RunConfig) -> Verifier:
    """The lifecycle's verifier that runs both specialist agents under ``config``."""

    def verify(
        deps: VanpoolDeps, vanpool_id: str, checks: Sequence[str] = ("location", "shift")
    ) -> Verification:
        return agent_verify(deps, config, vanpool_id, checks)

    return verify


def classify_with_model(
    config: RunConfig, text: str, runnable: RunnableConfig | None = None
) -> str:
    """The classifier role's bucket for a reply; its first bucket word counts. A model that
    names none leaves the keyword rules to decide (which route unclear replies to a person),
    and a reply with an escalation cue word goes to a person whatever the model says: the
    bundled model called 3 of the 6 angry replies of the outreach set acknowledgments, and an
    automated answer to an angry rider costs more than a reviewer's minute.
    ``runnable`` is the LangChain config of the call's run (a harness ``Run``'s counts the
    call); inside an agent's tool the agent's run is inherited."""
    model = config.models(ROLES["classify_reply"])
    answer = model.invoke(
        [HumanMessage(load_prompt(APP_PACKAGE, "classify_reply", reply=text[:2000]))],
        config=runnable,
    )
    found = _BUCKET_RE.search(str(answer.content).lower())
    if found is None:
        return classify_reply_keywords(text)
    return "escalation" if has_escalation_cue(text) else found.group(0)


def run_outreach_agent(
    deps: VanpoolDeps, config: RunConfig, case_id: str, reply_message_id: str | None = None
) -> OutreachResult:
    """Handle a case's thread: the initial email (template, no model) or a reply (the agent
    classifies it and words the answer; ``agent_process_reply`` writes it)."""
    if reply_message_id is None:
        return lifecycle.start_outreach(deps, case_id, "outreach_agent")
    return _reply_agent(deps, config, case_id, reply_message_id)[0]


def _reply_agent(
    deps: VanpoolDeps, config: RunConfig, case_id: str, reply_message_id: str
) -> tuple[OutreachResult, dict[str, Any]]:
    """The Outreach Agent's run on a reply, which writes nothing: its result, and what its
    tools decided (``bucket``, ``body``, ``review``)."""
    case = deps.repo.get_case(case_id)
    thread = "\n".join(
        f"[{m.direction}] {m.body[:600]}" for m in deps.repo.messages(case.thread_id or "")
    )
    ctx = OutreachContext(case_id, case.thread_id, case.vanpool_id, reply_message_id)
    agent = _agent(
        config,
        "outreach_agent",
        tools=outreach_tools(deps, lambda text: classify_with_model(config, text)),
        decision_model=OutreachResult,
        submit_name="submit_outcome",
        system_prompt=load_prompt(
            APP_PACKAGE,
            "outreach_agent",
            case_id=case_id,
            vanpool_id=case.vanpool_id,
            details=case.meta.get("details", ""),
            thread=thread or "(empty)",
            portal_url=deps.app.portal_url,
        ),
        context_schema=OutreachContext,
        limits=_limits(deps, config, 5),
    )
    result = agent.run("Handle the new reply.", context=ctx)
    bucket = ctx.done.get("bucket")
    out = OutreachResult(
        reasoning=(result.decision.reasoning if result.decision else "")[:1200],
        email_thread_id=case.thread_id,
        bucket=Bucket(bucket) if bucket else None,
        hitl_required=bool(ctx.done.get("review")) or bucket == Bucket.ESCALATION,
        run=_run_info(result, config, "outreach_agent"),
    )
    return out, ctx.done


def agent_process_reply(deps: VanpoolDeps, config: RunConfig, message_id: str) -> CaseManagerResult:
    """A reply, handled by the Outreach Agent (bucket and wording), then routed and written by
    the lifecycle in one transaction. An answer the agent put up for review makes the reply an
    escalation: a person sees it before the rider does."""
    thread_id = deps.repo.get_message(message_id).thread_id
    case_id = deps.repo.thread_case(thread_id)
    out, done = _reply_agent(deps, config, case_id, message_id)
    bucket = (
        out.bucket.value
        if out.bucket
        else classify_reply_keywords(deps.repo.get_message(message_id).body)
    )
    if done.get("review"):
        bucket = Bucket.ESCALATION.value
    step = reply_routing.process_reply(
        deps, message_id, bucket, verifier(config), "outreach_agent", draft=done.get("body")
    )
    written = step.outreach or OutreachResult(email_thread_id=thread_id)
    return step.model_copy(
        update={"outreach": written.model_copy(update={"reasoning": out.reasoning, "run": out.run})}
    )


# ---------------------------------------------------------------------------- case manager
CANCEL_APPROVAL = {"cancel_membership": {"allowed_decisions": ["approve", "reject"]}}


def _checkpointer(deps: VanpoolDeps) -> Any:
    """The deps' checkpointer, or the SQLite file next to the database (durable pauses)."""
    if deps.checkpointer is not None:
        return deps.checkpointer
    return shared_sqlite_checkpointer(deps.settings.checkpoint_path)


def _build_case_manager(
    deps: VanpoolDeps, config: RunConfig, vanpool_id: str
) -> ReactAgent[CaseManagerResult]:
    vanpool = deps.repo.get_vanpool(vanpool_id)
    case = deps.repo.open_case_for(vanpool_id)
    roster = "; ".join(
        f"{e.employee_id} (home {e.home_zip}, {e.shift_name})" for e in vanpool.riders
    )
    case_text = (
        f"{case.case_id}, status {case.status}, failed checks {case.failed_checks}"
        if case
        else "none"
    )
    tools = case_manager_tools(
        deps,
        run_location=lambda vid: run_location_specialist(deps, config, vid),
        run_shift=lambda vid: run_shift_specialist(
            deps, config, [e.employee_id for e in deps.repo.get_vanpool(vid).riders], vid
        ),
        run_outreach_agent=lambda cid: run_outreach_agent(deps, config, cid),
    )
    return _agent(
        config,
        "case_manager",
        tools=tools,
        decision_model=CaseManagerResult,
        system_prompt=load_prompt(
            APP_PACKAGE, "case_manager", vanpool_id=vanpool_id, roster=roster, case=case_text
        ),
        context_schema=CaseContext,
        limits=_limits(deps, config, 6),
        approvals=CANCEL_APPROVAL,
        checkpointer=_checkpointer(deps),
        middleware=[OfferedTools(deps)],
    )


def iter_case_manager(deps: VanpoolDeps, config: RunConfig, vanpool_id: str) -> Iterator[Event]:
    """The Case Manager's run as the runtime's event stream (for SSE); the last ``complete``
    event carries the ``CaseManagerResult`` read back from the store."""
    agent = _build_case_manager(deps, config, vanpool_id)
    ctx = CaseContext(vanpool_id)
    for event in agent.iter_events(
        f"Audit vanpool {vanpool_id}.", context=ctx, thread_id=f"vanpool-cm-{uuid.uuid4().hex[:12]}"
    ):
        if event["type"] != "complete":
            yield event
            continue
        result = event["result"]
        if result.interrupted:
            decision = _record_pause(deps, config, vanpool_id, result)
        else:
            decision = _case_manager_result(deps, config, vanpool_id, ctx, result)
        yield {"type": "complete", "result": replace(result, decision=decision)}


def run_case_manager(deps: VanpoolDeps, config: RunConfig, vanpool_id: str) -> CaseManagerResult:
    """Audit a vanpool with the Case Manager; ``cancel_membership`` pauses for a person."""
    last: Any = None
    for event in iter_case_manager(deps, config, vanpool_id):
        last = event
    decision: CaseManagerResult = last["result"].decision
    return decision


def _record_pause(
    deps: VanpoolDeps, config: RunConfig, vanpool_id: str, result: RunResult[Any]
) -> CaseManagerResult:
    """The Case Manager paused before cancel_membership: the approval is kept with the case
    (thread id of the checkpointed run), so any later process can resume it."""
    case = deps.repo.open_case_for(vanpool_id)
    if case is None:
        raise InputError(f"The Case Manager paused on {vanpool_id} without an open case.")
    approval = dict(case.meta.get("approval") or {})
    approval.update(
        {
            "action": "cancel_membership",
            "mode": "agent",
            "thread_id": result.thread_id,
            "vanpool_id": vanpool_id,
            "allowed": ["approve", "reject"],
        }
    )
    approval.setdefault(
        "employee_ids",
        sorted({e for ids in case.meta.get("failed_employees", {}).values() for e in ids}),
    )
    deps.repo.update_case(
        case.case_id,
        deps.now(),
        "case_manager_agent",
        status="pre_cancel",
        meta={"approval": approval},
        action="approval_requested",
    )
    return lifecycle.case_result(
        deps.repo.get_case(case.case_id),
        reasoning="cancel_membership waits for a person's approval.",
        run=_run_info(result, config, "case_manager"),
    )


def resume_case_manager(
    deps: VanpoolDeps, config: RunConfig, case_id: str, decision: str
) -> CaseManagerResult | None:
    """Resume the paused Case Manager run of a case with a person's decision; None when the
    run is no longer paused (its checkpoint is gone, or it already went past the approval):
    the caller then applies the decision itself, behind the same journal."""
    case = deps.repo.get_case(case_id)
    approval = case.meta.get("approval") or {}
    agent = _build_case_manager(deps, config, case.vanpool_id)
    state = agent.graph.get_state({"configurable": {"thread_id": approval.get("thread_id", "")}})
    if not state.interrupts:
        return None
    ctx = CaseContext(case.vanpool_id)
    answer: dict[str, Any] = {"type": decision}
    if decision == "reject":
        answer["message"] = "A reviewer rejected the cancellation; the membership stays."
    result = agent.resume(approval["thread_id"], [answer], context=ctx)
    ctx.results.setdefault("case_id", case_id)
    return _case_manager_result(deps, config, case.vanpool_id, ctx, result)


def _case_manager_result(
    deps: VanpoolDeps,
    config: RunConfig,
    vanpool_id: str,
    ctx: CaseContext,
    result: RunResult[Any],
) -> CaseManagerResult:
    """The outcome from the store and the run's tool effects; the model adds its reasoning."""
    info = _run_info(result, config, "case_manager")
    model_reasoning = result.decision.reasoning if result.decision else ""
    case_id = ctx.results.get("case_id")
    checks_ran = "location" in ctx.results and "shift" in ctx.results
    verification = (
        Verification(ctx.results["location"], ctx.results["shift"]) if checks_ran else None
    )
    if case_id:
        case = deps.repo.get_case(case_id)
        return lifecycle.case_result(
            case,
            confidence=result.decision.confidence if result.decision else 0,
            reasoning=model_reasoning or case.meta.get("details", ""),
            outreach=ctx.results.get("outreach"),
            run=info,
        )
    if verification is not None and not verification.failed_checks and not verification.undecided:
        return CaseManagerResult(
            verdict="verified",
            confidence=result.decision.confidence if result.decision else 100,
            reasoning=model_reasoning or "Both specialists passed.",
            run=info,
        )
    if verification is not None and verification.undecided:
        # A check without a verdict is no evidence either way: no case, a person looks.
        reasoning = (
            f"{vanpool_id}: the {' and '.join(verification.undecided)} check ended without a "
            f"verdict ({verification.details[:600]}); a person should look."
        )
    else:
        reasoning = model_reasoning or (
            f"The run ended ({result.ended_by}) before the audit of {vanpool_id} was complete."
        )
    return CaseManagerResult.model_validate(
        {
            "verdict": "NEEDS_REVIEW",
            "confidence": 0,
            "reasoning": reasoning,
            "failed_checks": verification.failed_checks if verification else [],
        }
    ).model_copy(update={"run": info})
