"""``casework vanpool …``: seed, import, audit, cases, approvals, replies, tick, mail serve, demo.

Thin: each command builds deps, calls ``service`` and prints.
Errors a user can cause are ``CaseworkError``s; the root CLI prints them as one sentence.
One module per job: ``data`` (seed, import), ``audit``, ``cases`` (cases and the approvals a
person decides), ``replies`` (a rider's reply, time, the inbound mail server), ``pairwise`` and
``demo``; this app merges them in the order ``--help`` lists.
"""

from __future__ import annotations

import typer

from casework.apps.vanpool.cli import audit, cases, data, demo, pairwise, replies

__all__ = ["app"]

app = typer.Typer(
    help="Pool Patrol: audit vanpools for location and shift mismatches. Start with "
    "`casework vanpool seed`, then `casework vanpool audit VP-119` and `casework vanpool cases`.",
    no_args_is_help=True,
)
app.add_typer(data.app)
app.add_typer(audit.app)
app.add_typer(cases.app)
app.add_typer(replies.app)
app.add_typer(pairwise.app)
app.add_typer(demo.app)
app.add_typer(replies.mail_app, name="mail")
