"""Pairwise comparison of two runs' answers by a judge, in both orders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from vanpool_helpers import specialist_responder

from casework.apps.vanpool.evalsuite import eval_suite
from casework.apps.vanpool.pairwise import PREFERENCE_TOOL, Pair, compare_answers, pairs_of
from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.evals import EvalConfig, run_suite
from casework.llm import ScriptedChatModel, call


def _answers(messages: list[BaseMessage]) -> tuple[dict[str, Any], dict[str, Any]]:
    body = str(messages[-1].content)
    first = body.split("## First answer\n")[1].split("\n\n## Second answer\n")[0]
    second = body.split("## Second answer\n")[1]
    return json.loads(first), json.loads(second)


def more_evidence(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """A judge that prefers the answer citing more evidence."""
    first, second = (len(a.get("evidence", [])) for a in _answers(messages))
    better = "first" if first > second else "second" if second > first else "tie"
    return call(PREFERENCE_TOOL, better=better, rationale="More citations.")


def always_first(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    return call(PREFERENCE_TOOL, better="first", rationale="Position.")


def _runs(home: Path) -> tuple[Any, Any]:
    settings = Settings(home=home, allow_network_models=False)
    config = {"settings": settings, "progress": False, "report": False, "limit": 3}
    rules = run_suite(eval_suite(), EvalConfig(strategy="rules", **config))
    agent = run_suite(
        eval_suite(),
        EvalConfig(
            strategy="agent",
            base_model=lambda case_id, role: ScriptedChatModel(responder=specialist_responder),
            **config,
        ),
    )
    return rules, agent


def test_a_win_needs_both_orders(tmp_path: Path) -> None:
    rules, agent = _runs(tmp_path / "home")
    pairs = pairs_of(rules, agent)
    assert [p.case_id for p in pairs] == [c.case_id for c in rules.cases]
    # The rules cite the majority shift as well as every rider: one item more each time.
    judged = compare_answers(ScriptedChatModel(responder=more_evidence), pairs)
    assert (judged.a_wins, judged.b_wins, judged.ties, judged.b_win_rate) == (3, 0, 0, 0.0)
    assert judged.cases[0]["orders"] == ["first", "second"]
    biased = compare_answers(ScriptedChatModel(responder=always_first), pairs)
    assert (biased.a_wins, biased.b_wins, biased.ties, biased.b_win_rate) == (0, 0, 3, None)


def test_a_judge_that_does_not_answer_is_an_error_not_a_verdict() -> None:
    pair = Pair("c", {}, {"verdict": "pass"}, {"verdict": "pass"}, {"verdict": "fail"})
    silent = ScriptedChatModel(responder=lambda m, t: AIMessage(content="A is better."))
    judged = compare_answers(silent, [pair])
    assert (judged.errors, judged.a_wins + judged.b_wins + judged.ties) == (1, 0)
    assert PREFERENCE_TOOL in judged.cases[0]["error"]
    with pytest.raises(InputError, match="no answered case in common"):
        compare_answers(silent, [])


def _cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    from casework.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_pairwise(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    get_settings.cache_clear()
    monkeypatch.setattr(
        "casework.llm.roles.resolve_model",
        lambda spec, **kw: ScriptedChatModel(responder=more_evidence),
    )
    try:
        rules, agent = _runs(tmp_path / "home")
        code, out, _ = _cli(capsys, "vanpool", "pairwise", rules.run_id, agent.run_id, "-j", "x:j")
        assert code == 0
        assert f"A {rules.run_id} (rules) vs B {agent.run_id} (agent), judge x:j" in out
        assert "A better 3, B better 0, ties 0; B wins 0% of the decided pairs." in out
        assert "shift-valid-01" in out and "first, second" in out
        code, _, err = _cli(capsys, "vanpool", "pairwise", "nope", agent.run_id, "-j", "x:j")
        assert code != 0 and "nope" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    finally:
        get_settings.cache_clear()
