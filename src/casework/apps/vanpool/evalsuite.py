"""The vanpool evaluation: what ``casework eval vanpool`` runs through the platform harness.

Five named datasets (``--dataset``, default ``shift``), each case tagged with its task in
``metadata.task`` (a user's file without the tag is told apart by its inputs):

* ``shift`` — the spec's phase 1: 60 groups of employees (20 valid, 20 conflict, 20 edge);
* ``location`` — every vanpool's riders against the commute limit;
* ``case-manager`` — every vanpool audited end to end, with the reference tools and path,
  and error handling (an unknown id; a distance service that times out: ``inputs.fault``);
* ``outreach`` — replies to classify (bucket_match, hitl_match);
* ``lifecycle`` — whole case lives (``scenarios.py``): time to resolution, false cancels.

The suite's ``rules`` / ``agent`` strategies send each case to the app's strategy for its
task (``strategies.py``, through ``service``, the module the CLI and API call). The harness scores verdicts,
tool choice, parameters, trajectories, efficiency and cost; ``vanpool_metrics`` adds the
spec's domain metrics (``evaluation.py``). Runs use a private store re-seeded from the bundled
roster before every run (the case-manager task writes cases), a fixed clock, and an outbox
that keeps the emails instead of sending them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casework.apps.vanpool import evaluation
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.models import (
    CaseManagerResult,
    LocationDecision,
    OutreachResult,
    ShiftDecision,
)
from casework.apps.vanpool.service import DATA_DIR, LifecycleResult, Scenario
from casework.config import Settings, get_settings
from casework.errors import InputError, SourceUnavailable
from casework.evals.datasets import load_dataset
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite, SuiteOption
from casework.runtime.decision import Decision
from casework.runtime.runconfig import RunConfig
from casework.stores.sql import get_engine

if TYPE_CHECKING:
    from casework.apps.vanpool.geography import Coordinates

__all__ = [
    "DATASETS",
    "EVAL_NOW",
    "TARGETS",
    "Outbox",
    "TaskInput",
    "TimingOutDistance",
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
    "outreach-plain": DATA_DIR / "eval" / "outreach_plain.jsonl",
    "lifecycle": DATA_DIR / "eval" / "lifecycle.jsonl",
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
    # The spec's reasoning quality >= 4.0 on its 1-5 scale is 0.75 on the judge's 0-1 score
    # (see JUDGE_RUBRIC); reported when --judge-model is given, never a case's pass/fail.
    "judge_score_mean": 0.75,
}

JUDGE_RUBRIC = """You grade the reasoning of a vanpool misuse auditor (Pool Patrol). Rate each
criterion from 1 (poor) to 5 (excellent):
- correctness: the verdict and the facts it states (commute miles against the vanpool's limit,
  shift overlap minutes against the 30-minute rule, the riders named) agree with the reference;
- relevance: it is about this vanpool or group and its riders, nothing else;
- conciseness: one or two sentences, no padding, no repeated tool output;
- helpfulness: a case worker can act on it (who fails, which check, why);
- tone (only when the output answers or classifies a rider's reply): polite, calm and neutral,
  never accusing; leave it out otherwise.
The score is (mean of the rated criteria - 1) / 4, so 4 of 5 on every criterion is 0.75.
Begin the rationale with the ratings, e.g. "correctness 5, relevance 5, conciseness 4,
helpfulness 4:", then say why in one sentence."""


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


def eval_deps(settings: Settings | None = None) -> VanpoolDeps:
    """Deps on the private evaluation store (call ``setup`` first), at ``EVAL_NOW``."""
    settings = settings or get_settings()
    eval_settings = settings.model_copy(update={"database_url": _store_url(settings)})
    return build_deps(eval_settings, mailer=Outbox(), clock=lambda: EVAL_NOW)


def setup(settings: Settings | None = None, roster: Path = DATA_DIR / "roster.json") -> None:
    """A pristine evaluation store: deleted, migrated and seeded from ``roster`` (the bundled
    one unless a user's roster is named with ``--roster``)."""
    from casework.apps.vanpool import service

    settings = settings or get_settings()
    path = settings.home / "evals" / "vanpool-eval.db"
    # The process keeps one engine per URL: its pooled connections would still point at the
    # deleted file (a second run in one process read a store that no longer existed).
    get_engine(_store_url(settings)).dispose()
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)
    service.import_roster(eval_deps(settings), roster)


