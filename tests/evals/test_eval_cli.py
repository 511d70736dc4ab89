"""``casework eval``: a command per registered app, list, show, compare, validate, delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from evals_toy import make_cases, make_suite, toy_models, write_dataset
from typer.testing import CliRunner

from casework import registry
from casework.config import Settings
from casework.errors import ConfigError, InputError, NotFoundError
from casework.evals import EvalRun, run_suite
from casework.evals.cli import build_app
from casework.evals.suite import EvalSuite

runner = CliRunner()


@pytest.fixture
def toy_app(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> EvalSuite:
    suite = make_suite(write_dataset(tmp_path / "toy.jsonl", make_cases()))
    spec = registry.AppSpec(name="toy", description="toy app", eval_suite=lambda: suite)
    monkeypatch.setattr(
        registry, "_cache", {"toy": spec, "plain": registry.AppSpec(name="plain", description="")}
    )
    monkeypatch.setenv("COLUMNS", "160")
    return suite


@pytest.fixture
def recorded(toy_app: EvalSuite) -> EvalRun:
    return run_suite(
        toy_app, base_model=toy_models, judge_model="scripted:judge", record=True, progress=False
    )


def invoke(*args: str):
    result = runner.invoke(build_app(), list(args))
    return result


def test_one_command_per_app_with_a_suite(toy_app: EvalSuite) -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for name in ("toy", "calibrate", "list", "show", "compare", "validate", "delete"):
        assert name in result.output
    assert "plain" not in result.output
    assert invoke("run", "toy").exit_code == 2  # one way to evaluate: `casework eval APP`
    help_text = invoke("toy", "--help").output
    for option in (
        "--strategy",
        "--model",
        "--judge-model",
        "--dataset",
        "--limit",
        "--concurrency",
        "--record",
        "--replay",
        "--json",
        "--out",
        "--rate",
        "--check",
        "--calibrate",
        "--no-progress",
    ):
        assert option in help_text


def test_replay_through_the_cli_prints_json_and_checks_targets(
    recorded: EvalRun, tmp_path: Path
) -> None:
    result = invoke(
        "toy",
        "--replay",
        recorded.run_id,
        "--json",
        "--no-progress",
        "--out",
        str(tmp_path / "replayed"),
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["metrics"]["verdict_accuracy"] == recorded.metrics["verdict_accuracy"]
    assert data["judge_model"] == "scripted:judge" and data["targets_met"] is False
    assert data["failed_cases"] == ["c06", "c07"]
    assert Path(data["report_html"]).is_file() and data["run_dir"] == str(tmp_path / "replayed")
    checked = invoke("toy", "--replay", "latest:toy", "--check", "--no-progress")
    assert checked.exit_code == 1
    assert "Verdict accuracy" in checked.output and "report:" in checked.output


def test_list_show_and_case(recorded: EvalRun) -> None:
    listed = invoke("list", "--json")
    assert [r["run_id"] for r in json.loads(listed.output)] == [recorded.run_id]
    table = invoke("list")
    assert recorded.run_id in table.output and "75.0%" in table.output
    shown = json.loads(invoke("show", "latest", "--json").output)
    assert shown["run_id"] == recorded.run_id and shown["cases"] == 8
    case = invoke("show", recorded.run_id, "--case", "c04")
    assert case.exit_code == 0
    assert (
        "lookup_word -> lookup_word -> submit_decision" in case.output and "circular" in case.output
    )
    assert "c04.html" in case.output
    case_json = json.loads(invoke("show", recorded.run_id, "--case", "c03", "--json").output)
    assert case_json["trajectory"]["type"] == "recovery"
    rewritten = invoke("show", recorded.run_id, "--html")
    assert "report.html" in rewritten.output


def test_compare_two_runs(recorded: EvalRun, toy_app: EvalSuite, tmp_path: Path) -> None:
    base = run_suite(toy_app, strategy="baseline", progress=False)
    out = invoke("compare", recorded.run_id, base.run_id, "--json")
    data = json.loads(out.output)
    assert data["mcnemar"]["b_only"] == 2 and data["paired_cases"] == 8
    page = tmp_path / "cmp.html"
    text = invoke("compare", recorded.run_id, base.run_id, "--html", str(page))
    assert "McNemar exact p" in text.output and "fixed" in text.output
    assert page.is_file() and "McNemar" in page.read_text()


def test_validate_file_and_app(toy_app: EvalSuite, tmp_path: Path) -> None:
    ok = invoke("validate", str(toy_app.dataset))
    assert ok.exit_code == 0 and "8 cases" in ok.output and "trap 2" in ok.output
    assert json.loads(invoke("validate", "toy", "--json").output)["cases"] == 8
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"inputs": {}}\n{"inputs": 3}\n')
    result = invoke("validate", str(bad))
    assert isinstance(result.exception, InputError)
    assert str(result.exception) == "bad.jsonl line 2: inputs must be a JSON object."


def test_user_errors_are_casework_errors(toy_app: EvalSuite) -> None:
    for args, error in (
        (["show", "nope"], NotFoundError),
        (["toy", "--strategy", "x", "--no-progress"], InputError),
        (["toy", "--model", "openai:gpt-4o-mini", "--no-progress"], ConfigError),
        (["toy", "--model", "gpt4", "--no-progress"], ConfigError),
        (["toy", "--limit", "0", "--no-progress"], InputError),
        (["calibrate", "nope"], NotFoundError),
    ):
        result = invoke(*args)
        assert isinstance(result.exception, error), (args, result.exception)
        assert "\n" not in str(result.exception)


def test_delete(recorded: EvalRun) -> None:
    assert recorded.run_id in invoke("delete", recorded.run_id).output
    assert json.loads(invoke("list", "--json").output) == []


def test_json_stdout_is_one_document_even_when_a_strategy_prints(
    toy_app: EvalSuite, capfd: pytest.CaptureFixture[str]
) -> None:
    from evals_toy import baseline_strategy

    def chatty(input, deps, config):
        print("Joining model parts ...")  # a library writing to stdout mid-run
        return baseline_strategy(input, deps, config)

    toy_app.strategies = {**toy_app.strategies, "chatty": chatty}
    # Outside CliRunner, so stdout is the process's own stream.
    command = typer.main.get_command(build_app())
    command.main(["toy", "--strategy", "chatty", "--json", "--no-progress"], standalone_mode=False)
    out, err = capfd.readouterr()
    data = json.loads(out)
    assert data["strategy"] == "chatty" and data["metrics"]["verdict_accuracy"] == 1.0
    assert err.count("Joining model parts") == 8


def test_calibrate_a_stored_run_then_report_ece_after(
    toy_app: EvalSuite, settings: Settings
) -> None:
    cases = make_cases(2)
    recorded = run_suite(
        toy_app, cases=cases, base_model=toy_models, progress=False, calibrate=True
    )
    # 12 of 16 right at 70-90%, 2 wrong at 95%, 2 stuck runs (NEEDS_REVIEW at 0%)
    assert recorded.metrics["ece_before_calibration"] == pytest.approx(1.5 / 16)
    # cross-fitted on 16 decisions the map generalises badly, and the report says so
    assert recorded.metrics["ece_after_calibration_cv"] == pytest.approx(0.1932, abs=1e-3)
    assert "ece_after_calibration" not in recorded.metrics  # nothing stored yet
    result = invoke("calibrate", recorded.run_id, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["pairs"] == 16 and data["app"] == "toy" and data["strategy"] == "agent"
    path = Path(data["path"])
    assert path.parent == settings.home / "calibration" / "toy" and path.is_file()
    # The next run of (toy, agent, same model) is scored after the stored calibration too.
    again = run_suite(toy_app, cases=cases, base_model=toy_models, progress=False)
    assert data["calibration"]["knots"] == [0.0, 87.8571]
    assert data["calibration"]["values"] == [0.0, 85.7143]
    assert again.metrics["ece_after_calibration"] == pytest.approx(0.0575, abs=1e-3)
    assert "Expected calibration error" in (Path(again.run_dir) / "report.html").read_text()


def test_calibrate_runs_the_apps_own_fit_and_says_what_it_stored(toy_app: EvalSuite) -> None:
    recorded = run_suite(toy_app, cases=make_cases(2), base_model=toy_models, progress=False)
    seen: list[tuple[int, str]] = []

    def fit(cases, settings, run_id):
        seen.append((len(cases), run_id))
        return "the toy's own record stored"

    toy_app.calibrate_more = fit
    data = json.loads(invoke("calibrate", recorded.run_id, "--json").output)
    assert seen == [(len(recorded.cases), recorded.run_id)]
    assert data["app_fit"] == "the toy's own record stored"
    assert "toy: the toy's own record stored" in invoke("calibrate", recorded.run_id).output


def test_too_few_decisions_to_calibrate(toy_app: EvalSuite) -> None:
    run = run_suite(toy_app, strategy="baseline", limit=3, progress=False)
    result = invoke("calibrate", run.run_id)
    assert isinstance(result.exception, InputError)
    assert "at least 10 decisions" in str(result.exception)


def test_a_budget_needs_a_cascade_run(toy_app: EvalSuite) -> None:
    run = run_suite(toy_app, strategy="baseline", limit=3, progress=False)
    result = invoke("calibrate", run.run_id, "--max-model-share", "0.3")
    assert isinstance(result.exception, InputError)
    assert "not a cascade run made with --all-layers" in str(result.exception)


def test_errored_cases_are_counted_and_fail_check(toy_app: EvalSuite, tmp_path: Path) -> None:
    """A case that ends in an error is said either way and fails `--check` even when every
    target is met (none are set here)."""
    cases = make_cases()[:1]
    cases[0].id = "bad-input"  # the flaky strategy refuses it (an InputError: never retried)
    dataset = write_dataset(tmp_path / "bad.jsonl", cases)
    toy_app.targets = {}
    args = ["toy", "--strategy", "flaky", "--dataset", str(dataset), "--no-progress"]
    plain = invoke(*args)
    assert plain.exit_code == 0
    assert "1 of 1 case(s) errored:" in plain.stdout
    assert "bad-input: InputError: Case bad-input is malformed." in plain.stdout
    assert f"dataset {dataset}" in plain.stdout
    as_json = invoke(*args, "--json")
    assert as_json.exit_code == 0 and "1 of 1 cases errored (errored_cases)." in as_json.stderr
    assert json.loads(as_json.stdout)["errored_cases"] == [
        {"case_id": "bad-input", "error": "InputError: Case bad-input is malformed."}
    ]
    checked = invoke(*args, "--check")
    assert checked.exit_code == 1 and "--check fails the run." in checked.stderr


def test_cases_built_from_a_dataset_file_name_it(toy_app: EvalSuite, tmp_path: Path) -> None:
    from casework.evals.datasets import load_dataset
    from casework.evals.suite import SuiteOption

    dataset = write_dataset(tmp_path / "mine.jsonl", make_cases()[:2])
    toy_app.options = [SuiteOption("store", "A store.", metavar="FILE", with_dataset=True)]
    toy_app.cases = lambda settings, options: load_dataset(Path(options["dataset"][0]))
    args = ["toy", "--store", "x", "--dataset", str(dataset), "--strategy", "baseline"]
    result = invoke(*args, "--json", "--no-progress")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dataset"] == str(dataset)  # not "(in memory)"


def test_app_options_build_the_cases(toy_app: EvalSuite) -> None:
    from casework.evals.suite import SuiteOption

    seen: list[dict] = []

    def cases(settings, options):
        seen.append(options)
        return [c for c in make_cases() if c.inputs["word"] in options["words"]]

    toy_app.options = [SuiteOption("words", "Only these words.", metavar="WORD")]
    toy_app.cases = cases
    result = invoke(
        "toy", "--words", "apple", "--words", "carrot", "--strategy", "baseline", "--json",
        "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["cases"] == 2 and data["dataset"] == "(in memory)"
    assert seen == [{"words": ["apple", "carrot"]}]
    both = invoke("toy", "--words", "apple", "--dataset", "x.jsonl", "--no-progress")
    assert isinstance(both.exception, InputError)
    none = invoke("toy", "--words", "kiwi", "--no-progress")
    assert isinstance(none.exception, InputError) and "selected no cases" in str(none.exception)
