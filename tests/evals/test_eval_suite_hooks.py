"""The suite hooks an app plugs its own shape into: ``read_case`` (its own JSONL form),
``run_metrics`` (run-level figures, checked against targets) and ``headline`` (what the
console summary prints)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from evals_toy import make_suite

from casework.evals.results import CaseResult
from casework.evals.runner import run_suite


def short_form(record: dict[str, Any], dataset: Path) -> dict[str, Any]:
    """The toy's short form: ``{"word", "label", "verdict"}``, plus the dataset's name."""
    if "inputs" in record:
        return record
    if "word" not in record:
        raise ValueError("a short line needs a word")
    return {
        "id": record["word"],
        "inputs": {"word": record["word"], "label": record["label"], "behaviour": "normal"},
        "expected": {"verdict": record["verdict"]},
        "metadata": {"from": dataset.name},
    }


def totals(results: Sequence[CaseResult]) -> dict[str, float | int | None]:
    """A count a per-case mean cannot give."""
    return {"invalid_total": sum(r.verdict == "INVALID" for r in results)}


def test_read_case_run_metrics_and_their_targets(settings: Any, tmp_path: Path) -> None:
    path = tmp_path / "short.jsonl"
    lines = [
        {"word": "apple", "label": "FRUIT", "verdict": "VALID"},
        {"word": "carrot", "label": "FRUIT", "verdict": "INVALID"},
        {"word": "trout", "label": "FRUIT", "verdict": "INVALID"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    suite = make_suite(
        path,
        read_case=short_form,
        run_metrics=totals,
        targets={"invalid_total_max": 1},
        headline=["invalid_total"],
    )
    run = run_suite(suite, strategy="baseline", progress=False, settings=settings)
    assert [c.case_id for c in run.cases] == ["apple", "carrot", "trout"]
    assert run.cases[0].metadata == {"from": "short.jsonl"}
    assert run.metrics["verdict_accuracy"] == 1.0 and run.metrics["invalid_total"] == 2
    (target,) = run.target_results
    assert (target.metric, target.value, target.met) == ("invalid_total", 2, False)


def test_a_line_read_case_refuses_is_one_sentence_with_its_number(
    settings: Any, tmp_path: Path
) -> None:
    from casework.errors import InputError

    path = tmp_path / "short.jsonl"
    path.write_text('{"word": "apple", "label": "FRUIT", "verdict": "VALID"}\n{"label": "X"}\n')
    suite = make_suite(path, read_case=short_form)
    with pytest.raises(InputError, match=r"^short\.jsonl line 2: a short line needs a word\.$"):
        run_suite(suite, strategy="baseline", progress=False, settings=settings)


def test_the_console_summary_prints_the_app_headline(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from casework.evals import runs_cli

    path = tmp_path / "short.jsonl"
    path.write_text('{"word": "carrot", "label": "FRUIT", "verdict": "INVALID"}\n')
    suite = make_suite(path, read_case=short_form, run_metrics=totals, headline=["invalid_total"])
    run = run_suite(suite, strategy="baseline", progress=False, settings=settings)
    monkeypatch.setattr(runs_cli, "_app_headline", lambda app: list(suite.headline))
    runs_cli.print_run(run)
    assert "Invalid total" in capsys.readouterr().out
