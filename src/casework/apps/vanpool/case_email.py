"""A case's email: its thread and recipients (the flagged riders), the values its templates
are filled with, and ``send_email``: queue on the thread, send now or after the commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from casework.apps.vanpool import mail
from casework.apps.vanpool.models import (
    CaseView,
    OutreachResult,
)
from casework.errors import InputError

if TYPE_CHECKING:
    from casework.apps.vanpool.deps import VanpoolDeps

__all__ = ["case_thread", "email_values", "send_email", "template_key"]


def template_key(failed_checks: Sequence[str]) -> str:
    """The spec's initial-outreach template for the failed checks."""
    if "shift" in failed_checks and "location" in failed_checks:
        return "both_mismatch"
    if "location" in failed_checks:
        return "location_mismatch"
    if "shift" in failed_checks:
        return "shift_mismatch"
    raise InputError("A case needs a failed check before outreach.")


def _recipients(deps: VanpoolDeps, case: CaseView) -> list[str]:
    """The flagged riders; every rider when a check failed without naming anyone."""
    failing = case.meta.get("failed_employees", {})
    ids = sorted({e for ids in failing.values() for e in ids})
    if not ids:
        return [e.email for e in deps.repo.get_vanpool(case.vanpool_id).riders]
    return [deps.repo.get_employee(e).email for e in ids]


def _names(case: CaseView) -> str:
    failing = case.meta.get("failed_employees", {})
    return ", ".join(sorted({e for ids in failing.values() for e in ids})) or "some riders"


def email_values(deps: VanpoolDeps, case: CaseView, **more: Any) -> dict[str, Any]:
    vanpool = deps.repo.get_vanpool(case.vanpool_id)
    return {
        "vanpool_id": case.vanpool_id,
        "case_id": case.case_id,
        "names": _names(case),
        "details": case.meta.get("details", ""),
        "threshold": f"{vanpool.max_commute_miles:g}",
        "majority_shift": case.meta.get("majority_shift", "the vanpool's schedule"),
        "portal_url": deps.app.portal_url,
        **more,
    }


def case_thread(deps: VanpoolDeps, case: CaseView) -> str:
    if case.thread_id:
        return case.thread_id
    subject = f"Vanpool {case.vanpool_id} membership review ({case.case_id})"
    return deps.repo.create_thread(case.case_id, subject, _recipients(deps, case), deps.now())


def send_email(
    deps: VanpoolDeps, case_id: str, body: str, actor: str, subject: str | None = None
) -> OutreachResult:
    """Queue an email on the case's thread and try to send it now.

    ``sent`` is True only when the SMTP server accepted it; otherwise it stays queued for
    ``tick`` to retry and the result says so. Inside a transaction (a reply's handling) the
    email is queued with its audit row, and the SMTP send waits for the commit: a handling
    rolled back by a crash has mailed nobody, and its retry queues the email once.
    """
    case = deps.repo.get_case(case_id)
    thread_id = case_thread(deps, case)
    info = deps.repo.thread_info(thread_id)
    now = deps.now()
    msg_id = mail.queue_message(
        deps.repo,
        deps.app,
        thread_id=thread_id,
        recipients=info["recipients"],
        subject=subject or f"Re: {info['subject']}",
        body=body,
        now=now,
    )
    where = {"case_id": case_id, "vanpool_id": case.vanpool_id}
    detail = {"thread_id": thread_id, "message_id": msg_id}
    if deps.repo.in_transaction():
        deps.repo.audit(now, actor, "email_queued", **where, detail=detail)

        def deliver() -> None:
            if mail.send_one(deps.repo, deps.app, deps.mailer, msg_id, deps.now()):
                deps.repo.audit(deps.now(), actor, "email_sent", **where, detail=detail)

        deps.repo.after_commit(deliver)
        return OutreachResult(
            verdict="queued",
            reasoning="Queued; it is sent once the reply's handling is recorded.",
            email_thread_id=thread_id,
            message_id=msg_id,
        )
    sent = mail.send_one(deps.repo, deps.app, deps.mailer, msg_id, now)
    deps.repo.audit(now, actor, "email_sent" if sent else "email_queued", **where, detail=detail)
    return OutreachResult(
        verdict="sent" if sent else "queued",
        reasoning="Accepted by the SMTP server."
        if sent
        else "Queued: the SMTP server did not accept it yet; it will be retried.",
        email_thread_id=thread_id,
        message_id=msg_id,
        sent=sent,
    )
