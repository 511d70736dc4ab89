"""The evaluation runner: every case of a dataset through a strategy, scored, stored, reported.

Concurrency is bounded (``concurrency`` workers pull cases from a queue); model calls share a
token-bucket rate limit per provider (``openai``, ``anthropic``, ...); transient errors
(timeouts, connection errors, 429 / 5xx) are retried with exponential backoff, errors a user
caused (``CaseworkError``) never are. Sync strategies run in a thread pool of the same size.
Every case keeps its full trace under ``<run_dir>/traces/``; ``record=True`` writes one
cassette per case under ``<run_dir>/cassettes/`` and ``replay=RUN`` answers every model call
from those cassettes, offline, with identical metrics.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import inspect
import json
import os
import random
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import messages_to_dict
from langchain_core.rate_limiters import BaseRateLimiter
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
from casework.errors import CaseworkError, ConfigError, InputError
from casework.evals.datasets import dataset_digest, load_dataset, resolve_dataset
from casework.evals.evaluators.judge import ajudge, default_rubric
from casework.evals.metrics import score_case, summarize
from casework.evals.results import CaseResult, EvalRun
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite, StrategyOptions
from casework.llm import resolve_model
from casework.llm.replay import Cassette, RecordingChatModel, ReplayChatModel

__all__ = [
    "DEFAULT_RATE_LIMITS",
    "JUDGE_ROLE",
    "ModelSource",
    "TokenBucket",
    "arun_suite",
    "case_filename",
    "is_transient",
    "provider_of",
    "run_suite",
]

JUDGE_ROLE = "eval_judge"
"""The role the harness's own judge asks ``model_for`` for (apps' in-agent judges use ``judge``)."""

DEFAULT_RATE_LIMITS: dict[str, float] = {"openai": 8.0, "anthropic": 4.0, "openrouter": 4.0}
"""Model requests per second per provider; providers not named here are not limited."""

_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
_TRANSIENT_NAMES = (
    "RateLimit",
    "Timeout",
    "TimedOut",
    "Connection",
    "Connect",
    "Overloaded",
    "ServiceUnavailable",
    "InternalServer",
    "APIError",
    "RemoteProtocol",
    "ReadError",
)


# --------------------------------------------------------------------------- rate limits
class TokenBucket(BaseRateLimiter):
    """``rate`` requests per second with bursts of up to ``burst``; thread- and task-safe.

    Set as a chat model's ``rate_limiter``, every model call takes one token first.
    """

    def __init__(self, rate: float, burst: int = 1) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def _take(self) -> float:
        """0 when a token was taken, else the seconds until one is due."""
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / self.rate

    def acquire(self, *, blocking: bool = True) -> bool:
        while True:
            wait = self._take()
            if wait == 0.0:
                return True
            if not blocking:
                return False
            time.sleep(wait)

    async def aacquire(self, *, blocking: bool = True) -> bool:
        while True:
            wait = self._take()
            if wait == 0.0:
                return True
            if not blocking:
                return False
            await asyncio.sleep(wait)


def provider_of(spec: str | None) -> str:
    """``openai`` of ``openai:gpt-4o-mini``; ``custom`` when there is no spec."""
    if not spec:
        return "custom"
    return spec.partition(":")[0] if ":" in spec else spec


# --------------------------------------------------------------------------- retries
def is_transient(exc: BaseException) -> bool:
    """Worth retrying: timeouts, connection errors and 408 / 429 / 5xx-like provider errors.
    Never a ``CaseworkError`` (bad input, config, drift) nor a plain bug."""
    if isinstance(exc, CaseworkError):
        return False
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | ConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return status in _TRANSIENT_STATUS or status >= 500
    names = [cls.__name__ for cls in type(exc).__mro__]
    return any(token in name for name in names for token in _TRANSIENT_NAMES)


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _backoff(attempt: int, base: float, exc: BaseException) -> float:
    hinted = _retry_after(exc)
    if hinted is not None:
        return min(hinted, 60.0)
    return min(30.0, base * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)


# --------------------------------------------------------------------------- models
def case_filename(case_id: str) -> str:
    """A file-system-safe name for a case id (stable; a hash keeps rewritten ids unique)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", case_id)[:100]
    if safe != case_id:
        safe += "-" + hashlib.sha1(case_id.encode()).hexdigest()[:6]
    return safe


BaseModelFactory = Callable[[str, str], BaseChatModel]
"""``(case_id, role) -> chat model``: replaces ``resolve_model`` (tests hand in scripted models)."""


