"""The vanpool service: the one module the app's faces call (``cli``, ``api``, ``review``,
``demo``, ``evalsuite``).

It owns the orchestration above a single strategy run: seeding and importing rosters,
auditing one vanpool or many (``run_batch``), filing and routing replies, advancing time
(``tick``), the approvals a person decides, a case's life as an evaluation scenario, and the
pairwise judging of two stored evaluation runs.
Below it: ``strategies`` (one decision per input), ``agent`` (the graphs), ``lifecycle`` (the
case steps as plain functions), ``mail``, ``roster`` and the repository. Nothing below
imports it, so the Case Manager's paused run is resumed from here (``decide_approval``),
never from the lifecycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from casework.apps.vanpool import agent, lifecycle, mail, reply_routing, roster, verification
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.geography import zip_coordinates
from casework.apps.vanpool.lifecycle import REVIEWER, case_result
from casework.apps.vanpool.models import (
    ApprovalRequest,
    ApprovalSettled,
    CaseManagerResult,
    CaseStatus,
    CaseView,
    ImportReport,
    MessageView,
    OutreachResult,
    check_id,
)
from casework.apps.vanpool.pairwise import Pair, PairwiseResult, compare_answers, pairs_of
from casework.apps.vanpool.repository import APPROVAL_REQUESTED, OPEN_STATUSES, REVIEW_DECISION
from casework.apps.vanpool.scenarios import Event, LifecycleResult, Scenario
from casework.apps.vanpool.settings import VanpoolSettings
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
from casework.apps.vanpool.verification import Verifier
from casework.config import Settings, get_settings
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.evals.store import load_run
from casework.llm.roles import RoleModels
from casework.registry import strategy_named
from casework.runtime.batch import BatchConfig, BatchResult, run_batch
from casework.runtime.context import caller_name
from casework.runtime.events import Event as RunEvent
from casework.runtime.review_provider import DecideOutcome
from casework.runtime.runconfig import RunConfig

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

BUNDLED_ROSTER = DATA_DIR / "roster.json"
"""The synthetic roster ``vanpool seed`` loads (40 vanpools, 300 employees)."""

AGENT_ACTOR = "case_manager_agent"


# ---------------------------------------------------------------------------- roster
def import_roster(
    deps: VanpoolDeps, path: Path = BUNDLED_ROSTER, *, dry_run: bool = False
) -> ImportReport:
    """Validate every row of a roster file, then write it in one transaction; every refused
    row is reported at once (``RosterRefused``) and nothing is written. ``dry_run`` checks the
    file against the store and writes nothing."""
    return roster.import_roster(deps.repo, path, deps.now(), dry_run=dry_run)


def check_roster(path: Path) -> None:
    """Read and validate a roster file without writing anything (a bad row raises)."""
    roster.parse_roster(roster.read_rows(path))


# ---------------------------------------------------------------------------- audits
def _config(deps: VanpoolDeps, config: RunConfig | None) -> RunConfig:
    """The run config a caller gave, else the settings' (what the agents run under)."""
    return config or RunConfig.of(deps.settings)


def _for(deps: VanpoolDeps, config: RunConfig | None) -> VanpoolDeps:
    """``deps`` writing for the run's caller (a signed-in user); the local operator's own
    deps (``cli:<os user>``) when the run names none."""
    if config is None or config.caller is None:
        return deps
    return deps.by(caller_name(config.caller))


def verifier_for(strategy: str, config: RunConfig) -> tuple[Verifier, str]:
    """The lifecycle's verifier and actor for a strategy: the specialist agents (under
    ``config``) for ``agent``, the distance and overlap rules otherwise."""
    if strategy == "agent":
        return agent.verifier(config), AGENT_ACTOR
    return verification.rules_verify, verification.RULES_ACTOR


def run_audit(
    strategy: str, vanpool_id: str, deps: VanpoolDeps, config: RunConfig | None = None
) -> CaseManagerResult:
    """One vanpool's audit with a strategy of ``STRATEGIES`` by name, under ``config`` (the
    settings' by default)."""
    run = strategy_named(STRATEGIES, strategy)
    result = run(AuditInput(vanpool_id), _for(deps, config), _config(deps, config))
    assert isinstance(result, CaseManagerResult)
    return result


