"""Reports (JSON, self-contained HTML, case pages, trajectory graphs) and run comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from evals_toy import make_cases, make_suite, toy_models, write_dataset

from casework.config import Settings
from casework.errors import InputError
from casework.evals import (
    CaseResult,
    EvalRun,
    compare_runs,
    load_run,
    mcnemar_exact,
    run_suite,
    write_report,
)
from casework.evals._svg import trajectory_svg
from casework.evals.compare import render_compare_html
from casework.evals.report import (
    REPORT_SCHEMA,
    format_metric,
    metric_label,
    render_html,
    report_json,
)


@pytest.fixture
def toy_run(tmp_path: Path, settings: Settings) -> EvalRun:
    suite = make_suite(write_dataset(tmp_path / "toy.jsonl", make_cases()))
    return run_suite(
        suite, concurrency=4, base_model=toy_models, judge_model="scripted:judge", progress=False
    )


def test_report_json_has_run_metrics_targets_details_and_cases(toy_run: EvalRun) -> None:
    data = json.loads((Path(toy_run.run_dir) / "report.json").read_text())
    assert data["schema"] == REPORT_SCHEMA
    assert data["run"]["run_id"] == toy_run.run_id and data["run"]["strategy"] == "agent"
    assert data["metrics"]["verdict_accuracy"] == pytest.approx(0.75)
    assert {t["metric"] for t in data["targets"]} == {
        "verdict_accuracy",
        "redundant_call_rate",
        "reasoning_names_word",
    }
    assert data["targets_met"] is False
    assert data["details"]["classification"]["labels"][:3] == ["VALID", "INVALID", "NEEDS_REVIEW"]
    assert len(data["details"]["calibration"]["bins"]) == 10
    assert len(data["cases"]) == 8 and data["cases"][0]["trace"] == "traces/c01.jsonl"
    assert report_json(toy_run)["metrics"] == toy_run.metrics


def test_html_report_is_self_contained_and_shows_what_a_reader_needs(toy_run: EvalRun) -> None:
    html = (Path(toy_run.run_dir) / "report.html").read_text()
    assert "<script" not in html
    assert not re.search(r"""(src|href)=['"](https?:)?//""", html), "no external assets"
    assert (
        "<style>" in html and html.count("data:image/png;base64,") == 4
    )  # reliability, latency, tokens, types
    for text in (
        "Targets",
        "Verdict accuracy",
        "75.0%",
        "target &gt;= 95.0%",
        "missed",
        "Confusion matrix",
        "reliability diagram",
        "Latency and cost",
        "trajectory types",
        "Failed cases",
        "LLM judge",
        "Accuracy by scenario",
        "Judge ↔ deterministic kappa",
    ):
        assert text in html, text
    # failed cases link to their trace page and raw trace, and those exist
    links = set(re.findall(r"href='(traces/[^']+)'", html))
    assert "traces/c06.html" in links and "traces/c07.jsonl" in links
    for link in links:
        assert (Path(toy_run.run_dir) / link).is_file(), link


def test_case_page_has_graph_scores_and_timeline(toy_run: EvalRun) -> None:
    page = (Path(toy_run.run_dir) / "traces" / "c04.html").read_text()
    assert "<svg" in page and "repeats call 1" in page and "reference path (1 calls)" in page
    assert "circular" in page and "calls lookup_word" in page
    assert "../report.html" in page and "<script" not in page
    recovery = (Path(toy_run.run_dir) / "traces" / "c03.html").read_text()
    assert "self-correction" in recovery and "failed" in recovery


def test_report_can_be_rewritten_from_the_database(toy_run: EvalRun, tmp_path: Path) -> None:
    stored = load_run(toy_run.run_id)
    out = write_report(stored, tmp_path / "again")
    assert out.name == "report.html" and (tmp_path / "again" / "traces" / "c01.html").is_file()
    assert render_html(stored).count("<h2>") == render_html(toy_run).count("<h2>")


def test_report_without_verdicts_confidences_or_tools(tmp_path: Path) -> None:
    run = EvalRun(
        run_id="r1",
        app="x",
        strategy="s",
        dataset="d.jsonl",
        dataset_sha256="0" * 64,
        created_at="2026-01-01T00:00:00+00:00",
        run_dir=str(tmp_path),
        cases=[CaseResult(case_id="a", index=0, output={"answer": 1})],
        metrics={"cases": 1},
    )
    path = write_report(run)
    html = path.read_text()
    assert "No expected verdicts" in html and "No decision carried a confidence" in html
    assert "No agent runs with tool calls" in html and "declares no targets" in html


def test_trajectory_svg_marks_errors_extras_repeats_and_the_end() -> None:
    svg = trajectory_svg(
        [
            {"name": "lookup", "args": {"w": "x1"}, "ok": False, "output": "Error"},
            {"name": "lookup", "args": {"w": "x"}, "ok": True},
            {"name": "search", "args": {}, "ok": True},
            {"name": "lookup", "args": {"w": "x"}, "ok": True},
            {"name": "submit_decision", "args": {"verdict": "VALID"}, "ok": True},
        ],
        ["lookup"],
        ended_by="submit",
        verdict="VALID",
    )
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "self-correction" in svg and "repeats call 2" in svg and "end: submit" in svg
    assert "#fdf0dc" in svg and "#fbe4e4" in svg  # an unnecessary call, a failed call
    assert trajectory_svg([], None).count("actual path (0 calls)") == 1


def test_metric_formatting() -> None:
    assert format_metric("verdict_accuracy", 0.954) == "95.4%"
    assert format_metric("validity_first_try", 0.5) == "50.0%"
    assert format_metric("ece", 0.04213) == "0.042"
    assert (
        format_metric("cost_per_1k", 1.5) == "$1.50"
        and format_metric("cost_per_case", 0.0015) == "$0.0015"
    )
    assert format_metric("wall_seconds_p95", 1.234) == "1.23 s"
    assert format_metric("path_length_mean", 2.0) == "2" and format_metric("x", None) == "–"
    assert (
        metric_label("f1.VALID") == "F1 of VALID"
        and metric_label("field_match.verdict") == "Field match: verdict"
    )


def test_mcnemar_exact_known_values() -> None:
    # 8 discordant pairs for A, 2 for B: two-sided binomial p = 2 * P(X <= 2 | n=10, p=.5) = 0.109375
    a = [True] * 8 + [False] * 2 + [True] * 5 + [False] * 3
    b = [False] * 8 + [True] * 2 + [True] * 5 + [False] * 3
    t = mcnemar_exact(a, b)
    assert (t.a_only, t.b_only, t.both, t.neither) == (8, 2, 5, 3)
    assert t.p_value == pytest.approx(0.109375) and not t.significant
    assert mcnemar_exact([True] * 10, [False] * 10).p_value == pytest.approx(2 / 1024)
    same = mcnemar_exact([True, False], [True, False])
    assert same.p_value == 1.0 and not same.significant


def _run(run_id: str, outcomes: dict[str, tuple[str, bool]], sha: str = "s") -> EvalRun:
    cases = [
        CaseResult(case_id=k, index=i, verdict=v, expected_verdict="VALID", correct=ok)
        for i, (k, (v, ok)) in enumerate(outcomes.items())
    ]
    return EvalRun(
        run_id=run_id,
        app="toy",
        strategy="s",
        dataset="d",
        dataset_sha256=sha,
        created_at="2026-01-01T00:00:00+00:00",
        cases=cases,
        metrics={"verdict_accuracy": sum(c.correct for c in cases) / len(cases), "note": "x"},
    )


def test_compare_classifies_changes_and_handles_other_datasets() -> None:
    a = _run(
        "A",
        {
            "1": ("VALID", True),
            "2": ("INVALID", False),
            "3": ("VALID", True),
            "4": ("NEEDS_REVIEW", False),
            "5": ("VALID", True),
        },
    )
    b = _run(
        "B",
        {
            "1": ("VALID", True),
            "2": ("VALID", True),
            "3": ("INVALID", False),
            "4": ("INVALID", False),
            "6": ("VALID", True),
        },
        sha="t",
    )
    cmp = compare_runs(a, b)
    changes = {d.case_id: d.change for d in cmp.cases}
    assert changes == {"1": "same", "2": "fixed", "3": "broken", "4": "changed"}
    assert cmp.only_in_a == ["5"] and cmp.only_in_b == ["6"] and cmp.paired_cases == 4
    assert cmp.accuracy_a == 0.5 and cmp.accuracy_b == 0.5
    assert cmp.warnings == [
        "The runs used different dataset files; only the cases with the same id are paired.",
        "The runs share 4 of their cases (5 in A, 5 in B); every metric below is recomputed on the shared cases.",
    ]
    delta = next(m for m in cmp.metrics if m["metric"] == "verdict_accuracy")
    assert (delta["a"], delta["b"], delta["delta"]) == (
        0.5,
        0.5,
        0.0,
    )  # on the 4 shared cases, not 3/5 and 3/5
    same = compare_runs(a, a)
    assert (
        same.warnings == []
        and next(m for m in same.metrics if m["metric"] == "note")["delta"] is None
    )
    html = render_compare_html(cmp)
    assert (
        "McNemar exact p" in html and "fixed" in html and "broken" in html and "<script" not in html
    )
    assert json.loads(json.dumps(cmp.to_dict()))["mcnemar"]["a_only"] == 1
    with pytest.raises(InputError, match="no case in common"):
        compare_runs(a, _run("C", {"9": ("VALID", True)}))
