"""`casework eval vanpool`: the suite's task dispatch, its domain metrics, the rules
through the harness, and the Case Manager's trajectory scored on a scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from vanpool_helpers import specialist_responder

from casework.apps.vanpool.evalsuite import (
    DATASETS,
    TARGETS,
    TaskInput,
    eval_suite,
    task_input,
    task_of,
    tool_sequence_ok,
    vanpool_metrics,
)
from casework.apps.vanpool.scenarios import Scenario
from casework.apps.vanpool.strategies import AuditInput, ReplyInput, ShiftInput
from casework.config import Settings
from casework.errors import InputError
from casework.evals import CaseOutput, EvalCase, EvalConfig, run_suite
from casework.llm import RoleModels, ScriptedChatModel, call
from casework.runtime import RunConfig

FULL = {"employee_id": "EMP-0001", "shift_id": "SH-1", "vanpool_id": None, "overlap_minutes": 20}


def _config(tmp_path: Path, **fields: Any) -> EvalConfig:
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    return EvalConfig(
        settings=settings, progress=False, store=False, report=False, concurrency=1, **fields
    )


def test_each_case_goes_to_its_task() -> None:
    shift = EvalCase("s", {"employee_ids": ["EMP-0001"]}, metadata={"task": "shift"})
    location = EvalCase("l", {"vanpool_id": "VP-101"}, metadata={"task": "location"})
    untagged = EvalCase("u", {"vanpool_id": "VP-101"})
    reply = EvalCase("r", {"reply": "ok"})
    assert task_input(shift) == TaskInput("shift", ShiftInput(("EMP-0001",)))
    assert task_input(location) == TaskInput("location", AuditInput("VP-101"))
    assert task_input(untagged) == TaskInput("case-manager", AuditInput("VP-101"))
    assert task_input(reply) == TaskInput("outreach", ReplyInput("ok"))
    life = EvalCase("f", {"vanpool_id": "vp-119", "events": [{"day": 2, "timeout": True}]})
    assert task_input(life).task == "lifecycle"
    assert task_input(life).value == Scenario.from_inputs({**life.inputs, "vanpool_id": "VP-119"})
    faulty = EvalCase("t", {"vanpool_id": "VP-101", "fault": "distance_timeout"})
    assert task_input(faulty) == TaskInput("case-manager", AuditInput("VP-101"), "distance_timeout")
    with pytest.raises(InputError, match="unknown fault 'flood'"):
        task_input(EvalCase("t", {"vanpool_id": "VP-101", "fault": "flood"}))
    with pytest.raises(InputError, match="exactly one of reply"):
        task_input(EvalCase("e", {"vanpool_id": "VP-101", "events": [{"day": 1}]}))
    with pytest.raises(InputError, match="in day order"):
        Scenario.from_inputs(
            {
                "vanpool_id": "VP-1",
                "events": [{"day": 3, "timeout": True}, {"day": 1, "timeout": True}],
            }
        )
    with pytest.raises(InputError, match="Case x has neither"):
        task_of(EvalCase("x", {"text": "?"}))
    with pytest.raises(InputError, match="lacks the input 'reply'"):
        task_input(EvalCase("y", {}, metadata={"task": "outreach"}))


def test_domain_metrics_of_a_shift_case() -> None:
    case = EvalCase(
        "c",
        {"employee_ids": ["EMP-0001"]},
        expected={
            "verdict": "fail",
            "should_detect_conflict": True,
            "conflicting_employees": ["EMP-0001"],
            "overlap_minutes": {"EMP-0001": 24},
        },
        metadata={"task": "shift", "category": "edge", "complexity": "complex"},
    )
    right = vanpool_metrics(
        case,
        CaseOutput(
            {
                "verdict": "fail",
                "failed_employees": ["EMP-0001"],
                "reasoning": "Overlap 20 min, under 30.",
                "evidence": [{"ref": "EMP-0001", "fields": FULL}],
            }
        ),
    )
    assert right == {
        "accuracy_simple": None,
        "accuracy_edge": 1.0,
        "false_positive_rate": None,
        "false_negative_rate": 0.0,
        "employees_exact": 1.0,
        "shift_conflict_accuracy": 1.0,
        "evidence_completeness": 1.0,
        "time_format_valid": 1.0,
    }
    missed = vanpool_metrics(case, CaseOutput({"verdict": "pass", "reasoning": "10pm start"}))
    assert (missed["accuracy_edge"], missed["false_negative_rate"]) == (0.0, 1.0)
    assert (missed["shift_conflict_accuracy"], missed["time_format_valid"]) == (0.0, 0.0)


def test_domain_metrics_of_an_outreach_case() -> None:
    case = EvalCase(
        "o",
        {"reply": "I dispute this."},
        expected={"bucket": "escalation", "hitl_required": True},
        metadata={"task": "outreach", "complexity": "simple"},
    )
    out = vanpool_metrics(case, CaseOutput({"bucket": "update", "hitl_required": False}))
    assert out == {
        "accuracy_simple": 0.0,
        "accuracy_edge": None,
        "bucket_match": 0.0,
        "hitl_match": 0.0,
    }


def test_rules_through_the_harness(tmp_path: Path) -> None:
    suite = eval_suite()
    shift = run_suite(suite, _config(tmp_path, strategy="rules"))
    m = shift.metrics
    assert (m["cases"], m["errors"], m["verdict_accuracy"]) == (60, 0, 1.0)
    assert (m["shift_conflict_accuracy"], m["evidence_completeness"]) == (1.0, 1.0)
    assert (m["accuracy_simple"], m["accuracy_edge"], m["false_positive_rate"]) == (1.0, 1.0, 0.0)
    outreach = run_suite(suite, _config(tmp_path, strategy="rules", dataset="outreach"))
    # The keyword classifier reads "Confirmed, nothing has changed" as an update.
    assert outreach.metrics["bucket_match"] == pytest.approx(23 / 24)
    assert outreach.metrics["hitl_match"] == 1.0
    assert outreach.metrics["accuracy"] == pytest.approx(23 / 24)
    met = {t.metric: t.met for t in outreach.target_results}
    assert met["verdict_accuracy"] is None  # outreach has buckets, not verdicts


def test_case_manager_trajectory_on_a_scripted_model(tmp_path: Path) -> None:
    both = AIMessage(
        content="",
        tool_calls=[
            *call("run_location_specialist").tool_calls,
            *call("run_shift_specialist").tool_calls,
        ],
    )

    def models(case_id: str, role: str) -> Any:
        if role == "orchestrator":
            return ScriptedChatModel(
                steps=[
                    both,
                    call("submit_decision", verdict="verified", confidence=90, reasoning="ok"),
                ]
            )
        return ScriptedChatModel(responder=specialist_responder)

    run = run_suite(
        eval_suite(),
        _config(tmp_path, strategy="agent", dataset="case-manager", limit=2, base_model=models),
    )
    m = run.metrics
    assert (m["cases"], m["errors"], m["verdict_accuracy"]) == (2, 0, 1.0)
    assert (m["tool_choice_accuracy"], m["trajectory_optimality"]) == (1.0, 1.0)
    assert (m["path_length_mean"], m["redundant_call_rate"], m["circular_rate"]) == (2.0, 0.0, 0.0)
    assert m["failed_checks_exact"] == 1.0
    met = {t.metric: t.met for t in run.target_results}
    assert met["tool_choice_accuracy"] and met["path_length_mean"] and met["circular_rate"]
    assert set(TARGETS) >= {"tool_calls_mean_max", "path_efficiency"}


def test_tool_sequencing() -> None:
    spec = ["run_location_specialist", "run_shift_specialist", "upsert_case", "run_outreach"]
    assert tool_sequence_ok(spec)
    assert tool_sequence_ok(spec[:2])
    assert not tool_sequence_ok(["run_location_specialist", "upsert_case", "run_shift_specialist"])
    assert not tool_sequence_ok(["run_outreach", *spec])
    assert not tool_sequence_ok(["close_case"])


def _subset(tmp_path: Path, dataset: str, ids: list[str]) -> str:
    """A JSONL of some cases of a named dataset, in the given order."""
    import json

    rows = {json.loads(line)["id"]: line for line in DATASETS[dataset].read_text().splitlines()}
    path = tmp_path / f"{dataset}-subset.jsonl"
    path.write_text("".join(rows[i] + "\n" for i in ids))
    return str(path)


def test_lifecycle_business_figures_of_the_rules(tmp_path: Path) -> None:
    """Whole case lives on the rules auditor: every planted ending reached, hours to
    resolution pinned, no cancellation against the truth."""
    run = run_suite(eval_suite(), _config(tmp_path, strategy="rules", dataset="lifecycle"))
    m = run.metrics
    assert (m["cases"], m["errors"], m["verdict_accuracy"], m["exact_match"]) == (13, 0, 1.0, 1.0)
    # ack 48 h, portal fix + update 48, silent fix 168, silence x3 + approve 528, question +
    # ack 72, escalation + ack 96, silence x3 + reject 528; the pre_cancel case is unresolved.
    assert m["resolution_hours"] == pytest.approx((48 + 48 + 168 + 528 + 72 + 96 + 528) / 7)
    assert m["resolved_rate"] == pytest.approx(7 / 8)
    assert m["false_cancel_rate"] == 0.0
    by_id = {c.case_id: c for c in run.cases}
    cancelled = next(c for c in by_id if c.startswith("life-silence-cancelled"))
    assert (
        by_id[cancelled].output["cancelled_employees"]
        == by_id[cancelled].expected["planted_employees"]
    )
    # The judge reads the last email for tone: here the second reminder before pre-cancel.
    assert "check 2 of\n3" in by_id[cancelled].output["last_email"]


def test_a_wrong_flag_ends_in_a_false_cancel(tmp_path: Path) -> None:
    """A (scripted) Shift Specialist that flags a rider of a clean vanpool at every audit,
    then silence and an approving reviewer: the cancellation is one the truth does not
    support (false_cancel_rate 1.0), found three weeks and a day later."""
    import json

    from langchain_core.messages import ToolMessage

    from casework.apps.vanpool.evalsuite import EVAL_NOW, eval_deps, setup
    from casework.apps.vanpool.service import run_scenario

    [case] = [
        EvalCase(**row)
        for row in map(json.loads, DATASETS["lifecycle"].read_text().splitlines())
        if row["id"].startswith("life-clean-unflagged")
    ]
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    setup(settings)
    rider = eval_deps(settings).repo.get_vanpool(case.inputs["vanpool_id"]).riders[0].employee_id

    def wrong_shift(messages: list[Any], tools: list[str]) -> AIMessage:
        if "get_employee_shifts" not in tools:
            return specialist_responder(messages, tools)
        if not any(isinstance(m, ToolMessage) for m in messages):
            return call("get_employee_shifts")
        return call(
            "submit_decision",
            verdict="fail",
            confidence=60,
            reasoning="Looks off.",
            failed_employees=[rider],
            evidence=[{"source": "get_employee_shifts", "ref": rider, "summary": "?"}],
        )

    cm = ScriptedChatModel(
        steps=[
            AIMessage(
                content="",
                tool_calls=[
                    *call("run_location_specialist").tool_calls,
                    *call("run_shift_specialist").tool_calls,
                ],
            ),
            call("upsert_case", failed_checks=["shift"]),
            call("run_outreach"),
            call("submit_decision", verdict="pending_reply", confidence=60, reasoning="Flagged."),
        ]
    )

    def models(role: str) -> Any:
        return cm if role == "orchestrator" else ScriptedChatModel(responder=wrong_shift)

    deps = eval_deps(settings)
    config = RunConfig(models=RoleModels.given(models))
    out = run_scenario(task_input(case).value, deps.at(EVAL_NOW), "agent", config)
    assert (out.verdict, out.outcome, out.cancelled_employees) == ("closed", "cancelled", [rider])
    row = vanpool_metrics(case, CaseOutput(out.model_dump(mode="json")))
    assert (row["false_cancel_rate"], row["resolution_hours"]) == (1.0, 528.0)
    assert row["accuracy_simple"] == 0.0


def test_error_handling_cases_on_rules_and_a_scripted_agent(tmp_path: Path) -> None:
    """An unknown vanpool and a distance service that times out: NEEDS_REVIEW with a sentence
    naming the problem, no case opened, on the rules and on the agent."""
    dataset = _subset(
        tmp_path, "case-manager", ["cm-error-unknown-vanpool", "cm-error-distance-timeout-VP-101"]
    )
    rules = run_suite(eval_suite(), _config(tmp_path, strategy="rules", dataset=dataset))
    assert (rules.metrics["verdict_accuracy"], rules.metrics["error_handling_accuracy"]) == (
        1.0,
        1.0,
    )

    def specialist(messages: list[Any], tools: list[str]) -> AIMessage:
        from langchain_core.messages import ToolMessage

        seen = [m for m in messages if isinstance(m, ToolMessage)]
        if "check_commute_distance" in tools and seen and '"unavailable"' in seen[-1].content:
            return call(
                "submit_decision",
                verdict="NEEDS_REVIEW",
                confidence=0,
                reasoning="The distance service is unavailable (timeout).",
            )
        return specialist_responder(messages, tools)

    offered: list[list[str]] = []

    def orchestrator(messages: list[Any], tools: list[str]) -> AIMessage:
        offered.append(sorted(tools))
        if len(offered) == 1:
            return AIMessage(
                content="",
                tool_calls=[
                    *call("run_location_specialist").tool_calls,
                    *call("run_shift_specialist").tool_calls,
                ],
            )
        return call("submit_decision", verdict="verified", confidence=50, reasoning="ok")

    def models(case_id: str, role: str) -> Any:
        if role == "orchestrator":
            return ScriptedChatModel(responder=orchestrator)
        return ScriptedChatModel(responder=specialist)

    agent = run_suite(
        eval_suite(), _config(tmp_path, strategy="agent", dataset=dataset, base_model=models)
    )
    m = agent.metrics
    assert (m["errors"], m["verdict_accuracy"], m["error_handling_accuracy"]) == (0, 1.0, 1.0)
    timeout = next(c for c in agent.cases if "timeout" in c.case_id)
    assert "unavailable" in timeout.output["reasoning"] and timeout.output["case_id"] is None
    # a check without a verdict leaves nothing to open: only the submit tool is offered
    assert [t["name"] for t in timeout.tool_calls] == [
        "run_location_specialist",
        "run_shift_specialist",
        "submit_decision",
    ]
    assert offered[-1] == ["submit_decision"]
    assert m["tool_sequence_accuracy"] == 1.0


def _judge(score: float, seen: list[str]) -> Any:
    def respond(messages: list[Any], tools: list[str]) -> AIMessage:
        seen.append(str(messages[-1].content))
        return call("record_judgement", score=score, rationale="correctness 1, relevance 1:")

    return respond


def test_the_judge_scores_reasoning_and_never_gates(tmp_path: Path) -> None:
    """A judge that scores every answer 0 leaves every verdict right and every deterministic
    target as it was; only its own reasoning-quality target is missed."""
    from casework.evals.cassettes import JUDGE_ROLE

    seen: list[str] = []

    def models(case_id: str, role: str) -> Any:
        assert role == JUDGE_ROLE  # the rules call no model; only the judge is asked
        return ScriptedChatModel(responder=_judge(0.0, seen))

    run = run_suite(
        eval_suite(),
        _config(
            tmp_path,
            strategy="rules",
            dataset="location",
            limit=4,
            judge_model="scripted:judge",
            base_model=models,
        ),
    )
    m = run.metrics
    assert (m["judged"], m["judge_score_mean"], m["verdict_accuracy"]) == (4, 0.0, 1.0)
    assert all(c.correct for c in run.cases)
    met = {t.metric: t.met for t in run.target_results}
    assert met["judge_score_mean"] is False and met["verdict_accuracy"] is True
    prompt = seen[0]
    for criterion in ("correctness", "relevance", "conciseness", "helpfulness", "tone"):
        assert criterion in prompt


def test_ab_comparison_shows_the_vanpool_metrics(tmp_path: Path) -> None:
    """Rules against a scripted agent on three shift cases, through the platform's compare."""
    from casework.evals.compare import compare_runs

    rules = run_suite(eval_suite(), _config(tmp_path, strategy="rules", limit=3))
    agent = run_suite(
        eval_suite(),
        _config(
            tmp_path,
            strategy="agent",
            limit=3,
            base_model=lambda case_id, role: ScriptedChatModel(responder=specialist_responder),
        ),
    )
    cmp = compare_runs(rules, agent)
    rows = {r["metric"]: r for r in cmp.metrics}
    assert rows["evidence_completeness"]["a"] == rows["evidence_completeness"]["b"] == 1.0
    assert rows["shift_conflict_accuracy"]["b"] == 1.0  # the grounded overlap of the odd rider
    assert rows["verdict_accuracy"]["delta"] == 0.0
    assert (rows["model_calls_mean"]["a"], rows["model_calls_mean"]["b"]) == (0.0, 2.0)
    assert "cost_per_1k" in rows
    assert cmp.paired_cases == 3 and cmp.mcnemar is not None and not cmp.mcnemar.significant