class _Run:
    """One evaluation run's roster: the bundled one, or a user's (``--roster FILE`` with
    ``--dataset FILE.jsonl``: their vanpools, rosters and replies, their expected answers)."""

    def __init__(self) -> None:
        self.roster = DATA_DIR / "roster.json"

    def cases(self, settings: Settings, options: dict[str, list[str]]) -> list[EvalCase]:
        from casework.apps.vanpool.service import check_roster

        roster = options.get("roster")
        if not roster:
            return []
        dataset = options.get("dataset")
        if not dataset:
            raise InputError(
                "--roster needs --dataset FILE.jsonl: your cases (vanpool ids, employee ids or "
                "replies) with the answers you expect."
            )
        path = Path(roster[0])
        if not path.is_file():
            raise InputError(f"There is no roster file at {path}.")
        check_roster(path)  # a bad row stops here, before anything is written
        self.roster = path
        return load_dataset(Path(dataset[0]))

    def setup(self, settings: Settings) -> None:
        setup(settings, self.roster)


def task_of(case: EvalCase) -> str:
    """The case's task: its ``metadata.task``, else what its inputs hold."""
    task = case.metadata.get("task")
    if task in DATASETS:
        return str(task)
    if "employee_ids" in case.inputs:
        return "shift"
    if "reply" in case.inputs:
        return "outreach"
    if "events" in case.inputs:
        return "lifecycle"
    if "vanpool_id" in case.inputs:
        return "case-manager"
    raise InputError(
        f"Case {case.id} has neither employee_ids, reply, events nor vanpool_id in its inputs."
    )


@dataclass(frozen=True)
class TaskInput:
    """What the suite's strategy gets for a case: its task, the task strategy's input, and
    the fault the case injects (``inputs.fault``), if any."""

    task: str
    value: Any
    fault: str | None = None


FAULTS = ("distance_timeout",)


class TimingOutDistance:
    """A distance service that never answers in time (the ``distance_timeout`` fault)."""

    name = "routing_service"

    def miles(self, home: Coordinates, pickup: Coordinates) -> float:
        raise SourceUnavailable("the distance service", "no answer within 10 s (timeout)")


def task_input(case: EvalCase) -> TaskInput:
    """The ``TaskInput`` of a case."""
    from casework.apps.vanpool.service import AuditInput, ReplyInput, ShiftInput

    task = task_of(case)
    i = case.inputs
    fault = i.get("fault")
    if fault is not None and fault not in FAULTS:
        raise InputError(f"Case {case.id}: unknown fault {fault!r}; use {', '.join(FAULTS)}.")
    try:
        if task == "shift":
            # `employee_ids` names a group; a vanpool alone means its riders (the README's form).
            vanpool = i.get("vanpool_id")
            ids = i["employee_ids"] if vanpool is None else i.get("employee_ids") or ()
            return TaskInput(task, ShiftInput(tuple(ids), vanpool_id=vanpool), fault)
        if task == "outreach":
            return TaskInput(task, ReplyInput(str(i["reply"])), fault)
        if task == "lifecycle":
            return TaskInput(task, Scenario.from_inputs(i), fault)
        return TaskInput(task, AuditInput(str(i["vanpool_id"])), fault)
    except KeyError as exc:
        raise InputError(f"Case {case.id} ({task}) lacks the input {exc.args[0]!r}.") from None


_DECISIONS: dict[str, type[Decision]] = {
    "shift": ShiftDecision,
    "location": LocationDecision,
    "case-manager": CaseManagerResult,
    "outreach": OutreachResult,
    "lifecycle": LifecycleResult,
}


def _strategy(name: str, explore: bool = False) -> Any:
    from casework.apps.vanpool import service as s

    registries = {
        "shift": s.SHIFT_STRATEGIES,
        "location": s.LOCATION_STRATEGIES,
        "case-manager": s.STRATEGIES,
        "outreach": s.OUTREACH_STRATEGIES,
    }
    lifecycle_strategy = name if name in ("agent", "cascade") else "rules"

    def run(task: TaskInput, deps: VanpoolDeps, config: RunConfig) -> Any:
        if task.fault == "distance_timeout":
            deps = replace(deps, distance=TimingOutDistance())
        try:
            if task.task == "lifecycle":
                return s.run_scenario(task.value, deps, lifecycle_strategy, config)
            registry = registries[task.task]
            if name not in registry:
                raise InputError(
                    f"The {name} strategy does not decide {task.task} cases; use one of {', '.join(registry)}."
                )
            chosen = registry[name]
            if explore and hasattr(chosen, "exploring"):
                chosen = chosen.exploring()
            return chosen(task.value, deps, config)
        except (InputError, SourceUnavailable) as exc:
            # What a user of the app would get (one sentence, nothing written) as the case's
            # answer, so error-handling cases are scored like the others.
            return _DECISIONS[task.task].model_validate(
                {"verdict": "NEEDS_REVIEW", "confidence": 0, "reasoning": str(exc)[:1200]}
            )

    run.__name__ = f"vanpool_{name}"
    if name in ("cascade", "memory-rules") and not explore:
        run.exploring = lambda: _strategy(name, explore=True)  # type: ignore[attr-defined]
    return run


