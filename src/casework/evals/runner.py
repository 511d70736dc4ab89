"""The evaluation runner: every case of a dataset through a strategy, scored, stored, reported.

A strategy is the app's plain function ``run(input, deps, config) -> Decision``, the one the
CLI and the API call. The cases go through the platform's ``run_batch``: with the ``local``
executor the deps are built once per run (``suite.deps(settings)``) and each case runs on a
worker thread (``concurrency`` of them); with ``ray`` each worker process builds its own deps
and models from the specs. Each case runs under its own ``RunConfig``: its models
(``CaseModels.for_case``: recorded to or replayed from the case's cassette) and the run's
trace folder. Model calls share a
token-bucket rate limit per provider; transient errors (timeouts, connection errors, 429 /
5xx) are retried with exponential backoff, errors a user caused (``CaseworkError``) never are.
Every case keeps its trace under ``<run_dir>/traces/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from casework.config import Settings, get_settings
from casework.evals.cassettes import JUDGE_ROLE, CaseModels
from casework.evals.evalconfig import EvalConfig
from casework.evals.evaluators.judge import ajudge, default_rubric
from casework.evals.metrics import score_case
from casework.evals.results import CaseResult, EvalRun
from casework.evals.retries import backoff_seconds, is_transient, one_line
from casework.evals.runplan import checked_config, replayed_cases, run_cases
from casework.evals.runrecord import RunHead, finish_run, stored_config
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite
from casework.evals.traces import keep_trace
from casework.registry import strategy_named
from casework.runtime.batch import BatchConfig, BatchResult, arun_batch
from casework.runtime.runconfig import RunConfig

__all__ = ["EvalConfig", "arun_suite", "as_case_output", "run_suite"]


def as_case_output(value: Any) -> CaseOutput:
    """A strategy's decision as the evaluators see it: its fields, and ``decision.run``."""
    dump = getattr(value, "model_dump", None)
    if dump is None:
        raise TypeError(f"a strategy must return a Decision, not {type(value).__name__}")
    return CaseOutput(output=dump(mode="json"), run=getattr(value, "run", None))


@dataclass
class _CaseRun:
    """What running one case's strategy gave (where it ran: here or on a Ray worker)."""

    out: CaseOutput | None
    error: str | None
    attempts: int
    wall: float
    trace: str | None = None
    """The agent trace's text when the case ran on a Ray worker (its files stay there)."""


class _CaseTask:
    """``task(case)`` runs the strategy on one case, retrying transient errors.

    It is what crosses to a Ray worker (pickled, once per worker): the suite, the model specs
    and settings, never a live model or store. Its models and deps are built on the first
    case a process runs; in the caller's process they are the run's own (``bind``)."""

    def __init__(
        self,
        *,
        suite: EvalSuite,
        strategy: str,
        config: EvalConfig,
        settings: Settings,
        traces: Path,
        model: str | None,
        record_dir: Path | None,
        replay_dir: Path | None,
        replay_name: str | None,
        rate_limits: Mapping[str, float],
    ) -> None:
        self.suite = suite
        self.strategy = strategy
        self.all_layers = config.all_layers
        self.retries = config.retries
        self.backoff = config.backoff
        self.base_model = config.base_model
        self.judge_model = config.judge_model
        self.settings = settings
        self.traces = traces
        self.model = model
        self.record_dir = record_dir
        self.replay_dir = replay_dir
        self.replay_name = replay_name
        self.rate_limits = dict(rate_limits)
        self.remote = False
        self._state: tuple[CaseModels, Any] | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_state"], state["_lock"], state["remote"] = None, None, True
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def bind(self, models: CaseModels, deps: Any) -> None:
        self._state = (models, deps)

    def deps(self) -> Any:
        """The deps the cases of this process share."""
        return self._models_and_deps()[1]

    def _models_and_deps(self) -> tuple[CaseModels, Any]:
        with self._lock:
            if self._state is None:
                # A worker process: its own models from the specs, its own deps and traces.
                self.traces = Path(tempfile.mkdtemp(prefix="casework-traces-"))
                models = CaseModels(
                    model=self.model,
                    judge_model=self.judge_model,
                    settings=self.settings,
                    base_model=self.base_model,
                    record_dir=self.record_dir,
                    replay_dir=self.replay_dir,
                    replay_name=self.replay_name,
                    rate_limits=self.rate_limits,
                )
                deps = self.suite.deps(self.settings) if self.suite.deps else None
                self._state = (models, deps)
            return self._state

    def _once(self, case: EvalCase, models: CaseModels, deps: Any) -> CaseOutput:
        config = RunConfig(models=models.for_case(case.id), traces=self.traces)
        try:
            strategy = self.suite.strategies[self.strategy]
            if self.all_layers and hasattr(strategy, "exploring"):
                strategy = strategy.exploring()
            return as_case_output(strategy(self.suite.strategy_input(case), deps, config))
        finally:
            models.release(case.id)

    def __call__(self, case: EvalCase) -> _CaseRun:
        models, deps = self._models_and_deps()
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                out = self._once(case, models, deps)
                break
            except Exception as exc:
                if attempt <= self.retries and is_transient(exc):
                    models.reset(case.id)
                    time.sleep(backoff_seconds(attempt, self.backoff, exc))
                    continue
                return _CaseRun(None, one_line(exc), attempt, time.perf_counter() - started)
        run = _CaseRun(out, None, attempt, time.perf_counter() - started)
        trace = Path(out.run.trace_path) if out.run and out.run.trace_path else None
        if self.remote and trace is not None and trace.is_file():
            run.trace = trace.read_text(encoding="utf-8")
            trace.unlink()
            # the worker's folder goes once empty (the next trace makes it again): a worker
            # process ends without a finaliser that could remove it
            with contextlib.suppress(OSError):
                trace.parent.rmdir()
        return run