def _cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    from casework.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_eval_cli_rules_json_and_agent_replayed_offline(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """`casework eval vanpool --strategy rules --json`, and the agent replayed from a
    recorded (scripted) run with `--model replay:DIR`: one JSON document each."""
    import json

    from casework.config import get_settings

    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    get_settings.cache_clear()
    try:
        code, out, err = _cli(
            capsys, "eval", "vanpool", "--strategy", "rules", "--dataset", "location", "--json"
        )
        assert code == 0, err
        summary = json.loads(out)
        assert (summary["strategy"], summary["cases"]) == ("rules", 38)
        assert summary["metrics"]["verdict_accuracy"] == 1.0
        assert {t["metric"] for t in summary["targets"]} >= {"verdict_accuracy", "judge_score_mean"}

        recorded = run_suite(
            eval_suite(),
            _config(
                tmp_path,
                strategy="agent",
                limit=2,
                record=True,
                out_dir=tmp_path / "recorded",
                base_model=lambda case_id, role: ScriptedChatModel(responder=specialist_responder),
            ),
        )
        assert recorded.metrics["verdict_accuracy"] == 1.0
        code, out, err = _cli(
            capsys,
            "eval", "vanpool", "--strategy", "agent", "--limit", "2",
            "--model", f"replay:{tmp_path / 'recorded'}", "--json", "--no-progress",
        )  # fmt: skip
        assert code == 0, err
        again = json.loads(out)
        assert again["metrics"]["verdict_accuracy"] == 1.0
        assert again["metrics"]["evidence_completeness"] == 1.0
        assert again["metrics"]["model_calls_mean"] == 2.0
    finally:
        get_settings.cache_clear()


ROSTER_CSV = """employee_id,name,email,home_zip,site,shift_name,shift,timezone,pto,vanpool_id,pickup_zip,work_site,departure,return,max_commute_miles
EMP-0001,Ana Diaz,ana@example.com,94538,Fremont,Day Shift,Mon-Fri 07:00-15:30,America/Los_Angeles,,VP-001,94536,Fremont,06:15,16:15,
EMP-0002,Ben Kim,ben@example.com,94555,Fremont,Split,Mon-Fri 06:00-10:00+14:00-18:00,America/Los_Angeles,,VP-001,94536,Fremont,06:15,16:15,
EMP-0003,Cy Lo,cy@example.com,94560,Fremont,Day Shift,Mon-Fri 07:00-15:30,America/Los_Angeles,,VP-002,94536,Fremont,06:15,16:15,
EMP-0004,Di Ng,di@example.com,10001,Fremont,Day Shift,Mon-Fri 07:00-15:30,America/Los_Angeles,,VP-002,94536,Fremont,06:15,16:15,
EMP-0005,Ed Po,ed@example.com,94539,Fremont,Nights,Mon-Fri 22:00-06:30,America/Los_Angeles,,VP-002,94536,Fremont,06:15,16:15,
"""
# Written by hand for this test: 10001 is Manhattan, 2,500 miles from the Fremont pickup;
# a night shift shares no minute with the day riders.
ROSTER_CASES = [
    {"id": "vp1", "inputs": {"vanpool_id": "VP-001"}, "expected": {"verdict": "verified"}},
    {
        "id": "vp2",
        "inputs": {"vanpool_id": "VP-002"},
        "expected": {"verdict": "pending_reply", "failed_checks": ["location", "shift"]},
    },
    {
        "id": "vp2-location",
        "inputs": {"vanpool_id": "VP-002"},
        "expected": {"verdict": "fail", "failed_employees": ["EMP-0004"]},
        "metadata": {"task": "location"},
    },
]


def test_a_users_own_roster_and_cases(tmp_path: Path) -> None:
    import json

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER_CSV)
    dataset = tmp_path / "mine.jsonl"
    dataset.write_text("".join(json.dumps(c) + "\n" for c in ROSTER_CASES))
    suite = eval_suite()
    cases = suite.cases(
        Settings(home=tmp_path / "home"), {"roster": [str(roster)], "dataset": [str(dataset)]}
    )
    run = run_suite(suite, _config(tmp_path, strategy="rules", cases=cases))
    assert [(c.case_id, c.verdict, c.correct) for c in run.cases] == [
        ("vp1", "verified", True),
        ("vp2", "pending_reply", True),
        ("vp2-location", "fail", True),
    ]
    # the evaluation store holds the user's roster only, never the bundled one
    from casework.apps.vanpool.evalsuite import eval_deps

    repo = eval_deps(Settings(home=tmp_path / "home")).repo
    assert repo.vanpool_ids() == ["VP-001", "VP-002"]


