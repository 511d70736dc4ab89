"""``casework vanpool …``: seed, import, audit, cases, approvals, replies, tick, mail serve, demo.

Thin: each command builds deps, calls ``service`` and prints.
Errors a user can cause are ``CaseworkError``s; the root CLI prints them as one sentence.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from casework.clikit import (
    AddressOption,
    ConcurrencyOption,
    ExecutorOption,
    JsonOption,
    LimitOption,
    NoProgressOption,
    console,
    print_json,
    progress,
)
from casework.clikit import err_console as err
from casework.errors import InputError
from casework.registry import strategy_named

__all__ = ["app"]

app = typer.Typer(
    help="Pool Patrol: audit vanpools for location and shift mismatches. Start with "
    "`casework vanpool seed`, then `casework vanpool audit VP-119` and `casework vanpool cases`.",
    no_args_is_help=True,
)
mail_app = typer.Typer(help="Email: the inbound SMTP receiver.", no_args_is_help=True)
app.add_typer(mail_app, name="mail")

STRATEGY_HELP = (
    "cascade (the rules; a reply without a cue word goes to the bundled model's bucket choice; "
    "a remote model only when one is configured), rules (no model) or agent (Case Manager and "
    "specialists on the configured models)."
)


def _deps(now: datetime | None = None) -> Any:
    from casework.apps.vanpool.deps import build_deps

    deps = build_deps()
    return deps.at(now) if now else deps


def _config(deps: Any) -> Any:
    """The run config of a command: the settings' models, traces and budgets."""
    from casework.runtime.runconfig import RunConfig

    return RunConfig.of(deps.settings)


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(
            f"--now {value!r} is not an ISO date-time (e.g. 2026-12-01T09:00)."
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _strategy(name: str) -> str:
    from casework.apps.vanpool.service import STRATEGIES

    strategy_named(STRATEGIES, name)  # refused before anything runs
    return name


# ---------------------------------------------------------------------------- data
@app.command()
def seed(as_json: JsonOption = False) -> None:
    """Load the bundled synthetic roster (40 vanpools, 300 employees; idempotent)."""
    from casework.apps.vanpool import service

    deps = _deps()
    counts = service.import_roster(deps).added
    _print_counts(deps, counts, as_json)


@app.command("import")
def import_cmd(
    file: Path = typer.Argument(
        ..., help="Roster file, .csv or .json, e.g. an HR export (columns in the app README)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check the file against the store and write nothing."
    ),
    as_json: JsonOption = False,
) -> None:
    """Import your own roster: every row is checked first, every refused row is listed at
    once (row, column, value, what to write instead) and then nothing is written (exit 2)."""
    from casework.apps.vanpool import service
    from casework.apps.vanpool.models import RosterRefused

    deps = _deps()
    try:
        report = service.import_roster(deps, file, dry_run=dry_run)
    except RosterRefused as exc:
        if not as_json:
            raise  # the root prints it: one line per problem, exit 2
        print_json(
            {
                "file": exc.source,
                "dry_run": dry_run,
                "written": False,
                "rows": exc.rows,
                "refused_rows": len({p.row for p in exc.problems}),
                "problems": [p.to_dict() for p in exc.problems],
            }
        )
        raise typer.Exit(exc.exit_code) from None
    total = deps.repo.counts()
    if as_json:
        print_json({**asdict(report), "written": not dry_run, "total": total})
        return
    blank = f" ({report.blank_rows} blank rows left out)" if report.blank_rows else ""
    f = report.in_file
    console.print(
        f"{report.file}: {report.rows} rows check out{blank}: {f['employees']} employees, "
        f"{f['vanpools']} vanpools, {f['riders']} riders, {f['shifts']} shifts.",
        highlight=False,
    )
    if report.repaired:
        fixed = ", ".join(f"{n} {kind}" for kind, n in report.repaired.items())
        console.print(f"read in the canonical form: {fixed}.", highlight=False)
    a = report.added
    added = (
        f"{a['employees']} employees, {a['vanpools']} vanpools, {a['riders']} riders, "
        f"{a['shifts']} shifts"
    )
    if dry_run:
        console.print(f"an import would add {added}; nothing written (--dry-run).", highlight=False)
        return
    console.print(
        f"added {added}; the store now has {total['vanpools']} vanpools, "
        f"{total['employees']} employees, {total['riders']} riders.",
        highlight=False,
    )


def _print_counts(deps: Any, counts: dict[str, int], as_json: bool) -> None:
    total = deps.repo.counts()
    if as_json:
        print_json({"added": counts, "total": total})
        return
    console.print(
        f"added {counts['employees']} employees, {counts['vanpools']} vanpools, "
        f"{counts['riders']} riders, {counts['shifts']} shifts; the store now has "
        f"{total['vanpools']} vanpools, {total['employees']} employees, {total['riders']} riders."
    )


# ---------------------------------------------------------------------------- audit
@app.command()
def audit(
    vanpool_ids: list[str] = typer.Argument(None, help="Vanpool ids (VP-###)."),
    all_: bool = typer.Option(False, "--all", help="Audit every vanpool."),
    strategy: str = typer.Option("cascade", "--strategy", help=STRATEGY_HELP),
    concurrency: ConcurrencyOption = 1,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    as_json: JsonOption = False,
    no_progress: NoProgressOption = False,
) -> None:
    """Audit vanpools: all pass -> verified; any fail -> one case per vanpool and outreach."""
    from casework.apps.vanpool.models import check_id
    from casework.apps.vanpool.service import audit_many
    from casework.runtime.batch import BatchConfig, check_batch_config

    strategy = _strategy(strategy)
    config = BatchConfig(executor=executor, address=address, concurrency=concurrency)
    check_batch_config(config)  # a bad executor or address stops before anything is written
    deps = _deps()
    if all_:
        ids = deps.repo.vanpool_ids()
    elif vanpool_ids:
        ids = list(dict.fromkeys(check_id("VP", v) for v in vanpool_ids))
        for v in ids:
            deps.repo.get_vanpool(v)  # unknown ids stop before any audit runs
    else:
        raise InputError("Name a vanpool (VP-101) or pass --all.")
    started = time.perf_counter()
    with progress(enabled=len(ids) > 1) as bar:
        task = bar.add_task(f"auditing ({executor})", total=len(ids))
        rows = audit_many(
            deps,
            ids,
            strategy,
            config,
            on_done=lambda _row: bar.advance(task),
            run_config=_config(deps),
        )
    seconds = time.perf_counter() - started
    # Named vanpools that could not be audited fail the command; --all reports them and goes on.
    failed = not all_ and any(r["verdict"] == "error" for r in rows)
    if as_json:
        print_json(
            {
                "strategy": strategy,
                "executor": executor,
                "seconds": round(seconds, 2),
                "results": rows,
            }
        )
        if failed:
            raise typer.Exit(1)
        return
    table = Table("vanpool", "result", "failed checks", "case", "email")
    for r in rows:
        table.add_row(
            r["vanpool_id"],
            r["verdict"],
            ", ".join(r["failed_checks"]) or "-",
            r["case_id"] or "-",
            r["email"],
        )
    console.print(table)
    for r in rows:
        if r["verdict"] == "error":
            err.print(f"{r['vanpool_id']}: {r['reasoning']}", highlight=False)
    console.print(f"{len(rows)} vanpools audited in {seconds:.1f}s with {strategy} ({executor}).")
    if failed:
        raise typer.Exit(1)


# ---------------------------------------------------------------------------- cases
@app.command()
def cases(
    status: str | None = typer.Option(None, "--status", help="Only cases in this status."),
    as_json: JsonOption = False,
) -> None:
    """List cases."""
    deps = _deps()
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

    c, messages, log = case_history(_deps(), case_id)
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

    items = pending_approvals(_deps())
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

    deps = _deps()
    c = decide_approval(deps, check_id("CASE", case_id), decision, body, config=_config(deps))
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


# ---------------------------------------------------------------------------- replies + time
@app.command()
def reply(
    case_id: str = typer.Argument(..., help="CASE-XXXXXXXX"),
    text: str = typer.Argument(..., help="The rider's reply."),
    strategy: str = typer.Option("cascade", "--strategy", help=STRATEGY_HELP),
    as_json: JsonOption = False,
) -> None:
    """File a rider's reply into the case's thread (as if emailed) and handle it."""
    from casework.apps.vanpool.service import reply_to_case

    deps = _deps()
    result = reply_to_case(deps, case_id, text, _strategy(strategy), _config(deps))
    out = result.outreach
    data = {
        "case_id": result.case_id,
        "status": result.verdict,
        "outcome": result.outcome,
        "reaudits": result.reaudits,
        "bucket": out.bucket if out else None,
        "hitl_required": out.hitl_required if out else False,
        "sent": out.sent if out else False,
        "message_id": out.message_id if out else None,
    }
    if as_json:
        print_json(data)
        return
    console.print(
        f"{result.case_id}: reply classified {data['bucket']}; case {data['status']}"
        + (f", re-audits {data['reaudits']}" if data["reaudits"] else "")
        + (f" ({data['outcome']})" if data["outcome"] else "")
        + ("; the drafted answer waits for approval" if data["hitl_required"] else "")
    )


@app.command()
def tick(
    now: str | None = typer.Option(None, "--now", help="Pretend it is this ISO date-time."),
    strategy: str = typer.Option("cascade", "--strategy", help=STRATEGY_HELP),
    as_json: JsonOption = False,
) -> None:
    """Advance time: handle replies left unhandled (a crash cut their handling short), retry
    queued email, re-audit cases whose one-week reply timeout passed."""
    from casework.apps.vanpool.service import tick as advance

    deps = _deps(_parse_now(now))
    out = advance(deps, _strategy(strategy), config=_config(deps))
    if as_json:
        print_json(out)
        return
    replies = sum(not r.get("error") for r in out["replies"])
    console.print(
        f"{out['now']}: {replies} waiting {'reply' if replies == 1 else 'replies'} handled, "
        f"{out['sent']} queued emails sent, {out['still_queued']} still queued."
    )
    for r in out["replies"]:
        if r.get("error"):
            err.print(f"  {r['message_id']} not handled (it waits for the next tick): {r['error']}")
        else:
            console.print(f"  {r['message_id']} on {r['case_id']} handled")
    for r in out["reaudited"]:
        console.print(
            f"  {r['case_id']} re-audited -> {r['status']}"
            + (f" ({r['outcome']})" if r["outcome"] else "")
        )


@app.command()
def pairwise(
    run_a: str = typer.Argument(
        ..., metavar="RUN_A", help="Stored eval run (id, prefix or 'latest')."
    ),
    run_b: str = typer.Argument(..., metavar="RUN_B", help="The other run of the same dataset."),
    judge_model: str | None = typer.Option(
        None, "--judge-model", "-j", help="provider:name of the judge (default: the judge role)."
    ),
    limit: LimitOption = None,
    no_progress: NoProgressOption = False,
) -> None:
    """Which run's answers are better, case by case: a judge compares each pair in both orders."""
    from casework.apps.vanpool.service import compare_runs, judge_runs

    runs = compare_runs(run_a, run_b, judge_model, limit)
    a, b, spec = runs.a, runs.b, runs.judge
    with progress(enabled=len(runs.pairs) > 1) as bar:
        task = bar.add_task("judging pairs", total=len(runs.pairs))
        result = judge_runs(runs, on_done=lambda: bar.advance(task))
    table = Table("case", "better", "judge (A first, B first)")
    for c in result.cases:
        orders = ", ".join(c.get("orders", [])) or c.get("error", "")
        table.add_row(
            c["case_id"], {"a": "A", "b": "B"}.get(c["winner"], c["winner"] or "-"), orders
        )
    console.print(table)
    rate = result.b_win_rate
    console.print(
        f"A {a.run_id} ({a.model or a.strategy}) vs B {b.run_id} ({b.model or b.strategy}), "
        f"judge {spec}: A better {result.a_wins}, B better {result.b_wins}, ties {result.ties}"
        + (f", errors {result.errors}" if result.errors else "")
        + (f"; B wins {rate:.0%} of the decided pairs." if rate is not None else "."),
        highlight=False,
    )


@mail_app.command("serve")
def mail_serve(
    host: str | None = typer.Option(
        None, "--host", help="Default: CASEWORK_VANPOOL__INBOUND_HOST."
    ),
    port: int | None = typer.Option(
        None, "--port", help="Default: CASEWORK_VANPOOL__INBOUND_PORT."
    ),
    strategy: str = typer.Option("cascade", "--strategy", help=STRATEGY_HELP),
) -> None:
    """Receive replies by SMTP, file each into its thread and handle it (Ctrl-C stops)."""
    from casework.apps.vanpool.service import handle_reply, serve_inbound

    deps = _deps()
    strategy = _strategy(strategy)
    host = host or deps.app.inbound_host
    port = port or deps.app.inbound_port

    config = _config(deps)

    def on_reply(thread_id: str, message_id: str) -> None:
        result = handle_reply(deps, message_id, strategy, config)
        err.print(f"{thread_id}: reply {message_id} -> {result.verdict}")

    try:
        controller = serve_inbound(deps, host, port, on_reply)
    except (OSError, RuntimeError) as exc:
        raise InputError(
            f"Cannot listen on {host}:{port} ({exc}); choose another --port."
        ) from None
    err.print(f"Receiving replies on {host}:{port}; Ctrl-C stops.")
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


@app.command()
def demo() -> None:
    """Seed, audit every vanpool with the rules auditor, walk one case through its lifecycle."""
    from casework.apps.vanpool.demo import run_demo

    run_demo(console)
