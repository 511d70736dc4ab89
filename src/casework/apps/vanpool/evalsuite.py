"""The vanpool evaluation: what ``casework eval vanpool`` runs through the platform harness.

Four named datasets (``--dataset``, default ``shift``), each case tagged with its task in
``metadata.task`` (a user's file without the tag is told apart by its inputs):

* ``shift`` — the spec's phase 1: 60 groups of employees (20 valid, 20 conflict, 20 edge);
* ``location`` — every vanpool's riders against the commute limit;
* ``case-manager`` — every vanpool audited end to end, with the reference tools and path;
* ``outreach`` — replies to classify (bucket_match, hitl_match).

The suite's ``rules`` / ``agent`` strategies send each case to the app's strategy for its
task (``strategies.py``, the functions the CLI and API call). The harness scores verdicts,
tool choice, parameters, trajectories, efficiency and cost; ``vanpool_metrics`` adds the
spec's domain metrics (``evaluation.py``). Runs use a private store re-seeded from the bundled
roster before every run (the case-manager task writes cases), a fixed clock, and an outbox
that keeps the emails instead of sending them.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

from casework.apps.vanpool import evaluation
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.synth import DATA_DIR
from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite
from casework.runtime.strategy import ModelSource

__all__ = [
    "DATASETS",
    "EVAL_NOW",
    "TARGETS",
    "Outbox",
    "eval_deps",
    "eval_suite",
    "setup",
    "task_of",
    "vanpool_metrics",
]

DATASETS = {
    "shift": DATA_DIR / "eval" / "shift.jsonl",
    "location": DATA_DIR / "eval" / "location.jsonl",
    "case-manager": DATA_DIR / "eval" / "case_manager.jsonl",
    "outreach": DATA_DIR / "eval" / "outreach.jsonl",
}
EVAL_NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
"""The clock of every evaluation run (the roster's PTO dates are around it)."""

# The spec's targets, on the harness's metric names (``_max``: at most).
TARGETS = {
    "verdict_accuracy": 0.95,
    "shift_conflict_accuracy": 0.98,
    "accuracy_simple": 0.95,
    "accuracy_edge": 0.80,
    "tool_choice_accuracy": 0.95,
    "param_accuracy": 0.98,
    "tool_calls_mean_max": 3.0,
    "redundant_call_rate_max": 0.05,
    "trajectory_optimality": 0.70,
    "path_length_mean_max": 4.0,
    "path_efficiency": 0.80,
    "circular_rate_max": 0.01,
    "self_correction_success": 0.90,
}

JUDGE_RUBRIC = """You grade a vanpool misuse auditor's answer. Score 1.0 when the reasoning is
correct about the riders' commute distances or shift overlaps, relevant to the vanpool asked
about, concise, helpful to the case worker, and (for replies to riders) polite and neutral in
tone; 0.5 when it is right but vague or padded; 0.0 when it is wrong or cites nothing."""


class Outbox:
    """The evaluation's mailer: keeps every email it is given, sends nothing (an evaluation
    must never write to real riders)."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self._lock = threading.Lock()

    def send(self, message: EmailMessage) -> str:
        with self._lock:
            self.messages.append(message)
        return "250 kept in the evaluation outbox"


def _store_url(settings: Settings) -> str:
    folder = settings.home / "evals"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(folder / 'vanpool-eval.db').as_posix()}"


def eval_deps(
    settings: Settings | None = None, *, models: ModelSource | None = None
) -> VanpoolDeps:
    """Deps on the private evaluation store (call ``setup`` first), at ``EVAL_NOW``."""
    settings = settings or get_settings()
    eval_settings = settings.model_copy(update={"database_url": _store_url(settings)})
    return build_deps(eval_settings, mailer=Outbox(), models=models, clock=lambda: EVAL_NOW)


def setup(settings: Settings | None = None) -> None:
    """A pristine evaluation store: deleted, migrated and seeded from the bundled roster."""
    from casework.apps.vanpool.roster import import_roster

    settings = settings or get_settings()
    path = settings.home / "evals" / "vanpool-eval.db"
    path.unlink(missing_ok=True)
    deps = eval_deps(settings)
    import_roster(deps.repo, DATA_DIR / "roster.json", EVAL_NOW)


def task_of(case: EvalCase) -> str:
    """The case's task: its ``metadata.task``, else what its inputs hold."""
    task = case.metadata.get("task")
    if task in DATASETS:
        return str(task)
    if "employee_ids" in case.inputs:
        return "shift"
    if "reply" in case.inputs:
        return "outreach"
    if "vanpool_id" in case.inputs:
        return "case-manager"
    raise InputError(
        f"Case {case.id} has neither employee_ids, reply nor vanpool_id in its inputs."
    )


def task_input(case: EvalCase) -> tuple[str, Any]:
    """``(task, the strategy input)`` of a case."""
    from casework.apps.vanpool.strategies import AuditInput, ReplyInput, ShiftInput

    task = task_of(case)
    i = case.inputs
    try:
        if task == "shift":
            vanpool = i.get("vanpool_id")
            return task, ShiftInput(tuple(i["employee_ids"]), vanpool_id=vanpool)
        if task == "outreach":
            return task, ReplyInput(str(i["reply"]))
        return task, AuditInput(str(i["vanpool_id"]))
    except KeyError as exc:
        raise InputError(f"Case {case.id} ({task}) lacks the input {exc.args[0]!r}.") from None


def _strategy(name: str) -> Any:
    from casework.apps.vanpool import strategies as s

    registries = {
        "shift": s.SHIFT_STRATEGIES,
        "location": s.LOCATION_STRATEGIES,
        "case-manager": s.STRATEGIES,
        "outreach": s.OUTREACH_STRATEGIES,
    }

    def run(task_and_input: tuple[str, Any], deps: VanpoolDeps) -> Any:
        task, value = task_and_input
        return registries[task][name](value, deps)

    run.__name__ = f"vanpool_{name}"
    return run


def vanpool_metrics(case: EvalCase, out: CaseOutput) -> dict[str, float | int | str | None]:
    """The spec's domain metrics of one case (None where a metric does not apply)."""
    task = task_of(case)
    exp, output = case.expected, out.output
    if task == "outreach":
        right = evaluation.bucket_match(exp, output) and evaluation.hitl_match(exp, output)
    else:
        right = evaluation.verdict_match(exp, output)
    meta = case.metadata
    edge = meta.get("category") == "edge" or str(meta.get("scenario_type", "")).startswith("edge")
    row: dict[str, float | int | str | None] = {
        "accuracy_simple": float(right) if meta.get("complexity") == "simple" else None,
        "accuracy_edge": float(right) if edge else None,
    }
    if task in ("shift", "location"):
        outcome = evaluation.conflict_outcome(exp, output)
        key = "conflicting_employees" if task == "shift" else "failed_employees"
        row.update(
            false_positive_rate=float(outcome == "fp") if outcome in ("fp", "tn") else None,
            false_negative_rate=float(outcome == "fn") if outcome in ("fn", "tp") else None,
            employees_exact=float(evaluation.employees_match(exp, output, key)),
        )
    if task == "shift":
        row.update(
            shift_conflict_accuracy=evaluation.overlap_accuracy(exp, output),
            evidence_completeness=evaluation.evidence_completeness(output),
            time_format_valid=float(evaluation.time_format_ok(output)),
        )
    elif task == "case-manager":
        wanted = sorted(exp.get("failed_checks") or [])
        row["failed_checks_exact"] = float(sorted(output.get("failed_checks") or []) == wanted)
    elif task == "outreach":
        row.update(
            bucket_match=float(evaluation.bucket_match(exp, output)),
            hitl_match=float(evaluation.hitl_match(exp, output)),
        )
    return row


def _deps(settings: Settings, models: ModelSource) -> VanpoolDeps:
    return eval_deps(settings, models=models)


def eval_suite() -> EvalSuite:
    return EvalSuite(
        app="vanpool",
        dataset=DATASETS["shift"],
        datasets=dict(DATASETS),
        strategies={name: _strategy(name) for name in ("rules", "baseline", "agent")},
        default_strategy="rules",
        labels=["pass", "fail", "verified", "pending_reply"],
        input_model=task_input,
        deps=_deps,
        verdict_field="verdict",
        confidence_field="confidence",
        evaluators=[vanpool_metrics],
        targets=dict(TARGETS),
        judge_rubric=JUDGE_RUBRIC,
        setup=setup,
    )
