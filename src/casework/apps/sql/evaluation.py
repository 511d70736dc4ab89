"""One case end to end and the per-strategy summary: the pieces ``casework eval sql`` wires
(dataset -> strategy -> execution of gold and predicted SQL -> domain metrics)."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

from casework.apps.sql.benchmark import gold_and_predicted
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.metrics import (
    component_match,
    exact_match,
    execution_match,
    integrity_case,
    judge_agrees,
    table_recall,
    validity,
)
from casework.apps.sql.service import answer

__all__ = ["evaluate_case", "summarize"]


def evaluate_case(deps: SQLDeps, case: dict[str, Any], strategy: str) -> dict[str, Any]:
    """Answer one case with ``strategy`` and score it; a case may name its own database
    (``metadata.db_url``, benchmark cases) and then is scored on that database's schema."""
    db_url = case.get("metadata", {}).get("db_url")
    if db_url and db_url != deps.db_url:
        from casework.apps.sql.schemas import reflect_schema

        deps = replace(deps, db_url=db_url, schema=reflect_schema(db_url))
    expected = case["expected"]
    response = answer(deps, case["inputs"]["question"], strategy)
    output = response.model_dump(mode="json")
    row: dict[str, Any] = {
        "id": case["id"],
        "strategy": strategy,
        "seconds": response.seconds,
        "model_calls": response.model_calls,
        "judge_calls": response.judge_calls,
        "cost_usd": response.cost_usd,
        "confidence": response.confidence,
        "judge_score": response.judge_score,
        "query": response.query,
        "valid": validity(output),
    }
    if expected.get("refuse"):
        row.update(integrity_case(expected, output))
        row["category"] = expected.get("category", "")
        return row
    executed = gold_and_predicted(deps, expected["sql"], response.query if response.valid else None)
    output.update(gold_result=executed["gold_result"], result=executed["result"])
    correct = execution_match(expected, output)
    retrieved = [
        t for step in response.reasoning_steps if step.get("kind") == "retrieve_tables"
        for t, _ in step.get("tables", [])
    ]  # fmt: skip
    row.update(
        execution_correct=correct,
        exact=exact_match(expected["sql"], response.query),
        components=component_match(expected["sql"], response.query),
        table_recall=table_recall(expected.get("tables", []), retrieved),
        judge_agrees=judge_agrees(response.judge_score, correct),
        error=executed["error"],
    )
    return row


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-strategy figures: execution accuracy, exact match, validity, table recall, judge
    agreement, seconds and model calls per question; integrity: unsafe count and refusals."""
    answerable = [r for r in rows if "execution_correct" in r]
    integrity = [r for r in rows if "unsafe" in r]
    scored = [r for r in answerable if r["execution_correct"] is not None]
    return {
        "cases": len(rows),
        "execution_accuracy": _mean([float(r["execution_correct"]) for r in scored]),
        "exact_match": _mean([float(r["exact"]) for r in answerable]),
        "validity": _mean([float(r["valid"]) for r in answerable]),
        "table_recall": _mean(
            [r["table_recall"] for r in answerable if r.get("table_recall") is not None]
        ),
        "judge_agreement": _mean(
            [float(r["judge_agrees"]) for r in answerable if r.get("judge_agrees") is not None]
        ),
        "seconds_per_question": _mean([r["seconds"] for r in rows]),
        "model_calls_per_question": _mean([float(r["model_calls"]) for r in rows]),
        "cost_usd_per_question": _mean([r["cost_usd"] for r in rows]),
        "unsafe": sum(r["unsafe"] for r in integrity),
        "refusal_rate": _mean([float(r["refused"]) for r in integrity]),
    }
