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

    from casework.apps.vanpool import service
    from casework.apps.vanpool.deps import build_deps
    from casework.apps.vanpool.settings import VanpoolSettings

    console = console or Console()
    mailbox, out_port, in_port = _Mailbox(), _free_port(), _free_port()
    outbound = Controller(mailbox, hostname="127.0.0.1", port=out_port)
    outbound.start()
    deps = build_deps(app=VanpoolSettings(smtp_port=out_port))
    inbound = service.serve_inbound(deps, "127.0.0.1", in_port)
    try:
        service.import_roster(deps)
        counts = deps.repo.counts()
        console.print(f"[bold]vanpool[/]: {counts['vanpools']} vanpools, {counts['riders']} riders")
        verdicts: dict[str, int] = {}
        first_case = None
        for vanpool_id in deps.repo.vanpool_ids():
            result = service.run_audit("rules", vanpool_id, deps)
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
        step = service.process_reply(deps, msg.message_id, "update", actor="demo")
        console.print(
            f"  reply filed ({msg.message_id}), bucket update -> re-audit -> {step.verdict}"
        )
        now = deps.now()
        for week in (1, 2):
            later = deps.at(now + timedelta(days=7 * week, minutes=1))
            out = service.tick(later)
            console.print(
                f"  week {week}: {[(r['case_id'], r['status']) for r in out['reaudited']]}"
            )
        pending = [a for a in service.pending_approvals(deps) if a["case_id"] == case.case_id]
        if pending:
            a = pending[0]
            console.print(f"  approval pending: cancel {a['employee_ids']} in {a['vanpool_id']}")
            closed = service.decide_approval(deps, case.case_id, "approve", actor="demo")
            console.print(f"  approved -> {closed.status} ({closed.outcome})")
        console.print(f"  {mailbox.count} emails delivered in all")
    finally:
        inbound.stop()
        outbound.stop()
