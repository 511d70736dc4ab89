"""A CSV batch through the platform's ``run_batch`` (local threads or Ray), resumable: each
finished row is stored, as it finishes, with the batch's key (the file's absolute path,
strategy, schema) and its row id, and a re-run skips those rows. A row that fails (bad
description, model error) is reported in the output and retried on the next run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from casework.apps.hed.batchfile import BatchReport, batch_key, read_batch, write_results
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedDecision, HedInput, ValidatorKind, decision_json
from casework.apps.hed.strategies import STRATEGIES
from casework.apps.hed.validation import check_schema
from casework.config import Settings
from casework.errors import CaseworkError, InputError
from casework.registry import strategy_named
from casework.runtime import EndReason, RunConfig
from casework.runtime.batch import BatchConfig, check_batch_config

__all__ = ["BatchTask", "check_batch", "run_batch"]


class BatchTask:
    """``task((row_id, description))`` -> the row's decision: what ``run_batch`` runs.

    It crosses to Ray workers pickled, holding only specs (settings, model names, strategy);
    a worker builds its deps and run config on its first row (without the database: the
    caller's process stores every result as it arrives). Locally it runs on the caller's deps
    and config (``bind``)."""

    def __init__(
        self,
        *,
        settings: Settings,
        strategy: str,
        schema: str,
        assess: bool,
        model: str | None,
        validator: ValidatorKind,
    ) -> None:
        self.settings = settings
        self.strategy = strategy
        self.schema = schema
        self.assess = assess
        self.model = model
        self.validator = validator
        self._deps: HedDeps | None = None
        self._config: RunConfig | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_deps": None, "_config": None}

    def bind(self, deps: HedDeps, config: RunConfig) -> BatchTask:
        self._deps, self._config = deps, config
        return self

    def __call__(self, row: tuple[str, str]) -> HedDecision:
        if self._deps is None:
            from casework.apps.hed.deps import build_deps

            self._deps = build_deps(self.settings, validator=self.validator, with_repo=False)
        if self._config is None:
            self._config = RunConfig.of(self.settings, self.model)
        input = HedInput(description=row[1], schema_version=self.schema, run_assessment=self.assess)
        return strategy_named(STRATEGIES, self.strategy)(input, self._deps, self._config)


def check_batch(path: Path, *, schema: str, strategy: str, config: BatchConfig) -> int:
    """Refuse a batch that cannot run (strategy, schema, executor, a missing file) before any
    deps are built; the number of rows of the file."""
    strategy_named(STRATEGIES, strategy)
    check_schema(schema)
    check_batch_config(config)
    if not path.is_file():
        raise InputError(f"{path} does not exist; pass a CSV file with a 'description' column.")
    return len(read_batch(path))


def run_batch(
    path: Path,
    deps: HedDeps,
    config: RunConfig | None = None,
    *,
    strategy: str = "cascade",
    schema: str = "8.3.0",
    assess: bool = False,
    concurrency: int = 1,
    executor: str = "local",
    address: str | None = None,
    out: Path | None = None,
    on_row: Callable[[str, dict[str, Any]], None] | None = None,
) -> BatchReport:
    """Annotate every row not yet finished under ``config`` (default: the settings' models)
    through the platform's ``run_batch`` (worker threads here, or a Ray cluster, where each
    worker resolves the config's model spec); each result is stored as it arrives, so an interrupted
    batch loses nothing. All rows' results (old and new) go as JSON lines to ``out``, in the
    file's order; a row that failed says why and is retried on the next run."""
    from casework.runtime.batch import BatchResult
    from casework.runtime.batch import run_batch as platform_batch

    if deps.repo is None:
        raise InputError("A batch needs the database to resume from; build deps with a repository.")
    strategy_named(STRATEGIES, strategy)  # refused before any row runs
    run_config = config or RunConfig.of(deps.settings)
    batch = BatchConfig(
        executor=executor, address=address, concurrency=max(1, concurrency), retries=2
    )
    check_batch_config(batch)
    rows = read_batch(path)
    key = batch_key(path, strategy, schema, assess)
    out = out or path.with_suffix(".hed.jsonl")
    report = BatchReport(key=key, out=out, total=len(rows))
    results: dict[str, dict[str, Any]] = dict(deps.repo.finished_rows(key))
    todo = [(rid, text) for rid, text in rows if rid not in results]
    report.skipped = len(rows) - len(todo)

    def finished(item: BatchResult[HedDecision]) -> None:
        rid = item.key
        assert isinstance(rid, str)
        decision = item.value
        if decision is None:
            err = item.error
            data: dict[str, Any] = {"id": rid, "error": str(err) if err else "not run"}
            if err is not None and not isinstance(err, CaseworkError):
                data["error"] = f"{type(err).__name__}: {err}"
        else:
            data = decision_json(decision)
            if decision.run and decision.run.ended_by == EndReason.ERROR_MODEL:
                data["error"] = decision.run.detail
            else:  # a run cut short by a model error is not stored as finished: retried next time
                deps.repo.save(decision, batch_key=key, row_id=rid)
        results[rid] = data
        if "error" in data:
            report.failed += 1
        else:
            report.done += 1
        if on_row is not None:
            on_row(rid, data)

    batch.progress = finished
    task = BatchTask(
        settings=deps.settings,
        strategy=strategy,
        schema=schema,
        assess=assess,
        model=run_config.models.override,
        validator=deps.validator,
    )
    if executor == "local":
        task.bind(deps, run_config)
    try:  # an interrupted batch keeps what finished: stored, and written out
        platform_batch(todo, task, batch, key=lambda row: row[0])
    finally:
        write_results(out, rows, results, report)
    return report
