"""After a suite ran: what its stored run says about the configuration, and the finished
run (summarised, calibrated, reported and stored as the configuration asks)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from casework.config import Settings
from casework.evals.cassettes import CaseModels
from casework.evals.evalconfig import EvalConfig
from casework.evals.metrics import summarize
from casework.evals.results import CaseResult, EvalRun
from casework.evals.suite import EvalSuite

__all__ = ["RunHead", "finish_run", "stored_config"]


@dataclass
class RunHead:
    """What a run is, fixed before its first case: ids, names, the folder and the stored config."""

    run_id: str
    created: datetime
    strategy: str
    dataset: str
    digest: str
    model: str | None
    run_dir: Path
    config: dict[str, Any]


def stored_config(
    suite: EvalSuite,
    config: EvalConfig,
    models: CaseModels,
    replay_dir: Path | None,
    planned: int,
    replay_skipped: int,
) -> dict[str, Any]:
    """The run's settings as its stored record keeps them."""
    return {
        "record": config.record,
        "replay": str(replay_dir) if replay_dir else None,
        "limit": config.limit,
        "sample": config.sample,
        "seed": config.seed if config.sample is not None else None,
        "retries": config.retries,
        "executor": config.executor,
        "judge_max_calls": config.judge_max_calls,
        "judge_threshold": config.judge_threshold,
        "rate_limits": {p: b.rate for p, b in models.limiters.items()},
        "planned_cases": planned,
        "replay_skipped": replay_skipped,
        "submit_tool": suite.submit_tool,
        "raw_verdict_field": suite.raw_verdict_field,
        **config.extra,
    }


def finish_run(
    suite: EvalSuite,
    config: EvalConfig,
    settings: Settings,
    head: RunHead,
    models_reported: list[str | None],
    status: str,
    results: list[CaseResult],
    wall: float,
) -> EvalRun:
    """The run of ``results``: summarised, calibrated, and reported and stored when asked."""
    reported = Counter(m for m in models_reported if m)
    # The model the strategy named (RunInfo.model): calibrations are stored under it.
    head.config["strategy_model"] = reported.most_common(1)[0][0] if reported else None
    metrics, details, targets = summarize(
        results,
        labels=suite.labels,
        targets=suite.targets,
        judge_threshold=config.judge_threshold,
        run_metrics=suite.run_metrics,
    )
    run = EvalRun(
        run_id=head.run_id,
        app=suite.app,
        strategy=head.strategy,
        dataset=head.dataset,
        dataset_sha256=head.digest,
        created_at=head.created.isoformat(timespec="seconds"),
        model=head.model,
        judge_model=config.judge_model,
        concurrency=config.concurrency,
        wall_seconds=wall,
        run_dir=str(head.run_dir),
        status=status,
        labels=list(suite.labels),
        targets=dict(suite.targets),
        metrics=metrics,
        details=details,
        target_results=targets,
        config=head.config,
        cases=results,
    )
    from casework.evals.calibrate import add_calibration

    add_calibration(run, settings, fit_here=config.calibrate)
    if config.report:
        from casework.evals.report import write_report

        write_report(run, plots=suite.plots)
    if config.store:
        from casework.evals.store import save_run

        save_run(run, settings=settings)
    return run
