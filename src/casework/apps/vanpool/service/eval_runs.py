"""What the evaluation runs through the service: a case's whole life as a scenario, and the
pairwise judging of two stored evaluation runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.geography import zip_coordinates
from casework.apps.vanpool.lifecycle import case_result
from casework.apps.vanpool.models import check_id
from casework.apps.vanpool.pairwise import Pair, PairwiseResult, compare_answers, pairs_of
from casework.apps.vanpool.scenarios import Event, LifecycleResult, Scenario
from casework.apps.vanpool.service.approvals import decide_approval
from casework.apps.vanpool.service.audits import run_audit, verifier_for
from casework.apps.vanpool.service.replies import reply_to_case
from casework.config import get_settings
from casework.errors import InputError
from casework.evals.store import load_run
from casework.llm.roles import RoleModels
from casework.runtime.runconfig import RunConfig

__all__ = ["RunComparison", "compare_runs", "judge_runs", "run_scenario"]


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
