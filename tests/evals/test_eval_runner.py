"""The runner with a scripted model: concurrency, storage, reopening, comparing, retries,
record and replay."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from evals_toy import (
    baseline_strategy,
    make_cases,
    make_suite,
    toy_models,
    toy_responder,
    write_dataset,
)
from langchain_core.utils.function_calling import convert_to_openai_tool

from casework.config import Settings
from casework.errors import ConfigError, InputError, ModelError, ReplayDriftError
from casework.evals import compare_runs, list_runs, load_run, run_suite
from casework.evals.cassettes import CaseModels
from casework.evals.metrics import TIMING_METRICS
from casework.evals.ratelimit import TokenBucket, provider_of
from casework.evals.retries import is_transient
from casework.evals.store import delete_run, resolve_run_id
from casework.evals.suite import EvalSuite
from casework.llm.scripted import ScriptedChatModel


def deterministic(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if k not in TIMING_METRICS}


@pytest.fixture
def big_suite(tmp_path: Path) -> EvalSuite:
    return make_suite(write_dataset(tmp_path / "toy24.jsonl", make_cases(3)))


def test_run_at_concurrency_8_stores_reopens_and_compares(
    big_suite: EvalSuite, settings: Settings
) -> None:
    run = run_suite(
        big_suite,
        concurrency=8,
        base_model=toy_models,
        judge_model="scripted:judge",
        progress=False,
    )
    assert len(run.cases) == 24 and run.status == "complete" and run.metrics["errors"] == 0
    m = run.metrics
    # per copy of the 8 base cases: 6 right (wrong verdict on 'wrong', NEEDS_REVIEW on 'stuck')
    assert m["verdict_accuracy"] == pytest.approx(18 / 24)
    assert m["circular_rate"] == pytest.approx(6 / 24)  # 'circular' and 'stuck' repeat lookups
    assert m["self_correction_success"] == 1.0 and m["tool_errors"] == 3
    assert m["dead_end_rate"] == pytest.approx(3 / 24)
    assert m["trajectory_superset_match"] == 1.0
    assert m["unnecessary_tool_rate"] == pytest.approx(3 / 24)
    assert m["reasoning_names_word"] == pytest.approx(21 / 24)
    assert m["judged"] == 24 and m["judge_kappa"] is not None
    assert run.details["trajectory_types"] == {
        "circular": 3,
        "dead_end": 3,
        "exploratory": 3,
        "optimal": 12,
        "recovery": 3,
    }
    by_id = {c.case_id: c for c in run.cases}
    assert by_id["c03-0"].trajectory["type"] == "recovery"
    assert by_id["c04-1"].trajectory["circular"] == [1]
    assert by_id["c05-2"].tool_choice["unnecessary"] == ["search_similar"]
    assert (
        by_id["c07-0"].ended_by == "limit:model_calls" and by_id["c07-0"].verdict == "NEEDS_REVIEW"
    )
    assert by_id["c06-0"].confidence == pytest.approx(0.95) and by_id["c06-0"].correct is False
    assert {t.metric: t.met for t in run.target_results} == {
        "verdict_accuracy": False,
        "redundant_call_rate": False,
        "reasoning_names_word": True,
    }

    # every case keeps its trace, and has a page
    run_dir = Path(run.run_dir)
    for case in run.cases:
        trace = run_dir / case.trace
        records = [json.loads(line) for line in trace.read_text().splitlines()]
        assert records[0]["type"] == "run_start" and records[-1]["type"] == "run_end"
        assert (run_dir / "traces" / f"{case.case_id}.html").is_file()
    assert (run_dir / "report.html").is_file() and (run_dir / "report.json").is_file()

    # stored, listed and reopened identically
    again = load_run(run.run_id)
    assert again.metrics == json.loads(json.dumps(run.metrics))
    assert [c.to_dict() for c in again.cases] == json.loads(
        json.dumps([c.to_dict() for c in run.cases])
    )
    assert again.target_results == run.target_results and again.created_at == run.created_at
    assert [r.run_id for r in list_runs()] == [run.run_id]
    assert resolve_run_id("latest") == run.run_id == resolve_run_id(run.run_id[:12])

    # a second run of another strategy on the same dataset, then A/B
    base = run_suite(big_suite, strategy="baseline", concurrency=8, progress=False)
    assert base.metrics["verdict_accuracy"] == 1.0 and "trajectory_types" not in base.details
    assert {r.run_id for r in list_runs(app="toy")} == {run.run_id, base.run_id}
    cmp = compare_runs(load_run(run.run_id), load_run(base.run_id))
    assert cmp.paired_cases == 24 and cmp.warnings == []
    assert cmp.mcnemar.a_only == 0 and cmp.mcnemar.b_only == 6
    assert cmp.mcnemar.p_value == pytest.approx(2 * 0.5**6)
    assert cmp.mcnemar.significant
    assert sorted({d.change for d in cmp.differing}) == ["fixed"]


def test_one_worker_and_four_give_the_same_metrics(suite: EvalSuite, settings: Settings) -> None:
    runs = [
        run_suite(
            suite,
            concurrency=n,
            base_model=toy_models,
            progress=False,
            store=False,
            report=False,
        )
        for n in (1, 4)
    ]
    assert deterministic(runs[0].metrics) == deterministic(runs[1].metrics)
    assert runs[0].metrics["verdict_accuracy"] == pytest.approx(6 / 8)


def test_recorded_run_replays_offline_with_identical_metrics(
    suite: EvalSuite, settings: Settings
) -> None:
    recorded = run_suite(
        suite,
        concurrency=4,
        base_model=toy_models,
        judge_model="scripted:judge",
        record=True,
        progress=False,
    )
    cassettes = sorted((Path(recorded.run_dir) / "cassettes").glob("*.jsonl"))
    assert len(cassettes) == 8
    # no base model and no network: every answer comes from the cassettes, judge included
    replayed = run_suite(suite, replay=recorded.run_id, concurrency=4, progress=False)
    assert replayed.strategy == recorded.strategy and replayed.judge_model == "scripted:judge"
    assert replayed.metrics["errors"] == 0
    assert deterministic(replayed.metrics) == deterministic(recorded.metrics)
    assert [(c.case_id, c.verdict, c.tool_calls, c.judge) for c in replayed.cases] == [
        (c.case_id, c.verdict, c.tool_calls, c.judge) for c in recorded.cases
    ]
    assert replayed.config["replay"] == str(Path(recorded.run_dir) / "cassettes")
    # the run directory works too, and so does --model replay:DIR
    by_dir = run_suite(
        suite, model=f"replay:{recorded.run_dir}", progress=False, store=False, report=False
    )
    assert deterministic(by_dir.metrics) == deterministic(recorded.metrics)


def test_replay_drift_and_missing_cassette_fail_the_case_not_the_run(
    suite: EvalSuite, settings: Settings, tmp_path: Path
) -> None:
    recorded = run_suite(
        suite, base_model=toy_models, record=True, progress=False, store=False, report=False
    )
    cases = make_cases()
    cases[0].inputs["label"] = "VEGETABLE"  # the prompt changes: drift
    extra = make_cases()[1]
    extra.id = "new-case"  # never recorded
    run = run_suite(
        suite,
        cases=[*cases, extra],
        replay=recorded.run_dir,
        progress=False,
        store=False,
        report=False,
    )
    errors = {c.case_id: c.error for c in run.cases if c.error}
    assert (
        errors["c01"].startswith("ReplayDriftError: Replay drift")
        and "prompt changed" in errors["c01"]
    )
    assert run.cases[0].attempts == 1  # drift is never retried
    assert run.metrics["errors"] == 1 and run.cases[1].error is None
    # a case that was never recorded is left out, and counted
    assert "new-case" not in {c.case_id for c in run.cases} and run.config["replay_skipped"] == 1
    with pytest.raises(InputError, match="None of the 1 cases has a cassette"):
        run_suite(
            suite, cases=[extra], replay=recorded.run_dir, progress=False, store=False, report=False
        )


def test_replaying_a_limited_recording_replays_only_its_cases(
    suite: EvalSuite, settings: Settings
) -> None:
    recorded = run_suite(suite, base_model=toy_models, record=True, limit=3, progress=False)
    replayed = run_suite(suite, replay=recorded.run_id, progress=False, store=False, report=False)
    assert [c.case_id for c in replayed.cases] == ["c01", "c02", "c03"]
    assert deterministic(replayed.metrics) == deterministic(recorded.metrics)


def test_transient_errors_are_retried_input_errors_are_not(
    tmp_path: Path, settings: Settings
) -> None:
    cases = make_cases()[:3]
    cases[2].id = "bad-input"
    suite = make_suite(write_dataset(tmp_path / "f.jsonl", cases))
    run = run_suite(
        suite,
        strategy="flaky",
        base_model=toy_models,
        backoff=0.01,
        progress=False,
        store=False,
        report=False,
    )
    by_id = {c.case_id: c for c in run.cases}
    assert by_id["c01"].attempts == 2 and by_id["c01"].error is None and by_id["c01"].correct
    assert by_id["bad-input"].attempts == 1
    assert by_id["bad-input"].error == "InputError: Case bad-input is malformed."
    assert by_id["bad-input"].correct is False
    assert run.metrics["errors"] == 1 and run.metrics["error_rate"] == pytest.approx(1 / 3)
    trace = Path(run.run_dir) / by_id["bad-input"].trace
    assert json.loads(trace.read_text().splitlines()[-1])["type"] == "error"
    no_retries = run_suite(
        suite,
        strategy="flaky",
        base_model=toy_models,
        retries=0,
        progress=False,
        store=False,
        report=False,
    )
    assert all(
        c.error.startswith("TimeoutError") for c in no_retries.cases if c.case_id != "bad-input"
    )


def test_recording_a_retried_case_starts_its_cassette_over(
    tmp_path: Path, settings: Settings
) -> None:
    suite = make_suite(write_dataset(tmp_path / "f.jsonl", make_cases()[:2]))
    run = run_suite(
        suite,
        strategy="flaky",
        base_model=toy_models,
        backoff=0.01,
        record=True,
        progress=False,
        store=False,
        report=False,
    )
    lines = (Path(run.run_dir) / "cassettes" / "c01.jsonl").read_text().splitlines()
    assert len(lines) == run.cases[0].efficiency["model_calls"] == 2


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (TimeoutError("t"), True),
        (TimeoutError(), True),
        (ConnectionResetError("r"), True),
        (type("RateLimitError", (Exception,), {})("429"), True),
        (type("APIStatusError", (Exception,), {"status_code": 503})("x"), True),
        (type("APIStatusError", (Exception,), {"status_code": 400})("x"), False),
        (
            type(
                "HTTPStatusError", (Exception,), {"response": type("R", (), {"status_code": 429})()}
            )("x"),
            True,
        ),
        (InputError("bad"), False),
        (ModelError("The model could not be reached."), False),
        (ReplayDriftError("drift"), False),
        (ValueError("bug"), False),
        (KeyError("bug"), False),
    ],
)
def test_is_transient(exc: BaseException, transient: bool) -> None:
    assert is_transient(exc) is transient


def test_token_bucket_limits_rate() -> None:
    bucket = TokenBucket(rate=50, burst=1)
    started = time.perf_counter()
    for _ in range(6):
        assert bucket.acquire()
    assert time.perf_counter() - started >= 5 / 50 * 0.9
    assert TokenBucket(rate=1).acquire(blocking=False)

    async def burst() -> float:
        b = TokenBucket(rate=40, burst=2)
        t = time.perf_counter()
        await asyncio.gather(*(b.aacquire() for _ in range(6)))
        return time.perf_counter() - t

    assert asyncio.run(burst()) >= 4 / 40 * 0.9
    with pytest.raises(ValueError):
        TokenBucket(rate=0)


def test_model_source_roles_rate_limits_and_missing_cassettes(
    settings: Settings, tmp_path: Path
) -> None:
    assert provider_of("openai:gpt-4o-mini") == "openai" and provider_of(None) == "custom"
    source = CaseModels(
        model="openai:gpt-4o-mini",
        judge_model="anthropic:claude-3-5-haiku",
        settings=settings,
        rate_limits={"openai": 2.0},
    )
    assert source.spec_for("default") == "openai:gpt-4o-mini"
    assert source.spec_for("eval_judge") == "anthropic:claude-3-5-haiku"
    assert source.limiters["openai"].rate == 2.0 and "anthropic" not in source.limiters
    with pytest.raises(ConfigError, match="Network models are disabled"):
        source.model_for("c1", "default")
    plain = CaseModels(model=None, judge_model=None, settings=settings)
    assert plain.spec_for("specialist") == settings.models.for_role("specialist")
    assert plain.spec_for("eval_judge") == settings.models.for_role("judge")
    replay = CaseModels(model=None, judge_model=None, settings=settings, replay_dir=tmp_path)
    with pytest.raises(ConfigError, match="No cassette for case 'x'"):
        replay.model_for("x", "default")


def test_rate_limit_applies_to_every_model_call(suite: EvalSuite, settings: Settings) -> None:
    started = time.perf_counter()
    run = run_suite(
        suite,
        cases=make_cases()[:2],
        concurrency=2,
        base_model=toy_models,
        progress=False,
        store=False,
        report=False,
        rate_limits={"custom": 20.0},
    )
    # 4 model calls at 20 per second with a burst of 1: at least 3 waits of 50 ms
    assert time.perf_counter() - started >= 0.15 - 0.01
    assert run.config["rate_limits"] == {"custom": 20.0}


def test_bad_arguments_are_one_sentence_input_errors(suite: EvalSuite, settings: Settings) -> None:
    with pytest.raises(
        InputError,
        match=r"Unknown strategy 'nope' for toy; use one of agent, baseline, flaky\.",
    ):
        run_suite(suite, strategy="nope", progress=False)
    with pytest.raises(InputError, match="Concurrency must be at least 1"):
        run_suite(suite, concurrency=0, progress=False)
    with pytest.raises(InputError, match="Nothing to replay"):
        run_suite(suite, replay="no-such-run", progress=False)
    with pytest.raises(InputError, match=r"No dataset 'missing\.jsonl'"):
        run_suite(suite, dataset="missing.jsonl", progress=False)


def test_limit_out_dir_and_delete(suite: EvalSuite, settings: Settings, tmp_path: Path) -> None:
    run = run_suite(suite, strategy="baseline", limit=3, out_dir=tmp_path / "mine", progress=False)
    assert len(run.cases) == 3 and run.run_dir == str(tmp_path / "mine")
    assert (tmp_path / "mine" / "report.html").is_file()
    assert delete_run(run.run_id[:10]) == run.run_id
    assert list_runs() == []


def test_a_bad_model_fails_before_anything_is_written(suite: EvalSuite, settings: Settings) -> None:
    with pytest.raises(ConfigError, match="Unknown model provider 'foo'"):
        run_suite(suite, model="foo:bar", progress=False)
    with pytest.raises(ConfigError, match="Network models are disabled"):
        run_suite(suite, judge_model="openai:gpt-4o-mini", base_model=None, progress=False)
    assert not (settings.home / "evals").exists()


class _BindingModel(ScriptedChatModel):
    """Binds tools the way most providers (and the bundled model) do: a RunnableBinding."""

    def bind_tools(self, tools, **kwargs):  # type: ignore[override]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools])


def test_recording_counts_each_model_call_once(suite: EvalSuite, settings: Settings) -> None:
    strategy = "agent"

    def models(case_id: str, role: str) -> ScriptedChatModel:
        return _BindingModel(responder=toy_responder)

    plain = run_suite(
        suite, strategy=strategy, base_model=models, progress=False, store=False, report=False
    )
    recorded = run_suite(
        suite,
        strategy=strategy,
        base_model=models,
        record=True,
        progress=False,
        store=False,
        report=False,
    )
    assert [c.efficiency["model_calls"] for c in recorded.cases] == [
        c.efficiency["model_calls"] for c in plain.cases
    ]
    assert recorded.metrics["total_tokens_mean"] == plain.metrics["total_tokens_mean"]
    assert plain.metrics["model_calls_mean"] == pytest.approx(21 / 8)


def test_an_interrupted_run_keeps_and_stores_what_finished(
    suite: EvalSuite, settings: Settings
) -> None:
    def stopping(input, deps, config):
        if input.case_id == "c05":
            raise KeyboardInterrupt
        return baseline_strategy(input, deps, config)

    interrupted = make_suite(
        suite.dataset, strategies={"stopping": stopping}, default_strategy="stopping"
    )
    with pytest.raises(KeyboardInterrupt):
        run_suite(interrupted, concurrency=1, stagger=0, progress=False)
    stored = load_run("latest")
    assert stored.status == "interrupted"
    assert [c.case_id for c in stored.cases] == ["c01", "c02", "c03", "c04"]
    assert (Path(stored.run_dir) / "report.html").is_file()


def test_sample_is_seeded_ordered_and_drawn_before_limit(
    suite: EvalSuite, settings: Settings
) -> None:
    from casework.evals.runplan import sample_cases

    full = [c.case_id for c in run_suite(suite, strategy="baseline", progress=False).cases]
    first = run_suite(suite, strategy="baseline", sample=4, seed=7, progress=False)
    again = run_suite(suite, strategy="baseline", sample=4, seed=7, progress=False)
    ids = [c.case_id for c in first.cases]
    assert ids == [c.case_id for c in again.cases]
    assert len(ids) == 4 and ids == [i for i in full if i in ids]  # dataset order kept
    assert sample_cases(list(range(10)), 3, seed=1) == sample_cases(list(range(10)), 3, seed=1)
    assert sample_cases(list(range(10)), 3, seed=1) != sample_cases(list(range(10)), 3, seed=2)
    assert sample_cases(list(range(5)), 9) == [0, 1, 2, 3, 4]
    limited = run_suite(suite, strategy="baseline", sample=4, seed=7, limit=2, progress=False)
    assert [c.case_id for c in limited.cases] == ids[:2]
    with pytest.raises(InputError, match="Sample must be at least 1"):
        run_suite(suite, sample=0, progress=False)