class _Runner:
    def __init__(
        self,
        *,
        suite: EvalSuite,
        task: _CaseTask,
        models: CaseModels,
        run_dir: Path,
        config: EvalConfig,
        judge: bool,
        judge_rubric: str,
        progress: Progress | None,
    ) -> None:
        self.suite = suite
        self.task = task
        self.models = models
        self.run_dir = run_dir
        self.config = config
        self.judge = judge
        self.judge_rubric = judge_rubric
        self.progress = progress
        self.task_id: Any = None
        self.trace_root = run_dir / "traces" / "runs"
        self.cases: Sequence[EvalCase] = ()
        self.done: list[CaseResult] = []
        self.models_reported: list[str | None] = []
        self._scored = self._correct = self._errors = 0

    async def run(self, cases: Sequence[EvalCase]) -> list[CaseResult]:
        self.cases = cases
        batch = BatchConfig(
            executor=self.config.executor,
            address=self.config.address,
            concurrency=self.config.concurrency,
            progress=self._finished,
            stagger=self.config.stagger,
        )
        await arun_batch(cases, self.task, batch, key=lambda c: c.id)
        results = sorted(self.done, key=lambda c: c.index)
        if self.judge:
            sem = asyncio.Semaphore(self.config.concurrency)

            async def judge(result: CaseResult) -> None:
                async with sem:
                    result.judge = await self._judge(cases[result.index], result.output)

            await asyncio.gather(
                *(
                    judge(r)
                    for r in results
                    if r.error is None and r.index < self.config.judge_max_calls
                )
            )
        return results

    def _finished(self, item: BatchResult[_CaseRun]) -> None:
        """Scores a case as it finishes (in the caller's process, whichever executor ran it)."""
        case = self.cases[item.index]
        ran = item.value
        if ran is None:  # the batch lost the case (its worker died on every attempt)
            ran = _CaseRun(None, one_line(item.error or RuntimeError()), item.attempts, 0.0)
        out = ran.out
        if out is not None and out.run is not None:
            self.models_reported.append(out.run.model)
            if ran.trace is not None and out.run.trace_path:
                local = self.trace_root / Path(out.run.trace_path).name
                local.parent.mkdir(parents=True, exist_ok=True)
                local.write_text(ran.trace, encoding="utf-8")
                out.run.trace_path = local
        result = score_case(
            self.suite,
            case,
            item.index,
            out,
            error=ran.error,
            attempts=ran.attempts,
            wall_seconds=ran.wall,
        )
        result.trace = keep_trace(self.run_dir, self.trace_root, case, out, ran.error)
        if self.config.case_hook is not None:  # before the next case starts (concurrency 1)
            self.config.case_hook.after_case(case, result, self.task.deps())
        self.done.append(result)
        self._advance()

    def _advance(self) -> None:
        last = self.done[-1]
        if last.correct is not None:
            self._scored += 1
            self._correct += bool(last.correct)
        self._errors += last.error is not None
        if self.progress is None:
            return
        acc = f"{self._correct / self._scored:.0%}" if self._scored else "–"
        self.progress.update(self.task_id, advance=1, acc=acc, errors=self._errors)

    async def _judge(self, case: EvalCase, output: dict[str, Any] | None) -> dict[str, Any]:
        attempt = 0
        while True:
            attempt += 1
            try:
                model = self.models.model_for(case.id, JUDGE_ROLE)
                j = await ajudge(model, self.judge_rubric, case, output)
                return {
                    "score": j.score,
                    "passed": j.score >= self.config.judge_threshold,
                    "rationale": j.rationale,
                }
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if attempt <= self.config.retries and is_transient(exc):
                    await asyncio.sleep(backoff_seconds(attempt, self.config.backoff, exc))
                    continue
                return {"error": one_line(exc)}


