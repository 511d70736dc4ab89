"""`casework eval APP --learn`: the cases in order, each reviewed one (and spot checks)
becoming an example before the next; the same cases without memory; the curve per tenth;
stores of their own; `bench decided --memory`.

A toy app: a memory layer (bag-of-words embeddings, so similarities are exact) before a
scripted "model" layer that calls itself one model call and is sure only of texts with
"sure" in them (then it answers "guess")."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from casework import registry
from casework.config import Settings
from casework.errors import InputError
from casework.evals import run_suite
from casework.evals.cli import build_app
from casework.evals.evalconfig import EvalConfig
from casework.evals.learning import REVIEWER, run_learning
from casework.evals.learning_curve import curve_rows, parts_of
from casework.evals.results import CaseResult
from casework.evals.suite import EvalCase, EvalSuite
from casework.runtime import memory as memory_module
from casework.runtime.cascade import Cascade, Layer
from casework.runtime.decision import Decision, EndReason, RunInfo
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import memory_layer
from casework.runtime.usage import Usage
from casework.stores import open_stores

DIM = 64


def words(texts: list[str]) -> list[list[float]]:
    """Normalised bag of words hashed into DIM buckets: texts sharing words are similar."""
    out = []
    for text in texts:
        v = [0.0] * DIM
        for w in text.lower().split():
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        out.append([x / n for x in v])
    return out


@pytest.fixture(autouse=True)
def bag_of_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every memory (the app's and the reviewer's) embeds with ``words``: no MiniLM."""
    monkeypatch.setattr(memory_module, "_default_embedder", words)


class Hook:
    def key_text(self, inputs: dict[str, Any]) -> str:
        if "text" not in inputs:
            raise ValueError("a toy example needs a 'text'")
        return str(inputs["text"])

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        return {"label": expected["verdict"]}


def _memory(deps: Any, config: Any) -> Memory:
    return Memory(open_stores(deps.settings).engine, "toy")


def _recalled(answer: dict[str, Any] | None, confidence: float, reasoning: str) -> Decision:
    if answer is None:
        return Decision(verdict="NEEDS_REVIEW", confidence=0, reasoning=reasoning)
    return Decision(verdict=answer["label"], confidence=confidence, reasoning=reasoning)


def _model(text: str, deps: Any, config: Any) -> Decision:
    sure = "sure" in text
    decision = Decision(verdict="guess", confidence=95 if sure else 40, reasoning="scripted")
    decision.run = RunInfo(
        ended_by=EndReason.SUBMIT, model="scripted:toy", usage=Usage(model_calls=1)
    )
    return decision


CASCADE = Cascade(
    "toy-learn",
    [
        Layer("memory", memory_layer(_memory, lambda text: text, _recalled), 90.0),
        Layer("model", _model, 80.0),
    ],
    decision=Decision,
)

# (text, gold): ten cases, one per tenth
STREAM = [
    ("van late again", "late"),  # 1 nobody sure: to a person, learned
    ("van late again", "late"),  # 2 the memory answers (learned from 1)
    ("sure thing", "guess"),  # 3 the model is sure and right
    ("new pickup question", "question"),  # 4 to a person
    ("new pickup question", "question"),  # 5 memory
    ("sure wrong one", "update"),  # 6 the model is sure and wrong
    ("van late again", "late"),  # 7 memory
    ("moved house", "update"),  # 8 to a person
    ("moved house", "update"),  # 9 memory
    ("sure thing", "guess"),  # 10 the model again
]


def make_cases() -> list[EvalCase]:
    return [
        EvalCase(id=f"c{i + 1:02d}", inputs={"text": t}, expected={"verdict": v})
        for i, (t, v) in enumerate(STREAM)
    ]


def write_dataset(path: Path) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": c.id, "inputs": c.inputs, "expected": c.expected}) + "\n"
            for c in make_cases()
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def suite(tmp_path: Path) -> EvalSuite:
    return EvalSuite(
        app="toy",
        dataset=write_dataset(tmp_path / "stream.jsonl"),
        strategies={"cascade": CASCADE},
        default_strategy="cascade",
        labels=["late", "question", "update", "guess", "NEEDS_REVIEW"],
        input_model=lambda case: case.inputs["text"],
        deps=lambda settings: SimpleNamespace(settings=settings),
    )