class ModelSource:
    """``model_for(case_id, role)`` for ``StrategyOptions``: resolves each role's model once,
    applies the provider's rate limit, and records to or replays from the case's cassette."""

    def __init__(
        self,
        *,
        model: str | None,
        judge_model: str | None,
        settings: Settings,
        base_model: BaseModelFactory | None = None,
        record_dir: Path | None = None,
        replay_dir: Path | None = None,
        rate_limits: Mapping[str, float] | None = None,
    ) -> None:
        self.model = model
        self.judge_model = judge_model
        self.settings = settings
        self.base_model = base_model
        self.record_dir = record_dir
        self.replay_dir = replay_dir
        limits = DEFAULT_RATE_LIMITS if rate_limits is None else rate_limits
        self.limiters = {p: TokenBucket(r) for p, r in limits.items() if r and r > 0}
        self._resolved: dict[str, BaseChatModel] = {}
        self._cassettes: dict[str, Cassette] = {}
        self._lock = threading.Lock()

    def spec_for(self, role: str) -> str:
        if role == JUDGE_ROLE:
            return self.judge_model or self.settings.models.for_role("judge")
        return self.model or self.settings.models.for_role(role)

    def _cassette(self, case_id: str, *, must_exist: bool) -> Cassette:
        folder = self.replay_dir if must_exist else self.record_dir
        assert folder is not None
        path = folder / f"{case_filename(case_id)}.jsonl"
        with self._lock:
            found = self._cassettes.get(case_id)
            if found is None:
                if must_exist and not path.is_file():
                    raise ConfigError(
                        f"No cassette for case {case_id!r} in {folder}: record the run with --record first."
                    )
                found = self._cassettes[case_id] = Cassette(path)
            return found

    def _limited(self, model: BaseChatModel, provider: str) -> BaseChatModel:
        limiter = self.limiters.get(provider)
        if limiter is not None and hasattr(model, "model_copy"):
            return model.model_copy(update={"rate_limiter": limiter})
        return model

    def _resolve(self, spec: str) -> BaseChatModel:
        """One model per spec for the whole run (with its provider's rate limit), so a
        strategy may cache what it builds on it (an agent) by model identity."""
        with self._lock:
            model = self._resolved.get(spec)
        if model is None:
            model = self._limited(resolve_model(spec, settings=self.settings), provider_of(spec))
            with self._lock:
                model = self._resolved.setdefault(spec, model)
        return model

    def _base(self, case_id: str, role: str) -> BaseChatModel:
        if self.base_model is not None:
            return self._limited(self.base_model(case_id, role), provider_of(None))
        return self._resolve(self.spec_for(role))

    def model_for(self, case_id: str, role: str = "default") -> BaseChatModel:
        if self.replay_dir is not None:
            return ReplayChatModel(cassette=self._cassette(case_id, must_exist=True))
        model = self._base(case_id, role)
        if self.record_dir is not None:
            return RecordingChatModel(
                cassette=self._cassette(case_id, must_exist=False),
                inner=model,
                model_name=getattr(model, "model_name", None) or "recorded",
            )
        return model

    def check(self) -> None:
        """Resolve the models the user named (``model``, ``judge_model``) once before the run,
        so a missing key, an unknown provider or a disabled network fails in one sentence
        instead of in every case. Settings defaults load on first use (a baseline never does)."""
        if self.replay_dir is not None or self.base_model is not None:
            return
        for spec in (self.model, self.judge_model):
            if spec is not None:
                self._resolve(spec)

    def reset(self, case_id: str) -> None:
        """Forget a case's cassette before a retry (a recording starts over)."""
        with self._lock:
            self._cassettes.pop(case_id, None)
        if self.record_dir is not None:
            (self.record_dir / f"{case_filename(case_id)}.jsonl").unlink(missing_ok=True)


# --------------------------------------------------------------------------- the run
def _as_case_output(value: Any) -> CaseOutput:
    if isinstance(value, CaseOutput):
        out = value
    elif isinstance(value, Mapping):
        out = CaseOutput(output=dict(value))
    elif hasattr(value, "model_dump"):
        out = CaseOutput(output=value.model_dump(mode="json"))
    else:
        raise TypeError(f"a strategy must return a CaseOutput, not {type(value).__name__}")
    if out.output is not None and not isinstance(out.output, dict):
        dump = getattr(out.output, "model_dump", None)
        out.output = dump(mode="json") if dump else dict(out.output)
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__


