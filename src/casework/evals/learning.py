"""Learning from review, measured: ``casework eval APP --learn``.

The cases run twice, in the same order, one at a time, each run on a store of its own (a
temporary database that is deleted afterwards: a ``--learn`` run neither starts from the
user's examples nor leaves any behind):

1. **without memory**: the memory stays empty, so the memory layer never answers and a model
   layer is shown no demonstrations;
2. **with memory**: after each case, if its decision went to a person (``decided`` is false:
   an error, nobody sure, NEEDS_REVIEW), or, with probability ``spot_check``, one that did
   not (one seeded draw per case, so a run is reproducible), the case's gold answer becomes an
   example as a reviewer's would: through the app's ``ExamplesHook`` (its key text and
   answer), ``source="review"``, ``verified_by="eval:reviewer"``, before the next case runs.

Both runs are stored like any other (``casework eval compare`` reads them); the run with
memory carries the learning curve (``details["learning"]``: ``learning_curve``), which its
report shows and writes as ``learning_curve.svg`` beside ``report.html``.

The examples go where the app's strategies read them: the memory of the deps' store
(``open_stores(deps.settings)``, the store an app's memory layer opens), which the runner
builds from the run's own store (``EvalConfig.deps_settings``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.evals.evalconfig import EvalConfig
from casework.evals.layer_report import decided
from casework.evals.learning_curve import curve_rows, learning_summary
from casework.evals.results import CaseResult, EvalRun
from casework.evals.runplan import run_cases
from casework.evals.suite import EvalCase, EvalSuite
from casework.runtime.memory import ExampleDraft, ExamplesHook, Memory

__all__ = [
    "REVIEWER",
    "SPOT_CHECK",
    "Learner",
    "LearningRun",
    "deps_memory",
    "example_or_reason",
    "isolated_store",
    "run_learning",
]

REVIEWER = "eval:reviewer"
"""Who verified the examples a ``--learn`` run makes."""
SPOT_CHECK = 0.2
"""The share of decided cases a reviewer checks anyway (``--spot-check``)."""

MemoryOf = Callable[[Any], Memory]


def deps_memory(app: str) -> MemoryOf:
    """The memory of ``app`` in the deps' store, as the local operator sees it (every row)."""

    def memory_of(deps: Any) -> Memory:
        settings = getattr(deps, "settings", None)
        if settings is None:
            raise InputError(
                f"The {app} evaluation gives its strategies no settings, so --learn cannot "
                "find the memory they read."
            )
        from casework.examples import memory_for

        return memory_for(settings, app, None)

    return memory_of


@contextlib.contextmanager
def isolated_store(settings: Settings) -> Iterator[Settings]:
    """``settings`` on a temporary SQLite store of their own (migrated on first use), deleted
    when the block ends; the home (calibrations, cascade policies) stays the user's."""
    from casework.stores.sql import get_engine

    folder = Path(tempfile.mkdtemp(prefix="casework-learn-"))
    url = f"sqlite:///{(folder / 'store.db').as_posix()}"
    try:
        yield settings.model_copy(update={"database_url": url})
    finally:
        get_engine(url).dispose()
        shutil.rmtree(folder, ignore_errors=True)


def _example(hook: ExamplesHook, case: EvalCase) -> tuple[str, dict[str, Any]]:
    """(key text, verified answer) of a case, as the app's hook makes them."""
    return hook.key_text(case.inputs), hook.answer_of(case.expected)


def example_or_reason(hook: ExamplesHook, case: EvalCase) -> str | None:
    """None when the hook takes the case as an example; else why not, in words."""
    try:
        _example(hook, case)
    except ValueError as exc:
        return str(exc)
    return None


def _check_share(spot_check: float) -> None:
    if not 0.0 <= spot_check <= 1.0:
        raise InputError(f"--spot-check is a share of cases from 0 to 1, not {spot_check}.")


class Learner:
    """The reviewer of a ``--learn`` run (an ``EvalConfig.case_hook``): ``start`` checks that
    the run's memory is empty (and stores ``preload``), ``after_case`` turns a case that went
    to a person, or a spot check, into an example before the next case runs. ``learn=False``
    only watches (the run without memory)."""

    def __init__(
        self,
        app: str,
        hook: ExamplesHook,
        *,
        learn: bool = True,
        spot_check: float = SPOT_CHECK,
        seed: int = 0,
        run_id: str | None = None,
        preload: Sequence[EvalCase] = (),
        memory_of: MemoryOf | None = None,
    ) -> None:
        _check_share(spot_check)
        self.app = app
        self.hook = hook
        self.learn = learn
        self.spot_check = spot_check
        self.run_id = run_id
        self.preload = list(preload)
        self.memory_of = memory_of or deps_memory(app)
        # a generator of its own: --sample draws from random.Random(seed)
        self._draws = random.Random(f"spot-check:{seed}")
        self._memory: Memory | None = None
        self.log: list[dict[str, Any]] = []
        """Per case in order: whether it went to a person, was spot-checked, the example made."""

    def start(self, deps: Any) -> None:
        memory = self.memory_of(deps)
        held = memory.count()
        if held:
            raise InputError(
                f"The evaluation's store already holds {held} {self.app} example(s); a run that "
                "measures learning starts from an empty memory."
            )
        if self.preload:
            drafts = []
            for case in self.preload:
                key, answer = _example(self.hook, case)
                drafts.append((key, ExampleDraft(dict(case.inputs), answer, self.run_id)))
            memory.add_many(drafts, verified_by=REVIEWER, source="import")
        self._memory = memory

    def after_case(self, case: EvalCase, result: CaseResult, deps: Any) -> None:
        draw = self._draws.random()  # one draw per case: spot checks do not shift with reviews
        reviewed = not decided(result)
        entry: dict[str, Any] = {
            "case_id": case.id,
            "reviewed": reviewed,
            "spot_checked": not reviewed and draw < self.spot_check,
            "example_id": None,
        }
        if self.learn and (entry["reviewed"] or entry["spot_checked"]):
            memory = self._memory or self.memory_of(deps)
            try:
                key, answer = _example(self.hook, case)
            except ValueError as exc:  # a case that is no example of the app (a mixed set)
                entry["skipped"] = str(exc)
            else:
                entry["example_id"] = memory.add(
                    key,
                    dict(case.inputs),
                    answer,
                    verified_by=REVIEWER,
                    source="review",
                    run_id=self.run_id,
                ).id
        self.log.append(entry)