def audit_events(
    deps: VanpoolDeps, vanpool_id: str, config: RunConfig | None = None
) -> Iterator[RunEvent]:
    """The Case Manager agent's audit of one vanpool as the runtime's event stream; an
    unknown vanpool raises before the first event."""
    vid = check_id("VP", vanpool_id)
    deps.repo.get_vanpool(vid)
    return agent.iter_case_manager(_for(deps, config), _config(deps, config), vid)


def audit_row(vanpool_id: str, r: CaseManagerResult) -> dict[str, Any]:
    """One audit as a summary row (plain data: it travels back from a Ray worker)."""
    email = "-"
    if r.outreach is not None and r.outreach.message_id:
        email = "sent" if r.outreach.sent else r.outreach.verdict
    usage = r.run.usage if r.run is not None else None
    return {
        "vanpool_id": vanpool_id,
        "verdict": r.verdict,
        "failed_checks": list(r.failed_checks),
        "case_id": r.case_id,
        "email": email,
        "reasoning": r.reasoning,
        "model_calls": getattr(usage, "model_calls", 0) if usage is not None else 0,
    }


def _error_row(vanpool_id: str, error: BaseException) -> dict[str, Any]:
    if isinstance(error, CaseworkError):
        sentence = str(error)
    else:  # a bug or a lost worker: its first line, so the batch report stays one row each
        first = (str(error).strip().splitlines() or [""])[0]
        sentence = f"{type(error).__name__}: {first}".rstrip(": ")
    return {
        "vanpool_id": vanpool_id,
        "verdict": "error",
        "failed_checks": [],
        "case_id": None,
        "email": "-",
        "reasoning": sentence,
        "model_calls": 0,
    }


_deps_lock = threading.Lock()


@dataclass
class VanpoolAuditor:
    """``run_batch``'s function for ``vanpool audit --all``: a vanpool id -> its summary row.

    It pickles as its settings alone, so a Ray worker builds its own deps (store, mailer) and
    run config (models) on its first vanpool and keeps them for the rest; locally the caller's
    are shared by the worker threads."""

    strategy: str
    settings: Settings
    app: VanpoolSettings
    deps: VanpoolDeps | None = field(default=None, repr=False)
    config: RunConfig | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "deps": None, "config": None}

    def _ready(self) -> tuple[VanpoolDeps, RunConfig]:
        with _deps_lock:
            if self.deps is None:
                self.deps = build_deps(self.settings, app=self.app)
            if self.config is None:
                self.config = RunConfig.of(self.settings)
            return self.deps, self.config

    def __call__(self, vanpool_id: str) -> dict[str, Any]:
        deps, config = self._ready()
        return audit_row(vanpool_id, run_audit(self.strategy, vanpool_id, deps, config))


def audit_many(
    deps: VanpoolDeps,
    vanpool_ids: Sequence[str],
    strategy: str,
    config: BatchConfig,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    *,
    run_config: RunConfig | None = None,
) -> list[dict[str, Any]]:
    """Audit every vanpool once through the platform's batch seam (``local`` threads or
    ``ray``) under ``run_config``; one row per vanpool in the order given. A vanpool whose
    audit fails is an ``error`` row with its one sentence, and the others go on."""
    ids = list(dict.fromkeys(vanpool_ids))  # a vanpool named twice is audited once
    auditor = VanpoolAuditor(strategy, deps.settings, deps.app, deps, _config(deps, run_config))

    def row(item: BatchResult[dict[str, Any]]) -> dict[str, Any]:
        if item.value is not None:
            return item.value
        return _error_row(str(item.key), item.error or RuntimeError("no result"))

    def done(item: BatchResult[dict[str, Any]]) -> None:
        if on_done is not None:
            on_done(row(item))

    results = run_batch(ids, auditor, replace(config, progress=done), key=lambda v: v)
    return [row(r) for r in results]


# ---------------------------------------------------------------------------- cases
def case_history(
    deps: VanpoolDeps, case_id: str
) -> tuple[CaseView, list[MessageView], list[dict[str, Any]]]:
    """A case (any id spelling ``check_id`` accepts), its emails and its audit trail."""
    c = deps.repo.get_case(check_id("CASE", case_id))
    messages = deps.repo.messages(c.thread_id) if c.thread_id else []
    return c, messages, deps.repo.audit_log(case_id=c.case_id)


def case_detail(deps: VanpoolDeps, case_id: str) -> dict[str, Any]:
    """``case_history`` as plain data (``vanpool case --json``, ``GET /cases/{id}``)."""
    c, messages, log = case_history(deps, case_id)
    return {**asdict(c), "messages": [m.__dict__ for m in messages], "audit_log": log}