def _replay_source(replay: str | Path, settings: Settings) -> tuple[Path, dict[str, Any]]:
    """The cassette folder of a run directory, a cassette folder, or a stored run id, and the
    recorded run's report (for its strategy, dataset and judge) when there is one."""
    path = Path(replay).expanduser()
    if not path.is_dir():
        from casework.evals.store import load_run

        try:
            stored = load_run(str(replay), settings=settings)
        except CaseworkError:
            raise InputError(
                f"Nothing to replay at {replay!r}: give a run id or a run directory with cassettes/."
            ) from None
        path = Path(stored.run_dir or settings.home / "evals" / stored.run_id)
    report = path / "report.json"
    meta = json.loads(report.read_text(encoding="utf-8")).get("run", {}) if report.is_file() else {}
    folder = path / "cassettes" if (path / "cassettes").is_dir() else path
    if not any(folder.glob("*.jsonl")) and (meta.get("config") or {}).get("replay"):
        folder = Path(meta["config"]["replay"])  # a replayed run: replay what it replayed
    if not any(folder.glob("*.jsonl")):
        raise InputError(f"{path} holds no cassettes: record a run with --record first.")
    if not meta:
        parent = folder.parent / "report.json"
        meta = (
            json.loads(parent.read_text(encoding="utf-8")).get("run", {})
            if parent.is_file()
            else {}
        )
    return folder, meta


@dataclass
class _Job:
    index: int
    case: EvalCase


