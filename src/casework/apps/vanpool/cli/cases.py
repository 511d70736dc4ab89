"""``cases``, ``case`` and the approvals a person decides: ``approvals``, ``approve``,
``edit``, ``reject``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from casework.apps.vanpool.cli.common import open_deps, run_config
from casework.clikit import JsonOption, console, print_json

__all__ = ["app"]

app = typer.Typer()


@app.command()
def cases(
    status: str | None = typer.Option(None, "--status", help="Only cases in this status."),
    as_json: JsonOption = False,
) -> None:
    """List cases."""
    deps = open_deps()
    items = deps.repo.list_cases(status)
    if as_json:
        print_json([_case_dict(c) for c in items])
        return
    table = Table("case", "vanpool", "status", "reason", "failed checks", "outcome", "due")
    for c in items:
        table.add_row(
            c.case_id,
            c.vanpool_id,
            c.status,
            c.meta.get("reason", ""),
            ", ".join(c.failed_checks),
            c.outcome or "-",
            c.due_at.strftime("%Y-%m-%d %H:%M") if c.due_at else "-",
        )
    console.print(table)


def _case_dict(c: Any) -> dict[str, Any]:
    return asdict(c)


@app.command()
def case(
    case_id: str = typer.Argument(..., help="CASE-XXXXXXXX"),
    as_json: JsonOption = False,
) -> None:
    """Why a case failed (evidence with citations), its emails and its audit trail."""
    from casework.apps.vanpool.service import case_history

    c, messages, log = case_history(open_deps(), case_id)
    if as_json:
        print_json({**_case_dict(c), "messages": [m.__dict__ for m in messages], "audit_log": log})
        return
    console.print(
        f"[bold]{c.case_id}[/] vanpool {c.vanpool_id}: {c.status}"
        + (f" ({c.outcome})" if c.outcome else "")
    )
    console.print(f"  reason: {c.meta.get('reason')}  failed checks: {', '.join(c.failed_checks)}")
    console.print(f"  {c.meta.get('details', '')}", highlight=False)
    for e in c.meta.get("evidence", []):
        values = ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("type", "ref"))
        console.print(f"  [cyan]{e['type']}[/] {e['ref']}: {values}", highlight=False)
    for m in messages:
        console.print(
            f"  {m.created_at:%Y-%m-%d %H:%M} {m.direction} {m.message_id} {m.status}"
            + (f" bucket={m.bucket}" if m.bucket else "")
            + f": {m.body.splitlines()[0][:80] if m.body else ''}",
            highlight=False,
        )
    for a in log:
        by = a["caller"] or "(caller not recorded)"
        console.print(
            f"  [dim]{a['at']:%Y-%m-%d %H:%M} {a['actor']} {a['action']} (caller: {by})[/]",
            highlight=False,
        )


# ---------------------------------------------------------------------------- approvals
@app.command()
def approvals(as_json: JsonOption = False) -> None:
    """Pending approvals: drafted replies to escalations and membership cancellations."""
    from casework.apps.vanpool.service import pending_approvals

    items = pending_approvals(open_deps())
    if as_json:
        print_json(items)
        return
    if not items:
        console.print("No pending approvals.")
    for a in items:
        what = (
            f"cancel membership of {', '.join(a['employee_ids'])} in {a['vanpool_id']}"
            if a["action"] == "cancel_membership"
            else f"send drafted reply {a['message_id']}"
        )
        allowed = escape(f"[{' / '.join(a['allowed'])}]")
        console.print(f"{a['case_id']} ({a['status']}): {what} {allowed}")


def _decide(case_id: str, decision: str, body: str | None = None) -> None:
    from casework.apps.vanpool.models import check_id
    from casework.apps.vanpool.service import decide_approval

    deps = open_deps()
    c = decide_approval(deps, check_id("CASE", case_id), decision, body, config=run_config(deps))
    console.print(
        f"{c.case_id}: {decision} -> {c.status}" + (f" ({c.outcome})" if c.outcome else "")
    )


@app.command()
def approve(case_id: str = typer.Argument(..., help="CASE-XXXXXXXX")) -> None:
    """Approve the case's pending action (send the draft / cancel the membership)."""
    _decide(case_id, "approve")


@app.command()
def edit(
    case_id: str = typer.Argument(..., help="CASE-XXXXXXXX"),
    text: str = typer.Argument(..., help="The email text to send instead of the draft."),
) -> None:
    """Edit the drafted reply, then send it."""
    _decide(case_id, "edit", text)


@app.command()
def reject(case_id: str = typer.Argument(..., help="CASE-XXXXXXXX")) -> None:
    """Reject the pending action (the draft is not sent / the membership stays)."""
    _decide(case_id, "reject")
