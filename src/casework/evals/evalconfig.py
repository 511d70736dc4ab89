"""``EvalConfig``: every setting of an evaluation run, declared once.

The CLI builds it from its options, tests and notebooks build it directly; the runner reads
nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from casework.evals.cassettes import BaseModelFactory
from casework.evals.results import CaseResult
from casework.evals.suite import EvalCase

__all__ = ["CaseHook", "EvalConfig"]


class CaseHook(Protocol):
    """Told of a run's start and of each case as it is scored (``casework.evals.learning``'s
    ``Learner``: the reviewer of ``--learn``), with the deps the cases share."""

    def start(self, deps: Any) -> None: ...

    def after_case(self, case: EvalCase, result: CaseResult, deps: Any) -> None: ...


@dataclass
class EvalConfig:
    strategy: str | None = None
    """One of the suite's strategies; the suite's default when None."""
    model: str | None = None
    """``provider:name`` for every role of the strategy; the settings' per-role models when
    None. ``replay:DIR`` replays the cassettes in DIR (like ``replay=DIR``)."""
    judge_model: str | None = None
    """Turns the LLM judge on (with the suite's rubric or a default one)."""
    dataset: str | Path | None = None
    """A JSONL file or one of the suite's named datasets; the suite's default when None."""
    cases: Sequence[EvalCase] | None = None
    """Cases to run instead of a dataset file (app options such as ``--receipts``, tests)."""
    limit: int | None = None
    sample: int | None = None
    """A random sample of this many cases (seeded by ``seed``, kept in dataset order), drawn
    before ``limit`` applies: a fair subset of a large dataset when every case costs minutes."""
    seed: int = 0
    concurrency: int = 4
    """Cases in flight at once: the size of the worker thread pool."""
    executor: str = "local"
    """Where the cases run: ``local`` (worker threads here) or ``ray`` (tasks on a Ray cluster,
    each worker resolving its own models from the specs)."""
    address: str | None = None
    """The Ray cluster for ``executor="ray"``; None starts a local Ray."""
    record: bool = False
    """Write each case's model calls to ``<run_dir>/cassettes/<case>.jsonl``."""
    replay: str | Path | None = None
    """A run id or run directory recorded with ``record``: every model call is answered from
    its cassettes (no network); its strategy, dataset and judge are reused."""
    out_dir: str | Path | None = None
    """The run directory; ``<home>/evals/<run_id>`` by default."""
    settings: Any = None
    base_model: BaseModelFactory | None = None
    """``(case_id, role) -> chat model`` used instead of the configured models."""
    judge_max_calls: int = 200
    """Judge at most the first N cases (in dataset order, so replays agree)."""
    judge_threshold: float = 0.5
    retries: int = 3
    """Attempts after a transient error (``backoff`` seconds first, doubling)."""
    backoff: float = 1.0
    rate_limits: Mapping[str, float] | None = None
    """Requests per second per provider (``DEFAULT_RATE_LIMITS`` when None)."""
    progress: bool | Console = True
    """A Rich progress bar on stderr (or on the given console); False for none."""
    store: bool = True
    """Save the run to the database."""
    report: bool = True
    """Write report.json, report.html and the suite's plots."""
    run_id: str | None = None
    stagger: float = 0.01
    """Seconds between the start of one worker and the next (the first wave does not hit the
    model, or the CPU, all at once)."""
    all_layers: bool = False
    """A cascade strategy runs every layer on every case (its decisions and their recorded
    cost stay those of the layers it would have run), so the run can fit the cascade's
    thresholds and draw its accuracy–cost curve."""
    calibrate: bool = False
    """Also fit a calibration on this run (cross-fitted) and report ECE after it."""
    deps_settings: Any = None
    """The settings the suite's ``setup`` and ``deps`` get, when not the run's own (a
    ``--learn`` run's store of its own); the run is still stored with ``settings``."""
    case_hook: CaseHook | None = None
    """Told of each case in turn, before the next one starts; it needs the ``local`` executor
    at concurrency 1 (the runner refuses otherwise)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Recorded in the run's config as is (e.g. the app options that built the cases)."""