class _Runner:
    def __init__(
        self,
        *,
        suite: EvalSuite,
        strategy: Callable[[EvalCase], Any],
        models: ModelSource,
        run_dir: Path,
        concurrency: int,
        retries: int,
        backoff: float,
        judge: bool,
        judge_rubric: str,
        judge_max_calls: int,
        judge_threshold: float,
        progress: Progress | None,
        workers: str = "threads",
        stagger: float = 0.0,
    ) -> None:
        self.suite = suite
        self.strategy = strategy
        self.models = models
        self.run_dir = run_dir
        self.concurrency = concurrency
        self.retries = retries
        self.backoff = backoff
        self.judge = judge
        self.judge_rubric = judge_rubric
        self.judge_max_calls = judge_max_calls
        self.judge_threshold = judge_threshold
        self.progress = progress
        self.task_id: Any = None
        self.workers = workers
        self.stagger = stagger
        self.trace_root = run_dir / "traces" / "runs"
        self.executor = ThreadPoolExecutor(
            max_workers=max(1, concurrency), thread_name_prefix="casework-eval"
        )
        self.is_async = inspect.iscoroutinefunction(strategy) or inspect.iscoroutinefunction(
            getattr(strategy, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )
        self.done: list[CaseResult] = []
        self._scored = self._correct = self._errors = 0
        self._local = threading.local()
        self._loops: list[asyncio.AbstractEventLoop] = []
        self._loops_lock = threading.Lock()

    async def run(self, cases: Sequence[EvalCase]) -> list[CaseResult]:
        queue: asyncio.Queue[_Job] = asyncio.Queue()
        for i, case in enumerate(cases):
            queue.put_nowait(_Job(i, case))
        results: list[CaseResult | None] = [None] * len(cases)

        async def worker(k: int) -> None:
            if k and self.stagger:
                await asyncio.sleep(k * self.stagger)
            while True:
                try:
                    job = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                result = await self.run_case(job.index, job.case)
                results[job.index] = result
                self.done.append(result)
                self._advance()

        try:
            await asyncio.gather(
                *(worker(k) for k in range(max(1, min(self.concurrency, len(cases)))))
            )
        finally:
            self.executor.shutdown(wait=False, cancel_futures=True)
            with self._loops_lock:
                for loop in self._loops:
                    if not loop.is_running():
                        loop.close()
        return [r for r in results if r is not None]

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

    def _thread_loop(self) -> asyncio.AbstractEventLoop:
        loop = getattr(self._local, "loop", None)
        if loop is None:
            loop = self._local.loop = asyncio.new_event_loop()
            with self._loops_lock:
                self._loops.append(loop)
        return loop

    def _in_thread(self, case: EvalCase) -> Any:
        value = self.strategy(case)
        if inspect.isawaitable(value):
            value = self._thread_loop().run_until_complete(value)
        return value

    async def _call(self, case: EvalCase) -> CaseOutput:
        if self.is_async and self.workers == "loop":
            value = await self.strategy(case)
        else:
            ctx = contextvars.copy_context()
            loop = asyncio.get_running_loop()
            if self.workers == "threads":
                value = await loop.run_in_executor(self.executor, ctx.run, self._in_thread, case)
            else:
                value = await loop.run_in_executor(self.executor, ctx.run, self.strategy, case)
                if inspect.isawaitable(value):
                    value = await value
        return _as_case_output(value)

    async def run_case(self, index: int, case: EvalCase) -> CaseResult:
        started = time.perf_counter()
        attempt = 0
        out: CaseOutput | None = None
        error: str | None = None
        while True:
            attempt += 1
            try:
                out = await self._call(case)
                error = None
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if attempt <= self.retries and is_transient(exc):
                    self.models.reset(case.id)
                    await asyncio.sleep(_backoff(attempt, self.backoff, exc))
                    continue
                out, error = None, _one_line(exc)
                break
        wall = time.perf_counter() - started
        result = score_case(
            self.suite, case, index, out, error=error, attempts=attempt, wall_seconds=wall
        )
        result.trace = self._keep_trace(case, out, error)
        if self.judge and error is None and out is not None and index < self.judge_max_calls:
            result.judge = await self._judge(case, result.output)
        return result

    async def _judge(self, case: EvalCase, output: dict[str, Any] | None) -> dict[str, Any]:
        attempt = 0
        while True:
            attempt += 1
            try:
                model = self.models.model_for(case.id, JUDGE_ROLE)
                j = await ajudge(model, self.judge_rubric, case, output)
                return {
                    "score": j.score,
                    "passed": j.score >= self.judge_threshold,
                    "rationale": j.rationale,
                }
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if attempt <= self.retries and is_transient(exc):
                    await asyncio.sleep(_backoff(attempt, self.backoff, exc))
                    continue
                return {"error": _one_line(exc)}

    def _keep_trace(self, case: EvalCase, out: CaseOutput | None, error: str | None) -> str:
        """Move the agent's trace to ``traces/<case>.jsonl`` (or write one) and return its path
        relative to the run directory."""
        rel = Path("traces") / f"{case_filename(case.id)}.jsonl"
        dest = self.run_dir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        run = out.run if out is not None else None
        source = Path(run.trace_path) if run is not None and run.trace_path is not None else None
        if source is not None and source.is_file():
            if source.parent == self.trace_root:
                os.replace(source, dest)
            else:
                shutil.copyfile(source, dest)
            return rel.as_posix()
        records: list[dict[str, Any]] = [
            {"type": "case_start", "case_id": case.id, "inputs": case.inputs}
        ]
        if run is not None:
            for call in run.tool_calls:
                records.append(
                    {"type": "tool", "tool": call.name, "input": call.args, "id": call.id}
                )
                records.append(
                    {
                        "type": "tool_result",
                        "tool": call.name,
                        "output": call.output,
                        "ok": call.ok,
                        "id": call.id,
                    }
                )
            records.append(
                {
                    "type": "run_end",
                    "ended_by": run.ended_by,
                    "usage": run.usage.to_dict(),
                    "result": out.output if out is not None else None,
                    "messages": messages_to_dict(run.messages),
                }
            )
        elif out is not None:
            usage = out.usage.to_dict() if out.usage is not None else None
            records.append({"type": "run_end", "result": out.output, "usage": usage})
        if error is not None:
            records.append({"type": "error", "error": error})
        with dest.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, default=str) + "\n")
        return rel.as_posix()


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