def _learn(suite: EvalSuite, settings: Settings, **fields: Any):
    spot = fields.pop("spot_check", 0.0)
    fields.setdefault("report", False)  # a report costs seconds; one test writes it
    config = EvalConfig(settings=settings, progress=False, **fields)
    return run_learning(suite, config, Hook(), spot_check=spot)


def test_examples_come_only_from_reviewed_cases_and_before_the_next_case(
    suite: EvalSuite, settings: Settings
) -> None:
    learned = _learn(suite, settings)
    log = learned.learning["cases"]
    assert [e["reviewed"] for e in log] == [
        True, False, False, True, False, False, False, True, False, False,
    ]  # fmt: skip
    made = [e["example_id"] is not None for e in log]
    assert made == [e["reviewed"] for e in log]  # spot check 0: only what went to a person
    by = [c.decided_by for c in learned.memory.cases]
    # case 2 is answered from the example case 1 made: the example existed before it ran
    assert by == [None, "memory", "model", None, "memory", "model", "memory", None, "memory", "model"]  # fmt: skip
    assert learned.learning["examples"] == 3 and learned.learning["reviewed"] == 3


def test_the_run_without_memory_is_the_plain_run(suite: EvalSuite, settings: Settings) -> None:
    learned = _learn(suite, settings)
    plain = run_suite(suite, settings=settings, progress=False, store=False, report=False)
    assert [c.verdict for c in learned.baseline.cases] == [c.verdict for c in plain.cases]
    assert all(c.decided_by != "memory" for c in learned.baseline.cases)
    assert learned.baseline.config["learn"]["memory"] is False


