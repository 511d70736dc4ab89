"""``casework demo`` for vanpool: seed, audit every vanpool with the rules auditor, then walk
one case through outreach, a reply, three silent weeks and an approved cancellation. A local
SMTP server on loopback stands in for the riders' mailboxes, so every email really travels."""

from __future__ import annotations

import asyncio
import socket
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import aiosmtplib
from rich.console import Console

__all__ = ["run_demo"]


class _Mailbox:
    """The riders' side: an SMTP server on loopback that keeps what it receives."""

    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.count += 1
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_demo(console: Console | None = None) -> None:
    from aiosmtpd.controller import Controller

    from casework.apps.vanpool import lifecycle
    from casework.apps.vanpool.deps import build_deps
    from casework.apps.vanpool.mail import serve_inbound
    from casework.apps.vanpool.roster import import_roster
    from casework.apps.vanpool.settings import VanpoolSettings
    from casework.apps.vanpool.synth import DATA_DIR

    console = console or Console()
    mailbox, out_port, in_port = _Mailbox(), _free_port(), _free_port()
    outbound = Controller(mailbox, hostname="127.0.0.1", port=out_port)
    outbound.start()
    deps = build_deps(app=VanpoolSettings(smtp_port=out_port))
    inbound = serve_inbound(deps.repo, "127.0.0.1", in_port)
    try:
        import_roster(deps.repo, DATA_DIR / "roster.json", deps.now())
        counts = deps.repo.counts()
        console.print(f"[bold]vanpool[/]: {counts['vanpools']} vanpools, {counts['riders']} riders")
        verdicts: dict[str, int] = {}
        first_case = None
        for vanpool_id in deps.repo.vanpool_ids():
            result, _ = lifecycle.audit_vanpool(deps, vanpool_id)
            verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
            if first_case is None and result.case_id and result.verdict == "pending_reply":
                first_case = result.case_id
        console.print(f"  rules audit: {verdicts}; {mailbox.count} outreach emails delivered")
        if first_case is None:
            console.print("  every vanpool already has a case in progress; nothing more to show")
            return
        case = deps.repo.get_case(first_case)
        console.print(
            f"  {case.case_id} {case.vanpool_id}: {case.meta['details']}", highlight=False
        )
        # A rider answers by email; the receiver files it into the thread.
        reply = EmailMessage()
        reply["From"], reply["To"] = "rider@example.com", deps.app.sender
        reply["Subject"] = f"Re: membership review [{case.thread_id}]"
        reply.set_content("I moved recently, I will update my address in the portal.")
        asyncio.run(aiosmtplib.send(reply, hostname="127.0.0.1", port=in_port))
        assert case.thread_id is not None  # outreach created it
        [msg] = [m for m in deps.repo.messages(case.thread_id) if m.direction == "inbound"][-1:]
        step = lifecycle.process_reply(
            deps, msg.message_id, "update", lifecycle.rules_verify, "demo"
        )
        console.print(
            f"  reply filed ({msg.message_id}), bucket update -> re-audit -> {step.verdict}"
        )
        now = deps.now()
        for week in (1, 2):
            later = deps.at(now + timedelta(days=7 * week, minutes=1))
            out = lifecycle.tick(later)
            console.print(
                f"  week {week}: {[(r['case_id'], r['status']) for r in out['reaudited']]}"
            )
        pending = [a for a in lifecycle.pending_approvals(deps) if a["case_id"] == case.case_id]
        if pending:
            a = pending[0]
            console.print(f"  approval pending: cancel {a['employee_ids']} in {a['vanpool_id']}")
            closed = lifecycle.decide_approval(deps, case.case_id, "approve", actor="demo")
            console.print(f"  approved -> {closed.status} ({closed.outcome})")
        console.print(f"  {mailbox.count} emails delivered in all")
    finally:
        inbound.stop()
        outbound.stop()