async def arun_suite(
    suite: EvalSuite,
    *,
    strategy: str | None = None,
    model: str | None = None,
    judge_model: str | None = None,
    dataset: str | Path | None = None,
    cases: Sequence[EvalCase] | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    record: bool = False,
    replay: str | Path | None = None,
    out_dir: str | Path | None = None,
    settings: Settings | None = None,
    base_model: BaseModelFactory | None = None,
    judge_max_calls: int = 200,
    judge_threshold: float = 0.5,
    retries: int = 3,
    backoff: float = 1.0,
    rate_limits: Mapping[str, float] | None = None,
    progress: bool | Console = True,
    store: bool = True,
    report: bool = True,
    run_id: str | None = None,
    workers: Literal["threads", "loop"] = "threads",
    stagger: float = 0.01,
) -> EvalRun:
    """Run ``suite`` on its dataset (or ``dataset`` / ``cases``) and return the scored run.

    Args:
        strategy: one of ``suite.strategies``; the suite's default when None.
        model: ``provider:name`` for every role of the strategy; the settings' per-role models
            when None. ``replay:DIR`` replays the cassettes in DIR (like ``replay=DIR``).
        judge_model: turns the LLM judge on (with the suite's rubric or a default one).
        cases: cases to run instead of a dataset file (tests, notebooks).
        concurrency: cases in flight at once (and threads for sync strategies).
        record: write each case's model calls to ``<run_dir>/cassettes/<case>.jsonl``.
        replay: a run id or run directory recorded with ``record``; answers every model call
            from its cassettes (no network) and reuses its strategy, dataset and judge.
        out_dir: the run directory; ``<home>/evals/<run_id>`` by default.
        base_model: ``(case_id, role) -> chat model`` used instead of ``resolve_model``.
        judge_max_calls: judge at most the first N cases (in dataset order, so replays agree).
        retries / backoff: attempts after a transient error, and the first backoff in seconds.
        rate_limits: requests per second per provider (``DEFAULT_RATE_LIMITS`` when None).
        progress: a Rich progress bar on stderr (or on the given console); False for none.
        store / report: save the run to the database / write report.json and report.html.
        workers: ``threads`` (default) runs every case in a pool thread, an async strategy on
            that thread's own event loop; ``loop`` runs async strategies on the caller's loop
            (for strategies holding objects bound to it). Threads keep throughput: a LangGraph
            run costs a few ms of CPU, and on one loop concurrent runs share it round-robin, so
            all of them wake, compute and sleep in step and every round pays the sum of their
            CPU; threads switch in 5 ms slices and drift apart instead (measured on 2 cores:
            100 cases x 200 ms at concurrency 10 took 1.2-1.5x the ideal on one loop,
            1.05-1.15x in threads).
        stagger: seconds between the start of one worker and the next (0.01: the first wave
            does not hit the model, or the CPU, all at once).
    """
    if workers not in ("threads", "loop"):
        raise InputError(f"Unknown worker mode {workers!r}; use threads or loop.")
    settings = settings or get_settings()
    if concurrency < 1:
        raise InputError("Concurrency must be at least 1.")
    if limit is not None and limit < 1:
        raise InputError("Limit must be at least 1.")
    if model and model.startswith("replay:") and Path(model.partition(":")[2]).is_dir():
        replay, model = model.partition(":")[2], None

    replay_dir: Path | None = None
    if replay is not None:
        replay_dir, recorded = _replay_source(replay, settings)
        strategy = strategy or recorded.get("strategy")
        judge_model = judge_model or recorded.get("judge_model")
        if (
            dataset is None
            and cases is None
            and recorded.get("dataset")
            and Path(recorded["dataset"]).is_file()
        ):
            dataset = recorded["dataset"]
        if record:
            raise InputError("Use --record or --replay, not both.")

    strategy = strategy or suite.default_strategy
    if strategy not in suite.strategies:
        raise InputError(
            f"Unknown strategy {strategy!r} for {suite.app}; use one of {', '.join(sorted(suite.strategies))}."
        )
    if cases is not None:
        dataset_name, digest = (
            "(in memory)",
            hashlib.sha256(
                json.dumps(
                    [[c.id, c.inputs, c.expected] for c in cases], sort_keys=True, default=str
                ).encode()
            ).hexdigest(),
        )
        case_list = list(cases)[:limit] if limit else list(cases)
    else:
        path = resolve_dataset(suite, dataset)
        case_list = load_dataset(path, limit=limit)
        dataset_name, digest = str(path), dataset_digest(path)
    if not case_list:
        raise InputError("There are no cases to run.")
    replay_skipped = 0
    if replay_dir is not None:  # a replay answers only the cases it recorded
        recorded_cases = [
            c for c in case_list if (replay_dir / f"{case_filename(c.id)}.jsonl").is_file()
        ]
        replay_skipped = len(case_list) - len(recorded_cases)
        if not recorded_cases:
            raise InputError(
                f"None of the {len(case_list)} cases has a cassette in {replay_dir}; replay the dataset that was recorded."
            )
        case_list = recorded_cases

    created = datetime.now(UTC)
    run_id = run_id or f"{suite.app}-{created:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    run_dir = Path(out_dir) if out_dir else settings.home / "evals" / run_id
    record_dir = run_dir / "cassettes" if record else None
    models = ModelSource(
        model=model,
        judge_model=judge_model,
        settings=settings,
        base_model=base_model,
        record_dir=record_dir,
        replay_dir=replay_dir,
        rate_limits=rate_limits,
    )
    models.check()  # before anything is written: a bad model spec leaves no empty run behind
    if suite.setup is not None:
        suite.setup(settings)
    runner_trace_dir = run_dir / "traces" / "runs"
    opts = StrategyOptions(
        model=model,
        judge_model=judge_model,
        settings=settings,
        model_for=models.model_for,
        trace_dir=runner_trace_dir,
    )
    strategy_fn = suite.strategies[strategy](opts)
    run_dir.mkdir(parents=True, exist_ok=True)
    if record_dir is not None:
        record_dir.mkdir(exist_ok=True)
        for stale in record_dir.glob("*.jsonl"):
            stale.unlink()
    judging = judge_model is not None
    bar = _progress(progress, f"{suite.app}/{strategy}", len(case_list))
    runner = _Runner(
        suite=suite,
        strategy=strategy_fn,
        models=models,
        run_dir=run_dir,
        concurrency=concurrency,
        retries=retries,
        backoff=backoff,
        judge=judging,
        judge_rubric=suite.judge_rubric or default_rubric(),
        judge_max_calls=judge_max_calls,
        judge_threshold=judge_threshold,
        progress=bar,
        workers=workers,
        stagger=stagger,
    )
    if bar is not None:
        runner.task_id = bar.add_task(
            f"{suite.app}/{strategy}", total=len(case_list), acc="–", errors=0
        )
    config = _config(
        record,
        replay_dir,
        limit,
        retries,
        judge_max_calls,
        judge_threshold,
        models,
        len(case_list),
        replay_skipped,
    )

    def finish(status: str, results: list[CaseResult], wall: float) -> EvalRun:
        return _finish(
            suite, strategy, model, judge_model, dataset_name, digest, created, run_id, run_dir, concurrency,
            wall, status, results, judge_threshold, config, store=store, report=report, settings=settings,
        )  # fmt: skip

    started = time.perf_counter()
    try:
        results = await runner.run(case_list)
    except (asyncio.CancelledError, KeyboardInterrupt):
        if runner.done:  # keep what finished: an interrupted run is stored and reported as such
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