def _progress(progress: bool | Console, description: str, total: int) -> Progress | None:
    if progress is False:
        return None
    console = progress if isinstance(progress, Console) else Console(stderr=True)
    bar = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("accuracy {task.fields[acc]}"),
        TextColumn("errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )
    bar.start()
    return bar


def _prepare(
    suite: EvalSuite,
    config: EvalConfig,
    settings: Settings,
    run_dir: Path,
    record_dir: Path | None,
) -> Any:
    """The suite's setup, the run's folders (stale cassettes gone), and the deps every case
    shares when they run locally (None on Ray: each worker builds its own from the specs)."""
    if suite.setup is not None:
        suite.setup(settings)
    local_deps = None
    if suite.deps is not None and config.executor == "local":
        local_deps = suite.deps(settings)
    run_dir.mkdir(parents=True, exist_ok=True)
    if record_dir is not None:
        record_dir.mkdir(exist_ok=True)
        for stale in record_dir.glob("*.jsonl"):
            stale.unlink()
    return local_deps


async def arun_suite(suite: EvalSuite, config: EvalConfig | None = None, **fields: Any) -> EvalRun:
    """Run ``suite`` as ``config`` says (``fields`` override single settings of it) and
    return the scored run."""
    config = dataclasses.replace(config or EvalConfig(), **fields)
    settings: Settings = config.settings or get_settings()
    config, replay_dir = checked_config(config, settings)
    model = config.model
    strategy = config.strategy or suite.default_strategy
    strategy_named(suite.strategies, strategy, app=suite.app)  # refused before any case runs
    case_list, dataset_name, digest = run_cases(suite, config)
    case_list, replay_skipped = replayed_cases(case_list, replay_dir)
    created = datetime.now(UTC)
    run_id = config.run_id or f"{suite.app}-{created:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    run_dir = Path(config.out_dir) if config.out_dir else settings.home / "evals" / run_id
    record_dir = run_dir / "cassettes" if config.record else None
    replay_name = f"replay:{config.replay}" if replay_dir is not None else None
    models = CaseModels(
        model=model,
        judge_model=config.judge_model,
        settings=settings,
        base_model=config.base_model,
        record_dir=record_dir,
        replay_dir=replay_dir,
        replay_name=replay_name,
        rate_limits=config.rate_limits,
    )
    models.check()  # before anything is written: a bad model spec leaves no empty run behind
    local_deps = _prepare(suite, config, config.deps_settings or settings, run_dir, record_dir)
    bar = _progress(config.progress, f"{suite.app}/{strategy}", len(case_list))
    task = _CaseTask(
        suite=suite,
        strategy=strategy,
        config=config,
        settings=config.deps_settings or settings,
        # The strategies write their agent traces here; the runner moves each into traces/<case>.
        traces=run_dir / "traces" / "runs",
        model=model,
        record_dir=record_dir,
        replay_dir=replay_dir,
        replay_name=replay_name,
        # Ray workers each take from their own bucket: together they keep the provider's rate.
        rate_limits={
            p: b.rate / (config.concurrency if config.executor == "ray" else 1)
            for p, b in models.limiters.items()
        },
    )
    if config.executor == "local":
        task.bind(models, local_deps)
    if config.case_hook is not None:
        config.case_hook.start(local_deps)
    runner = _Runner(
        suite=suite,
        task=task,
        models=models,
        run_dir=run_dir,
        config=config,
        judge=config.judge_model is not None,
        judge_rubric=suite.judge_rubric or default_rubric(),
        progress=bar,
    )
    if bar is not None:
        runner.task_id = bar.add_task(
            f"{suite.app}/{strategy}", total=len(case_list), acc="–", errors=0
        )
    head = RunHead(
        run_id=run_id,
        created=created,
        strategy=strategy,
        dataset=dataset_name,
        digest=digest,
        model=model,
        run_dir=run_dir,
        config=stored_config(suite, config, models, replay_dir, len(case_list), replay_skipped),
    )
    return await _run_cases(suite, config, settings, head, runner, bar, case_list)


async def _run_cases(
    suite: EvalSuite,
    config: EvalConfig,
    settings: Settings,
    head: RunHead,
    runner: _Runner,
    bar: Progress | None,
    case_list: list[EvalCase],
) -> EvalRun:
    """Run the cases and finish the run; an interrupted run keeps (stores and reports) the
    cases that finished."""

    def finish(status: str, results: list[CaseResult], wall: float) -> EvalRun:
        return finish_run(
            suite, config, settings, head, runner.models_reported, status, results, wall
        )

    started = time.perf_counter()
    try:
        results = await runner.run(case_list)
    except (asyncio.CancelledError, KeyboardInterrupt):
        if runner.done:
            finish(
                "interrupted",
                sorted(runner.done, key=lambda c: c.index),
                time.perf_counter() - started,
            )
        raise
    finally:
        if bar is not None:
            bar.stop()
    return finish("complete", results, time.perf_counter() - started)


def run_suite(suite: EvalSuite, config: EvalConfig | None = None, **fields: Any) -> EvalRun:
    """Sync entry point of ``arun_suite`` (same arguments)."""
    return asyncio.run(arun_suite(suite, config, **fields))