@dataclass
class LearningRun:
    """The two runs of a ``--learn`` command and the curve that compares them."""

    memory: EvalRun
    baseline: EvalRun
    learning: dict[str, Any]
    """``details["learning"]`` of the run with memory: rows per tenth, summary, counts."""

    @property
    def svg(self) -> Path | None:
        path = self.memory.path / "learning_curve.svg" if self.memory.path else None
        return path if path is not None and path.is_file() else None


def _learnable(hook: ExamplesHook, cases: Sequence[EvalCase], app: str) -> int:
    """How many cases the hook takes; none is one sentence (the dataset is not the app's
    kind of example)."""
    reasons = [r for r in (example_or_reason(hook, c) for c in cases) if r is not None]
    if len(reasons) == len(cases):
        raise InputError(
            f"None of the {len(cases)} cases can become a {app} example ({reasons[0]}); "
            "choose a dataset of such cases with --dataset."
        )
    return len(cases) - len(reasons)


def run_learning(
    suite: EvalSuite,
    config: EvalConfig,
    hook: ExamplesHook,
    *,
    spot_check: float = SPOT_CHECK,
    memory_of: MemoryOf | None = None,
) -> LearningRun:
    """The cases of ``config`` (sampled and limited as it says; the suite's ``learn_dataset``
    when it names no dataset) without memory, then learning from review; both runs stored,
    the second reported with its learning curve."""
    if config.replay is not None or config.executor != "local":
        raise InputError(
            "--learn runs the cases one by one here: it takes neither --replay nor --executor ray."
        )
    settings: Settings = config.settings or get_settings()
    dataset = config.dataset
    if dataset is None and config.cases is None:
        dataset = suite.learn_dataset
    planned = dataclasses.replace(config, dataset=dataset, settings=settings)
    cases, _, _ = run_cases(suite, planned)
    learnable = _learnable(hook, cases, suite.app)
    _check_share(spot_check)
    stem = config.run_id or (
        f"{suite.app}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}-learn"
    )
    out = Path(config.out_dir) if config.out_dir else settings.home / "evals" / stem
    said = {"spot_check": spot_check, "seed": config.seed, "learnable_cases": learnable}
    common: dict[str, Any] = {
        "cases": cases,
        "dataset": dataset,
        "sample": None,
        "limit": None,
        "concurrency": 1,
        "settings": settings,
    }
    with isolated_store(settings) as store:
        baseline = _run(
            suite,
            dataclasses.replace(
                planned,
                **common,
                run_id=f"{stem}-none",
                out_dir=out / "without-memory",
                deps_settings=store,
                case_hook=Learner(suite.app, hook, learn=False, memory_of=memory_of),
                extra={**config.extra, "learn": {**said, "memory": False}},
            ),
        )
    learner = Learner(
        suite.app,
        hook,
        spot_check=spot_check,
        seed=config.seed,
        run_id=stem,
        memory_of=memory_of,
    )
    with isolated_store(settings) as store:
        memory = _run(
            suite,
            dataclasses.replace(
                planned,
                **common,
                run_id=stem,
                out_dir=out,
                deps_settings=store,
                case_hook=learner,
                report=False,
                store=False,
                extra={**config.extra, "learn": {**said, "memory": True}},
            ),
        )
    learning = _learning(suite, memory, baseline, learner, spot_check, config.seed)
    memory.details["learning"] = learning
    _keep(suite, config, memory, settings)
    return LearningRun(memory, baseline, learning)


def _keep(suite: EvalSuite, config: EvalConfig, run: EvalRun, settings: Settings) -> None:
    """The learning run's report (with its curve) and its stored row, as the config asks."""
    if config.report:
        from casework.evals.report import write_report

        write_report(run, plots=suite.plots)
    if config.store:
        from casework.evals.store import save_run

        save_run(run, settings=settings)


def _run(suite: EvalSuite, config: EvalConfig) -> EvalRun:
    from casework.evals.runner import run_suite

    return run_suite(suite, config)


def _learning(
    suite: EvalSuite,
    memory: EvalRun,
    baseline: EvalRun,
    learner: Learner,
    spot_check: float,
    seed: int,
) -> dict[str, Any]:
    runs = {"memory": memory.cases, "none": baseline.cases}
    metric = suite.learning_metric
    rows = curve_rows(runs, metric)
    log = learner.log
    return {
        "metric": metric,
        "metric_label": metric or "accuracy",
        "rows": rows,
        "summary": learning_summary(runs, rows, metric),
        "examples": sum(e["example_id"] is not None for e in log),
        "reviewed": sum(e["reviewed"] and e["example_id"] is not None for e in log),
        "spot_checked": sum(e["spot_checked"] and e["example_id"] is not None for e in log),
        "not_examples": sum("skipped" in e for e in log),
        "spot_check": spot_check,
        "seed": seed,
        "baseline_run": baseline.run_id,
        "cases": log,
    }