# ---------------------------------------------------------------------------- replies
def process_reply(
    deps: VanpoolDeps,
    message_id: str,
    bucket: str,
    actor: str = verification.RULES_ACTOR,
    config: RunConfig | None = None,
) -> CaseManagerResult:
    """Route a filed reply whose bucket is known, re-auditing with the rules auditor; the
    log names ``config``'s caller."""
    return reply_routing.process_reply(
        _for(deps, config), message_id, bucket, verification.rules_verify, actor
    )


def handle_reply(
    deps: VanpoolDeps,
    message_id: str,
    strategy: str = "cascade",
    config: RunConfig | None = None,
) -> CaseManagerResult:
    """Classify and route one filed reply: the outreach cascade (cue words, then the bundled
    model's choice; a reply no layer is sure of goes to a person), keyword rules, or the
    Outreach Agent. Classifying writes nothing; the routing is one transaction, so a crash
    leaves the reply ``received`` for the next ``tick``."""
    strategy_named(STRATEGIES, strategy)
    config = _config(deps, config)
    if strategy == "agent":  # the Outreach Agent classifies and words the answer
        return agent.agent_process_reply(_for(deps, config), config, message_id)
    body = deps.repo.get_message(message_id).body
    decided = OUTREACH_STRATEGIES[strategy](ReplyInput(body), deps, config)
    assert isinstance(decided, OutreachResult)
    sure = decided.bucket is not None and decided.verdict != "NEEDS_REVIEW"
    bucket = decided.bucket.value if sure and decided.bucket else "escalation"  # else a person
    by = decided.run.decided_by if decided.run else None
    actor = verification.RULES_ACTOR if by in (None, "rules") else f"reply_{by}"  # who chose it
    return process_reply(deps, message_id, bucket, actor, config)


def reply_to_case(
    deps: VanpoolDeps,
    case_id: str,
    text: str,
    strategy: str = "cascade",
    config: RunConfig | None = None,
) -> CaseManagerResult:
    """File a rider's reply into the case's thread (as if it came by email) and handle it."""
    if not text.strip():
        raise InputError("The reply is empty.")
    case = deps.repo.get_case(check_id("CASE", case_id))
    if not case.thread_id:
        raise InputError(f"Case {case.case_id} has no email thread yet.")
    info = deps.repo.thread_info(case.thread_id)
    message_id = deps.repo.add_message(
        case.thread_id,
        direction="inbound",
        status="received",
        sender=", ".join(info["recipients"]),
        recipients=[deps.app.sender],
        subject=f"Re: {info['subject']}",
        body=text,
        now=deps.now(),
    )
    return handle_reply(deps, message_id, strategy, config)


def serve_inbound(
    deps: VanpoolDeps,
    host: str,
    port: int,
    on_reply: Callable[[str, str], None] | None = None,
) -> Any:
    """Receive replies by SMTP in a background thread, filing each into its thread; returns
    the controller (``.stop()``)."""
    return mail.serve_inbound(deps.repo, host, port, on_reply)


# ---------------------------------------------------------------------------- time
def tick(
    deps: VanpoolDeps,
    strategy: str = "cascade",
    *,
    verifier: Verifier | None = None,
    config: RunConfig | None = None,
) -> dict[str, Any]:
    """Advance time: handle replies left ``received`` (their handling was cut short), retry
    queued email, re-audit cases whose reply timeout has passed (with the strategy's
    verifier, or ``verifier``). The log names ``config``'s caller."""
    config = _config(deps, config)
    verify = verifier or verifier_for(strategy, config)[0]
    now = deps.now()
    replies: list[dict[str, Any]] = []
    for message_id in deps.repo.received_replies():
        try:
            handled = handle_reply(deps, message_id, strategy, config)
        except CaseworkError as exc:  # it stays received; the other replies and time go on
            replies.append({"message_id": message_id, "case_id": None, "error": str(exc)})
            continue
        replies.append({"message_id": message_id, "case_id": handled.case_id})
    mine = _for(deps, config)
    delivery = mail.deliver_queue(deps.repo, deps.app, deps.mailer, now)
    reaudited = []
    for case in deps.repo.due_cases(now):
        # the timeout re-audit is recorded as the rules auditor's, whoever verifies
        after = lifecycle.reaudit(
            mine, case.case_id, verify, verification.RULES_ACTOR, trigger="timeout"
        )
        reaudited.append(
            {"case_id": case.case_id, "status": after.status, "outcome": after.outcome}
        )
    return {"now": now.isoformat(), "replies": replies, **delivery, "reaudited": reaudited}