def _config(
    record: bool,
    replay_dir: Path | None,
    limit: int | None,
    retries: int,
    judge_max_calls: int,
    judge_threshold: float,
    models: ModelSource,
    planned: int,
    replay_skipped: int = 0,
) -> dict[str, Any]:
    return {
        "record": record,
        "replay": str(replay_dir) if replay_dir else None,
        "limit": limit,
        "retries": retries,
        "judge_max_calls": judge_max_calls,
        "judge_threshold": judge_threshold,
        "rate_limits": {p: b.rate for p, b in models.limiters.items()},
        "planned_cases": planned,
        "replay_skipped": replay_skipped,
    }


def _finish(
    suite: EvalSuite,
    strategy: str,
    model: str | None,
    judge_model: str | None,
    dataset: str,
    digest: str,
    created: datetime,
    run_id: str,
    run_dir: Path,
    concurrency: int,
    wall: float,
    status: str,
    results: list[CaseResult],
    judge_threshold: float,
    config: dict[str, Any],
    *,
    store: bool,
    report: bool,
    settings: Settings,
) -> EvalRun:
    config = {**config, "submit_tool": suite.submit_tool}
    metrics, details, targets = summarize(
        results, labels=suite.labels, targets=suite.targets, judge_threshold=judge_threshold
    )
    run = EvalRun(
        run_id=run_id,
        app=suite.app,
        strategy=strategy,
        dataset=dataset,
        dataset_sha256=digest,
        created_at=created.isoformat(timespec="seconds"),
        model=model,
        judge_model=judge_model,
        concurrency=concurrency,
        wall_seconds=wall,
        run_dir=str(run_dir),
        status=status,
        labels=list(suite.labels),
        targets=dict(suite.targets),
        metrics=metrics,
        details=details,
        target_results=targets,
        config=config,
        cases=results,
    )
    if report:
        from casework.evals.report import write_report

        write_report(run)
    if store:
        from casework.evals.store import save_run

        save_run(run, settings=settings)
    return run


def run_suite(suite: EvalSuite, **kwargs: Any) -> EvalRun:
    """Sync entry point of ``arun_suite`` (same arguments); gives the event loop a thread pool
    as large as the concurrency, so sync model wrappers never queue behind a small default."""
    concurrency = int(kwargs.get("concurrency", 4))

    async def main() -> EvalRun:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=max(8, concurrency + 4)))
        return await arun_suite(suite, **kwargs)

    return asyncio.run(main())
