"""``reply`` (a rider's reply to a case), ``tick`` (time passes) and ``mail serve`` (the
inbound SMTP receiver)."""

from __future__ import annotations

import time

import typer

from casework.apps.vanpool.cli.common import (
    STRATEGY_HELP,
    checked_strategy,
    open_deps,
    parse_now,
    run_config,
)
from casework.clikit import JsonOption, console, print_json
from casework.clikit import err_console as err
from casework.errors import InputError

__all__ = ["app"]

app = typer.Typer()
mail_app = typer.Typer(help="Email: the inbound SMTP receiver.", no_args_is_help=True)


@app.command()
def reply(
    case_id: str = typer.Argument(..., help="CASE-XXXXXXXX"),
    text: str = typer.Argument(..., help="The rider's reply."),
    strategy: str = typer.Option("cascade", "--strategy", help=STRATEGY_HELP),
    as_json: JsonOption = False,
) -> None:
    """File a rider's reply into the case's thread (as if emailed) and handle it."""
    from casework.apps.vanpool.service import reply_to_case

    deps = open_deps()
    result = reply_to_case(deps, case_id, text, checked_strategy(strategy), run_config(deps))
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

    deps = open_deps(parse_now(now))
    out = advance(deps, checked_strategy(strategy), config=run_config(deps))
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

    deps = open_deps()
    strategy = checked_strategy(strategy)
    host = host or deps.app.inbound_host
    port = port or deps.app.inbound_port

    config = run_config(deps)

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