def test_the_curve_per_tenth_is_pinned(suite: EvalSuite, settings: Settings) -> None:
    learned = _learn(suite, settings, report=True)
    rows = learned.learning["rows"]
    assert [r["memory"]["accuracy"] for r in rows] == [0, 1, 1, 0, 1, 0, 1, 0, 1, 1]
    assert [r["none"]["accuracy"] for r in rows] == [0, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    assert [r["memory"]["model_share"] for r in rows] == [1, 0, 1, 1, 0, 1, 0, 1, 0, 1]
    assert [r["none"]["model_share"] for r in rows] == [1] * 10
    assert [r["memory"]["memory_share"] for r in rows] == [0, 1, 0, 0, 1, 0, 1, 0, 1, 0]
    summary = learned.learning["summary"]
    assert summary["memory"]["second_half_accuracy"] == 0.6  # cases 6-10
    assert summary["none"]["second_half_accuracy"] == 0.2
    assert summary["memory"]["model_share_last_over_first"] == 1.0
    assert learned.svg is not None and "<svg" in learned.svg.read_text(encoding="utf-8")
    html = (learned.memory.path / "report.html").read_text(encoding="utf-8")
    assert "Learning curve" in html and learned.baseline.run_id in html


def test_memory_decided_is_unknown_outside_a_cascade() -> None:
    """A single strategy records no deciding layer: its share is None ("–"), not 0."""
    plain = CaseResult(case_id="a", index=0, verdict="ANSWERED")
    layered = CaseResult(
        case_id="b", index=1, decided_by="memory-vote", layers=[{"layer": "memory-vote"}]
    )
    by_model = CaseResult(case_id="c", index=2, decided_by="choice", layers=[{"layer": "choice"}])
    rows = curve_rows({"memory": [plain, plain]}, None, parts=1)
    assert rows[0]["memory"]["memory_share"] is None
    rows = curve_rows({"memory": [layered, by_model, plain]}, None, parts=1)
    assert rows[0]["memory"]["memory_share"] == 0.5


def test_parts_of_cuts_the_stream_in_tenths() -> None:
    assert [len(p) for p in parts_of(24)] == [2, 3, 2, 3, 2, 2, 3, 2, 3, 2]
    assert [len(p) for p in parts_of(3)] == [1, 1, 1]  # fewer cases than tenths


def test_spot_checks_are_seeded_and_learn_decided_cases_too(
    suite: EvalSuite, settings: Settings
) -> None:
    every = _learn(suite, settings, spot_check=1.0)
    log = every.learning["cases"]
    assert all(e["example_id"] is not None for e in log)  # every decided case checked as well
    assert every.learning["spot_checked"] == 7
    a = _learn(suite, settings, spot_check=0.5, seed=3).learning["cases"]
    b = _learn(suite, settings, spot_check=0.5, seed=3).learning["cases"]
    assert [e["spot_checked"] for e in a] == [e["spot_checked"] for e in b]
    assert 0 < sum(e["spot_checked"] for e in a) < 7


def test_a_learn_run_neither_reads_nor_writes_the_users_memory(
    suite: EvalSuite, settings: Settings
) -> None:
    users = Memory(open_stores(settings).engine, "toy")
    mine = users.add(
        "van late again", {"text": "van late again"}, {"label": "question"},
        verified_by="ana", source="import",
    )  # fmt: skip
    learned = _learn(suite, settings)
    assert learned.memory.cases[0].decided_by is None  # not answered from the user's example
    assert [e.id for e in users.list()] == [mine.id]  # and nothing of the run's left behind
    assert all(e.verified_by != REVIEWER for e in users.list())


def test_a_case_the_hook_does_not_take_is_not_learned_and_none_is_refused(
    suite: EvalSuite, settings: Settings
) -> None:
    cases = [*make_cases()[:2], EvalCase(id="odd", inputs={"other": "x"}, expected={})]
    suite.input_model = lambda case: case.inputs.get("text", "")
    learned = _learn(suite, settings, cases=cases)
    assert learned.learning["examples"] == 1 and learned.learning["not_examples"] == 1
    with pytest.raises(InputError, match="None of the 1 cases can become a toy example"):
        _learn(suite, settings, cases=cases[2:])
    with pytest.raises(InputError, match="spot-check"):
        _learn(suite, settings, spot_check=1.5)


runner = CliRunner()


@pytest.fixture
def registered(suite: EvalSuite, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        registry,
        "_cache",
        {
            "toy": registry.AppSpec(
                name="toy", description="toy", eval_suite=lambda: suite, examples=Hook
            ),
            "plain": registry.AppSpec(name="plain", description="", eval_suite=lambda: suite),
        },
    )
    monkeypatch.setenv("COLUMNS", "160")


def test_the_cli_prints_one_json_document(registered: None, settings: Settings) -> None:
    out = runner.invoke(build_app(), ["toy", "--learn", "--spot-check", "0", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["learning"]["summary"]["none"]["second_half_accuracy"] == 0.2
    assert data["memory_run"]["run_id"] + "-none" == data["baseline_run"]["run_id"]
    assert data["learning_curve_svg"].endswith("learning_curve.svg")


def test_the_text_table_says_the_second_half_and_the_model_share_ratio(
    suite: EvalSuite, settings: Settings
) -> None:
    from rich.console import Console

    from casework.evals.learning_curve import print_learning

    console = Console(record=True, width=120)
    print_learning(_learn(suite, settings), console)
    text = console.export_text()
    assert "second half accuracy: 0.60 with memory, 0.20 without" in text
    assert "model share last tenth / first tenth: 1.00 with memory (1.00 / 1.00)" in text
    assert "3 examples learned: 3 reviewed, 0 spot checks" in text
    assert "│ 2     │ 2–2   │ 1.00 / 0.00" in text


def test_an_app_without_examples_is_one_sentence_and_exit_2(
    registered: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from casework import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(["eval", "plain", "--learn", "--no-progress"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "The plain app keeps no examples, so --learn has nothing to learn from" in err
    assert "Traceback" not in err


def test_bench_decided_times_the_second_half_with_and_without_memory(
    suite: EvalSuite, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casework.bench import decided

    spec = registry.AppSpec(name="toy", description="", eval_suite=lambda: suite, examples=Hook)
    monkeypatch.setattr(decided, "all_apps", lambda: {"toy": spec})
    result = decided.run_decided_bench(["toy"], sample=10, seed=1, settings=settings, memory=True)
    rows = result["memory"]["toy"]
    assert rows["imported"] == 5  # cases 1-5 as examples; cases 6-10 timed
    assert rows["none"]["decided"] == 2 and rows["none"]["model_calls_mean"] == 1.0
    # 6 the model, 7 and 10 the memory; 8 and 9 still to a person (the bench does not learn)
    assert rows["memory"]["decided"] == 3 and rows["memory"]["model_calls_mean"] == 0.6
