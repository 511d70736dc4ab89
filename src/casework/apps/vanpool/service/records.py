"""A roster in (validated, one transaction) and a case's record out."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from casework.apps.vanpool import roster
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import CaseView, ImportReport, MessageView, check_id
from casework.apps.vanpool.synth import DATA_DIR

__all__ = ["BUNDLED_ROSTER", "case_detail", "case_history", "check_roster", "import_roster"]


BUNDLED_ROSTER = DATA_DIR / "roster.json"
"""The synthetic roster ``vanpool seed`` loads (40 vanpools, 300 employees)."""


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
