"""Issue #21: Spider questions with the semantic strategy, eight cases at once, on a home with
no table index yet: no case ends in an error (the index is opened and built once, whatever
the number of cases asking), and the results are those of one case at a time."""

from __future__ import annotations

import json
from itertools import cycle, islice
from pathlib import Path
from typing import Any

from casework.apps.sql.benchmark import DATA_DIR
from casework.apps.sql.evalsuite import eval_suite
from casework.config import Settings
from casework.evals.evalconfig import EvalConfig
from casework.evals.runner import run_suite
from casework.llm import ScriptedChatModel, call

SAMPLE = DATA_DIR / "spider_sample"
CASES = 20


def _dataset(tmp_path: Path) -> Path:
    """20 Spider entries over the sample's two databases (its six questions, cycled)."""
    entries = json.loads((SAMPLE / "dev.json").read_text())
    path = tmp_path / "dev20.json"
    path.write_text(json.dumps([dict(e, question_id=f"q{i:02d}") for i, e in enumerate(islice(cycle(entries), CASES))]))  # fmt: skip
    return path


def _run(home: Path, dataset: Path, concurrency: int) -> Any:
    gold = {e["question"]: e["query"] for e in json.loads(dataset.read_text())}

    def oracle(messages: Any, tools: Any) -> Any:
        question = next(m.content for m in messages if m.type == "human")
        return call(
            "submit_answer",
            query=gold[question.removeprefix("Question: ")],
            explanation="x",
            confidence=0.7,
        )

    settings = Settings(home=home)
    suite = eval_suite()
    cases = suite.cases(settings, {"dataset": [str(dataset)], "db_dir": [str(SAMPLE / "database")]})  # fmt: skip
    config = EvalConfig(
        settings=settings,
        base_model=lambda case_id, role: ScriptedChatModel(responder=oracle),
        strategy="semantic",
        cases=cases,
        concurrency=concurrency,
        progress=False,
        retries=0,
    )
    return run_suite(suite, config)


def _retrieved(case: Any) -> list[Any]:
    steps = ((case.output or {}).get("response") or {}).get("reasoning_steps", [])
    return [s.get("tables") for s in steps if s.get("kind") == "retrieve_tables"]


def _outcome(run: Any) -> dict[str, tuple[Any, ...]]:
    return {
        c.case_id: (
            c.verdict,
            c.error,
            ((c.output or {}).get("response") or {}).get("query"),
            _retrieved(c),
            c.domain.get("execution_accuracy"),
            c.domain.get("table_recall"),
        )
        for c in run.cases
    }


def test_twenty_semantic_cases_at_concurrency_eight_on_a_fresh_home(tmp_path: Path):
    dataset = _dataset(tmp_path)
    at_once = _run(tmp_path / "home-8", dataset, concurrency=8)
    assert not (tmp_path / "home-1").exists()
    one_by_one = _run(tmp_path / "home-1", dataset, concurrency=1)

    assert len(at_once.cases) == CASES
    assert [c.error for c in at_once.failed_cases] == []
    assert all(c.verdict == "ANSWERED" for c in at_once.cases)
    assert _outcome(at_once) == _outcome(one_by_one)
    assert [c.domain["execution_accuracy"] for c in at_once.cases] == [1.0] * CASES
    # The semantic index (one collection per database) was really built and searched.
    assert (tmp_path / "home-8" / "chroma" / "chroma.sqlite3").is_file()
    assert all(_retrieved(c) and c.domain["table_recall"] == 1.0 for c in at_once.cases)
