"""Replies and time: a classified reply routed, a rider's reply filed and handled, the
inbound mail server, and ``tick`` (replies waiting, timeouts, outbound mail)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from casework.apps.vanpool import agent, lifecycle, mail, reply_routing, verification
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import CaseManagerResult, OutreachResult, check_id
from casework.apps.vanpool.service.audits import verifier_for
from casework.apps.vanpool.service.callers import config_or_default, deps_for
from casework.apps.vanpool.strategies import OUTREACH_STRATEGIES, STRATEGIES, ReplyInput
from casework.apps.vanpool.verification import Verifier
from casework.errors import CaseworkError, InputError
from casework.registry import strategy_named
from casework.runtime.runconfig import RunConfig

__all__ = ["handle_reply", "process_reply", "reply_to_case", "serve_inbound", "tick"]


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
        deps_for(deps, config), message_id, bucket, verification.rules_verify, actor
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
    config = config_or_default(deps, config)
    if strategy == "agent":  # the Outreach Agent classifies and words the answer
        return agent.agent_process_reply(deps_for(deps, config), config, message_id)
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
    config = config_or_default(deps, config)
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
    mine = deps_for(deps, config)
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