def test_the_readmes_single_shift_form_checks_the_vanpools_riders(tmp_path: Path) -> None:
    """`metadata.task: "shift"` with only `inputs.vanpool_id` (the README's form) checks that
    vanpool's riders; VP-002's night rider shares no minute with its two day riders."""
    import json

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER_CSV)
    dataset = tmp_path / "mine.jsonl"
    case = {
        "id": "vp2-shift",
        "inputs": {"vanpool_id": "VP-002"},
        "expected": {"verdict": "fail", "conflicting_employees": ["EMP-0005"]},
        "metadata": {"task": "shift"},
    }
    dataset.write_text(json.dumps(case) + "\n")
    suite = eval_suite()
    cases = suite.cases(
        Settings(home=tmp_path / "home"), {"roster": [str(roster)], "dataset": [str(dataset)]}
    )
    run = run_suite(suite, _config(tmp_path, strategy="rules", cases=cases))
    (only,) = run.cases
    assert (only.error, only.verdict, only.correct) == (None, "fail", True)
    assert only.output["failed_employees"] == ["EMP-0005"]


def test_a_users_roster_errors_are_one_sentence(tmp_path: Path) -> None:
    suite = eval_suite()
    settings = Settings(home=tmp_path / "home")
    roster = tmp_path / "roster.csv"
    with pytest.raises(InputError, match=r"--roster needs --dataset FILE\.jsonl"):
        suite.cases(settings, {"roster": [str(roster)]})
    with pytest.raises(InputError, match="There is no roster file at"):
        suite.cases(settings, {"roster": [str(roster)], "dataset": ["x.jsonl"]})
    roster.write_text(ROSTER_CSV.replace("94538", "00000"))
    with pytest.raises(
        InputError, match=r"Row 2 \(EMP-0001\), home_zip '00000': ZIP code 00000 does not exist"
    ):
        suite.cases(settings, {"roster": [str(roster)], "dataset": ["x.jsonl"]})


