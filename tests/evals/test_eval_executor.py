"""``--executor local|ray``: the same run, the same figures, traces and usage, either way."""

from __future__ import annotations

import json
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import evals_toy
import pytest
from evals_toy import toy_models

from casework import cli
from casework.config import Settings
from casework.errors import ConfigError, InputError
from casework.evals import EvalRun, run_suite
from casework.evals.metrics import TIMING_METRICS
from casework.evals.suite import EvalSuite


def run_cli(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capfd.readouterr()
    try:
        cli.main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capfd.readouterr()
    return code, out, err


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_ray_address_that_does_not_answer_is_one_sentence_and_exit_2(
    settings: Settings, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "run"
    address = f"127.0.0.1:{closed_port()}"
    argv = ["eval", "receipts", "--strategy", "baseline", "--limit", "2", "--no-progress"]
    code, out, err = run_cli(
        [*argv, "--executor", "ray", "--address", address, "--out", str(out_dir)], capfd
    )
    assert code == 2 and out == ""
    assert f"No Ray cluster answers at {address}" in err and "Traceback" not in err
    assert not (out_dir / "report.json").exists()  # nothing half-written
    code, _, err = run_cli([*argv, "--executor", "threads"], capfd)
    assert code == 2 and "Unknown executor 'threads'; use local or ray." in err
    code, _, err = run_cli([*argv, "--address", address], capfd)
    assert code == 2 and "--address is only for --executor ray." in err


def test_the_runner_checks_the_executor_before_writing(
    suite: EvalSuite, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InputError, match="Unknown executor"):
        run_suite(suite, executor="dask", out_dir=tmp_path / "r1", progress=False)
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match="casework\\[ray\\]"):
        run_suite(suite, executor="ray", out_dir=tmp_path / "r2", progress=False)
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()


# --- on a local Ray: slow to start, so one session for the module ------------------------


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    # Ray workers cannot import the toy app's test module: it travels by value.
    ray.cloudpickle.register_pickle_by_value(evals_toy)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def same_figures(run: EvalRun) -> dict:
    """What must not depend on where the cases ran."""
    metrics = {k: v for k, v in run.metrics.items() if k not in TIMING_METRICS}
    cases = [
        (c.case_id, c.output, c.correct, c.attempts, c.judge, c.error, c.trace) for c in run.cases
    ]
    return {"metrics": metrics, "cases": cases, "targets": run.targets_met}


def trace_types(run: EvalRun) -> list[list[str]]:
    folder = Path(run.run_dir)
    return [
        [json.loads(line)["type"] for line in (folder / c.trace).read_text().splitlines()]
        for c in run.cases
    ]


@pytest.mark.slow
def test_scripted_agent_with_judge_and_retries_same_on_both_executors(
    ray_session: None, suite: EvalSuite, settings: Settings, tmp_path: Path
) -> None:
    runs = {}
    scratch = Path(tempfile.gettempdir())
    worker_folders = set(scratch.glob("casework-traces-*"))
    for executor in ("local", "ray"):
        for strategy in ("agent", "flaky"):
            runs[executor, strategy] = run_suite(
                suite,
                strategy=strategy,
                executor=executor,
                base_model=toy_models,  # a factory: each Ray worker builds its scripted models
                judge_model="scripted:judge",
                backoff=0.01,
                concurrency=2,
                out_dir=tmp_path / f"{executor}-{strategy}",
                progress=False,
                store=False,
            )
    for strategy in ("agent", "flaky"):
        local, ray = runs["local", strategy], runs["ray", strategy]
        assert same_figures(ray) == same_figures(local)
        assert trace_types(ray) == trace_types(local)
        assert ray.config["executor"] == "ray" and local.config["executor"] == "local"
    agent = runs["ray", "agent"]
    assert agent.metrics["verdict_accuracy"] == 0.75  # the toy's two trap cases fail
    assert agent.metrics["model_calls_mean"] == runs["local", "agent"].metrics["model_calls_mean"]
    assert all(c.judge and "score" in c.judge for c in agent.cases)
    assert "tool" in trace_types(agent)[0]  # the agent's own trace came back from the worker
    assert [c.attempts for c in runs["ray", "flaky"].cases] == [2] * 8  # retried in the worker
    assert not list((tmp_path / "ray-agent" / "traces" / "runs").glob("*"))
    # every trace came back: the workers' own folders are gone
    assert set(scratch.glob("casework-traces-*")) <= worker_folders


@pytest.mark.slow
def test_eval_receipts_baseline_gives_the_same_figures_on_ray(
    ray_session: None, settings: Settings, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "receipts", "--strategy", "baseline", "--limit", "20", "--json"]
    summaries = {}
    for executor in ("local", "ray"):
        code, out, err = run_cli(
            [*argv, "--executor", executor, "--out", str(tmp_path / executor)], capfd
        )
        assert code == 0, err
        summaries[executor] = json.loads(out)  # exactly one JSON document on stdout
    local, ray = summaries["local"], summaries["ray"]
    assert local["cases"] == ray["cases"] == 20

    def figures(metrics: dict) -> dict:  # all but the clock's
        return {k: v for k, v in metrics.items() if k not in TIMING_METRICS and "seconds" not in k}

    assert figures(ray["metrics"]) == figures(local["metrics"])
    assert ray["metrics"]["verdict_accuracy"] == local["metrics"]["verdict_accuracy"] == 0.8
    reports = {e: json.loads((tmp_path / e / "report.json").read_text()) for e in ("local", "ray")}
    verdicts = {
        e: [(c["case_id"], c["output"]["verdict"], c["trace"]) for c in r["cases"]]
        for e, r in reports.items()
    }
    assert verdicts["ray"] == verdicts["local"]