# ---------------------------------------------------------------------------- approvals
def pending_approvals(deps: VanpoolDeps) -> list[dict[str, Any]]:
    """Every open case's pending approval (a drafted reply or a membership cancellation)."""
    out = []
    for case in deps.repo.list_cases():
        approval = case.meta.get("approval")
        if approval and case.status in OPEN_STATUSES:
            out.append(
                {
                    "case_id": case.case_id,
                    "vanpool_id": case.vanpool_id,
                    "status": case.status,
                    **approval,
                }
            )
    return out


def decide_approval(
    deps: VanpoolDeps,
    case_id: str,
    decision: str,
    body: str | None = None,
    actor: str = REVIEWER,
    config: RunConfig | None = None,
) -> CaseView:
    """A person's decision on a case's pending approval (approve / edit / reject); a paused
    agent run resumes under ``config``.

    The effect runs before the approval is cleared, behind the journal, so a decision
    submitted twice, or retried after a crash, never sends or cancels twice. The log names
    ``config``'s caller beside ``actor``.
    """
    deps = _for(deps, config)
    case = deps.repo.get_case(case_id)
    approval = case.meta.get("approval")
    if not approval or case.status == CaseStatus.CLOSED:
        raise NotFoundError(
            f"Case {case_id} has no pending approval; `casework vanpool approvals` lists them."
        )
    if decision not in approval.get("allowed", []):
        raise InputError(
            f"{approval['action']} accepts {' / '.join(approval['allowed'])}, not {decision!r}."
        )
    if decision == "edit" and not (body and body.strip()):
        raise InputError("An edit needs the new email text.")
    if approval.get("mode") == "agent":
        # The Case Manager's run is paused (checkpointed) before cancel_membership: resume it.
        agent.resume_case_manager(deps, _config(deps, config), case_id, decision)
        case = deps.repo.get_case(case_id)
        if case.status != CaseStatus.CLOSED:
            return lifecycle.decide_cancel(deps, case_id, decision, approval, actor)
        return case
    if approval["action"] == "cancel_membership":
        return lifecycle.decide_cancel(deps, case_id, decision, approval, actor)
    return lifecycle.decide_draft(deps, case_id, decision, approval["message_id"], body, actor)


def _settled_outcome(settled: ApprovalSettled) -> str:
    if settled.action == "case_closed":
        if settled.detail.get("outcome") == "cancelled":
            return "approved: membership cancelled"
        return "rejected: the membership stays"
    return {
        "draft_approved": "approved: the draft was sent",
        "draft_edited": "edited and sent",
        "draft_rejected": "rejected: the draft was not sent",
        APPROVAL_REQUESTED: "replaced by a later request",
    }.get(settled.action, settled.action)


def settled_approval(deps: VanpoolDeps, request: ApprovalRequest) -> DecideOutcome | None:
    """How an approval request was settled and by whom; None while it still waits."""
    settled = deps.repo.approval_settled(request)
    if settled is None:
        return None
    return DecideOutcome(
        applied=False,
        outcome=_settled_outcome(settled),
        decided_by=settled.decided_by,
        decided_at=settled.decided_at,
    )


def decide_approval_request(
    deps: VanpoolDeps,
    request_id: int,
    decision: str,
    *,
    body: str | None,
    note: str,
    actor: str,
    config: RunConfig | None = None,
) -> DecideOutcome:
    """The review inbox's decision on one approval request: ``decide_approval`` on its case
    (a paused agent run resumes under ``config``), then a ``review_decision`` row naming who
    decided and why. A request another reviewer settled first is not decided again: the answer
    reads who was first."""
    request = deps.repo.approval_request(request_id)
    if not deps.repo.approval_waiting(request.id):
        return _settled_or_gone(deps, request)
    try:
        decide_approval(deps, request.case_id, decision, body, actor=actor, config=config)
    except NotFoundError:
        # Lost a race: the other decision cleared the approval while this one started.
        return _settled_or_gone(deps, request)
    # Who decided, in the log: a resumed agent run writes the effect rows under its name.
    _for(deps, config).repo.audit(
        deps.now(),
        actor,
        REVIEW_DECISION,
        case_id=request.case_id,
        vanpool_id=request.vanpool_id,
        detail={"decision": decision, "note": note, "request": request.id},
    )
    first = settled_approval(deps, request)
    if first is None:  # the decision ran, but left no row we know: report it as ours
        return DecideOutcome(True, decision, actor, deps.now())
    return replace(first, applied=first.decided_by == actor)