def test_a_run_under_model_names_that_model(tmp_path: Path) -> None:
    """`casework eval vanpool --model X` (issue #20): each case's ``RunInfo.model`` is X, not
    the settings' model of the role. X here is a cassette recorded from a scripted run."""
    recorded = run_suite(
        eval_suite(),
        _config(
            tmp_path,
            strategy="agent",
            limit=1,
            record=True,
            out_dir=tmp_path / "recorded",
            base_model=lambda case_id, role: ScriptedChatModel(responder=specialist_responder),
        ),
    )
    assert recorded.config["strategy_model"] == "scripted"
    cassette = next((tmp_path / "recorded" / "cassettes").glob("*.jsonl"))
    spec = f"replay:{cassette}"
    run = run_suite(eval_suite(), _config(tmp_path, strategy="agent", limit=1, model=spec))
    assert run.metrics["errors"] == 0 and run.metrics["verdict_accuracy"] == 1.0
    assert run.model == spec and run.config["strategy_model"] == spec
    # the cassette folder replayed: the run names what it replayed
    folder = f"replay:{cassette.parent}"
    again = run_suite(eval_suite(), _config(tmp_path, strategy="agent", limit=1, model=folder))
    assert again.metrics["errors"] == 0 and again.config["strategy_model"] == folder