_AFTER = {
    "upsert_case": ("run_location_specialist", "run_shift_specialist"),
    "run_outreach": ("upsert_case",),
    "close_case": ("run_location_specialist", "run_shift_specialist"),
}


def tool_sequence_ok(names: list[str]) -> bool:
    """The Case Manager's tools in a valid order: both specialists before upsert_case (and
    close_case), upsert_case before run_outreach (successful calls only)."""
    seen: set[str] = set()
    for name in names:
        if not set(_AFTER.get(name, ())) <= seen:
            return False
        seen.add(name)
    return True


def vanpool_metrics(case: EvalCase, out: CaseOutput) -> dict[str, float | int | str | None]:
    """The spec's domain metrics of one case (None where a metric does not apply)."""
    task = task_of(case)
    exp, output = case.expected, out.output
    if task == "lifecycle":
        return _lifecycle_metrics(case, out)
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
        calls = [c.name for c in out.run.tool_calls if c.ok] if out.run is not None else []
        row["tool_sequence_accuracy"] = float(tool_sequence_ok(calls)) if calls else None
    if "error_mentions" in exp:
        said = str(output.get("reasoning", "")).lower()
        handled = output.get("verdict") == "NEEDS_REVIEW" and exp["error_mentions"].lower() in said
        row["error_handling_accuracy"] = float(handled)
    elif task == "outreach":
        row.update(
            bucket_match=float(evaluation.bucket_match(exp, output)),
            hitl_match=float(evaluation.hitl_match(exp, output)),
        )
    return row


def _lifecycle_metrics(case: EvalCase, out: CaseOutput) -> dict[str, float | int | str | None]:
    """The business figures of one case's life: hours to resolution (closed cases), and the
    share of its cancelled memberships the planted truth does not support."""
    exp, output = case.expected, out.output
    right = evaluation.verdict_match(exp, output) and output.get("outcome") == exp.get("outcome")
    cancelled = list(output.get("cancelled_employees") or [])
    vp = str(case.inputs.get("vanpool_id"))
    planted = list(exp.get("planted_employees") or [])
    return {
        "accuracy_simple": float(right) if case.metadata.get("complexity") == "simple" else None,
        "accuracy_edge": float(right) if case.metadata.get("complexity") == "edge" else None,
        "resolution_hours": output.get("resolution_hours"),
        "resolved_rate": float(output.get("outcome") is not None)
        if output.get("case_id")
        else None,
        "false_cancel_rate": evaluation.false_cancel_rate({vp: cancelled}, {vp: planted}),
        "cancellations_per_case": len(cancelled),
    }


def _deps(settings: Settings) -> VanpoolDeps:
    return eval_deps(settings)


def eval_suite() -> EvalSuite:
    run = _Run()
    return EvalSuite(
        app="vanpool",
        dataset=DATASETS["shift"],
        datasets=dict(DATASETS),
        strategies={
            name: _strategy(name)
            for name in ("rules", "choice", "agent", "cascade", "memory-rules")
        },
        default_strategy="cascade",
        labels=[
            "pass",
            "fail",
            "verified",
            "pending_reply",
            "hitl_review",
            "pre_cancel",
            "closed",
            "NEEDS_REVIEW",
        ],
        input_model=task_input,
        deps=_deps,
        verdict_field="verdict",
        confidence_field="confidence",
        evaluators=[vanpool_metrics],
        targets=dict(TARGETS),
        judge_rubric=JUDGE_RUBRIC,
        setup=run.setup,
        options=[
            SuiteOption(
                "roster",
                "With --dataset FILE.jsonl: evaluate on your own roster (CSV or JSON, as "
                "`vanpool import` reads it) instead of the bundled one.",
                metavar="FILE",
                multiple=False,
                with_dataset=True,
            )
        ],
        cases=run.cases,
        learn_dataset="outreach-plain",
        learning_metric="bucket_match",
    )