def _settled_or_gone(deps: VanpoolDeps, request: ApprovalRequest) -> DecideOutcome:
    first = settled_approval(deps, request)
    if first is None:
        raise NotFoundError(
            f"Case {request.case_id} has no pending approval any more; reload the inbox."
        )
    return first


# ---------------------------------------------------------------------------- pairwise
@dataclass(frozen=True)
class RunComparison:
    """Two stored vanpool evaluation runs, the cases both answered, and the judge."""

    a: Any
    b: Any
    judge: str
    pairs: list[Pair]
    model: Any


def compare_runs(
    run_a: str, run_b: str, judge_model: str | None = None, limit: int | None = None
) -> RunComparison:
    """Load two stored runs (id, prefix or 'latest') of vanpool and the judge's model (the
    judge role's unless named); ``judge_runs`` then compares their answers."""
    models = RoleModels(get_settings(), roles={"judge": judge_model} if judge_model else None)
    a, b = load_run(run_a), load_run(run_b)
    if a.app != "vanpool" or b.app != "vanpool":
        raise InputError(f"Runs {a.run_id} and {b.run_id} are not both vanpool evaluations.")
    pairs = pairs_of(a, b, limit)
    return RunComparison(a, b, models.name("judge"), pairs, models("judge"))


def judge_runs(
    comparison: RunComparison, on_done: Callable[[], None] | None = None
) -> PairwiseResult:
    """Which run's answer is better, case by case (each pair judged in both orders)."""
    return compare_answers(comparison.model, comparison.pairs, on_done=on_done)


# ---------------------------------------------------------------------------- scenarios
def _apply(deps: VanpoolDeps, case_id: str, event: Event, strategy: str, config: RunConfig) -> None:
    case = deps.repo.get_case(case_id)
    if event.reply is not None:
        reply_to_case(deps, case_id, event.reply, strategy, config)
    elif event.moves_near_pickup is not None:
        eid = check_id("EMP", event.moves_near_pickup)
        zip_code = deps.repo.get_vanpool(case.vanpool_id).pickup_zip
        home = zip_coordinates(zip_code)
        deps.repo.update_employee(
            eid, deps.now(), home_zip=zip_code, home_lat=home.lat, home_lng=home.lng
        )
    elif event.timeout:
        if case.status == "pending_reply" and case.due_at and case.due_at <= deps.now():
            verify, actor = verifier_for(strategy, config)
            lifecycle.reaudit(deps, case_id, verify, actor, trigger="timeout")
    elif event.review is not None and case.meta.get("approval") and case.status != "closed":
        decide_approval(deps, case_id, event.review, config=config)


def run_scenario(
    scenario: Scenario, deps: VanpoolDeps, strategy: str, config: RunConfig
) -> LifecycleResult:
    """Audit the vanpool with ``strategy`` under ``config``, then play the events on its case."""
    start = deps.now()
    audited = run_audit(strategy, scenario.vanpool_id, deps, config)
    if audited.case_id is None:
        return LifecycleResult.model_validate(audited.model_dump()).model_copy(
            update={"run": audited.run}
        )
    for event in scenario.events:
        at = deps.at(start + timedelta(days=event.day))
        _apply(at, audited.case_id, event, strategy, config)
    case = deps.repo.get_case(audited.case_id)
    cancelled = sorted(
        {
            e
            for entry in deps.repo.audit_log(case_id=case.case_id)
            if entry["action"] == "membership_cancelled"
            for e in entry["detail"]["employee_ids"]
        }
    )
    hours = (
        round((case.resolved_at - case.created_at).total_seconds() / 3600, 2)
        if case.resolved_at
        else None
    )
    outbound = [m for m in deps.repo.messages(case.thread_id or "") if m.direction == "outbound"]
    final = case_result(case, reasoning=case.meta.get("details", ""))
    return LifecycleResult.model_validate(
        {
            **final.model_dump(),
            "resolution_hours": hours,
            "cancelled_employees": cancelled,
            "last_email": outbound[-1].body[:1500] if outbound else None,
        }
    ).model_copy(update={"run": audited.run})
