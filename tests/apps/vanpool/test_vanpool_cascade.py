"""Vanpool's cascades: cue words, then the bundled model's bucket choice, then a remote
model; audits decided by the rules. Scripted models; one bundled-model test (slow)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from casework.apps.vanpool.replies import CUE_CONFIDENCE, NO_CUE_CONFIDENCE, rules_reply
from casework.apps.vanpool.strategies import (
    LOCATION_STRATEGIES,
    OUTREACH_STRATEGIES,
    AuditInput,
    ReplyInput,
)
from casework.llm import RoleModels
from casework.llm.choice import ScriptedChooser
from casework.llm.local import LocalChatModel
from casework.llm.roles import LOCAL_ROLE
from casework.llm.scripted import ScriptedChatModel, say
from casework.runtime import RunConfig


def _models(**roles: Any) -> RunConfig:
    """A run config answering only ``roles`` (role -> model)."""

    def models(role: str) -> Any:
        if role not in roles:
            raise AssertionError(f"role {role!r} was not expected")
        return roles[role]

    return RunConfig(models=RoleModels.given(models))


def _local() -> LocalChatModel:
    return LocalChatModel(model_path=Path("/nonexistent.gguf"))


def _buckets(winner: str, p: float) -> dict[str, float]:
    rest = (1 - p) / 3
    return {
        b: math.log(p if b == winner else rest)
        for b in ("acknowledgment", "question", "update", "escalation")
    }


def test_a_cue_word_is_sure_and_no_cue_is_not() -> None:
    moved = rules_reply("I moved to Oakland in March.")
    assert (moved.bucket, moved.confidence) == ("update", CUE_CONFIDENCE)
    unclear = rules_reply("hmm ok maybe, the van thing")
    assert (unclear.bucket, unclear.confidence, unclear.hitl_required) == (
        "escalation",
        NO_CUE_CONFIDENCE,
        True,
    )


def test_a_reply_without_a_cue_goes_to_the_models_choice(deps) -> None:
    chooser = ScriptedChooser(_buckets("update", 0.8))
    d = _models(**{LOCAL_ROLE: chooser, "classifier": _local()})
    result = OUTREACH_STRATEGIES["cascade"](
        ReplyInput("We relocated to the Fremont campus last month."), deps, d
    )
    assert result.bucket == "update" and not result.hitl_required
    assert result.confidence == pytest.approx(80.0)
    assert result.run is not None and result.run.decided_by == "choice"
    # An empty memory first (the near-repeat layer, then the vote), then no remote model.
    assert [o.layer for o in result.run.layers] == ["memory", "memory-vote", "rules", "choice"]
    assert "Reply:\nWe relocated" in str(chooser.calls[0][0][1].content)


def test_a_cue_word_reply_never_reaches_a_model(deps) -> None:
    d = _models(**{LOCAL_ROLE: ScriptedChooser(), "classifier": _local()})
    result = OUTREACH_STRATEGIES["cascade"](ReplyInput("Thanks, all good here."), deps, d)
    assert result.bucket == "acknowledgment" and result.run is not None
    assert result.run.decided_by == "rules" and result.run.usage.model_calls == 0


def test_the_escalation_guard_overrides_the_models_choice(deps) -> None:
    d = _models(**{LOCAL_ROLE: ScriptedChooser(_buckets("acknowledgment", 0.9))})
    result = OUTREACH_STRATEGIES["choice"](
        ReplyInput("This is ridiculous, talk to a manager."), deps, d
    )
    assert (result.bucket, result.hitl_required, result.confidence) == (
        "escalation",
        True,
        CUE_CONFIDENCE,
    )


def test_an_unsure_choice_goes_on_to_a_configured_remote_model(deps) -> None:
    remote = ScriptedChatModel(steps=[say("question")])
    d = _models(**{LOCAL_ROLE: ScriptedChooser(_buckets("update", 0.4)), "classifier": remote})
    result = OUTREACH_STRATEGIES["cascade"](ReplyInput("the van thing, not sure, maybe"), deps, d)
    run = result.run
    assert run is not None and [o.layer for o in run.layers] == [
        "memory",
        "memory-vote",
        "rules",
        "choice",
        "agent",
    ]
    assert run.decided_by == "agent" and result.bucket == "question"
    assert run.usage.model_calls == 2


def test_an_audit_cascade_is_decided_by_the_rules_offline(deps, truth) -> None:
    vp = next(t["vanpool_id"] for t in truth.values() if t["scenario"] == "location_mismatch")
    d = _models(specialist=_local())
    result = LOCATION_STRATEGIES["cascade"](AuditInput(vp), deps, d)
    assert result.verdict == "fail" and result.run is not None
    assert result.run.decided_by == "rules" and [o.layer for o in result.run.layers] == ["rules"]


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_chooses_a_bucket_for_a_reply_without_cue_words(deps) -> None:
    pytest.importorskip("xllamacpp")
    from casework.llm.local import load_local_model

    d = _models(**{LOCAL_ROLE: load_local_model()})
    result = OUTREACH_STRATEGIES["choice"](
        ReplyInput("Could you tell me which address you have for me on file?"), deps, d
    )
    assert result.bucket == "question" and result.run is not None
    assert result.run.usage.model_calls == 1 and 25.0 < result.confidence <= 100.0


def test_the_model_layers_run_under_the_runtimes_harness(deps) -> None:
    """The bucket choice (scored outside LangChain, counted) and the classifier's call
    (counted by the run's callback) each end as a harness run with its trace."""
    from casework.runtime import EndReason
    from casework.runtime.traces import read_trace

    remote = ScriptedChatModel(steps=[say("question")])
    chooser = ScriptedChooser(_buckets("update", 0.8))
    config = replace(
        _models(**{LOCAL_ROLE: chooser, "classifier": remote}), traces=deps.settings.traces_dir
    )
    chose = OUTREACH_STRATEGIES["choice"](ReplyInput("We relocated to Fremont."), deps, config)
    asked = OUTREACH_STRATEGIES["agent"](ReplyInput("the van thing, not sure"), deps, config)
    for result, agent, strategy in (
        (chose, "vanpool_choice", "choice"),
        (asked, "vanpool_classify", "agent"),
    ):
        run = result.run
        assert run is not None and (run.ended_by, run.strategy) == (EndReason.SUBMIT, strategy)
        assert run.usage.model_calls == 1
        records = read_trace(run.trace_path)
        assert [r["type"] for r in records] == ["run_start", "run_end"]
        assert (records[0]["agent"], records[-1]["result"]["bucket"]) == (agent, result.bucket)
    assert (chose.bucket, asked.bucket) == ("update", "question")
    assert chose.run.model == "scripted-chooser"


def _waiting_case(deps, truth) -> str:
    from casework.apps.vanpool import lifecycle

    vp = next(t["vanpool_id"] for t in truth.values() if t["scenario"] == "location_mismatch")
    result, _ = lifecycle.audit_vanpool(deps, vp)
    assert result.verdict == "pending_reply" and result.case_id
    return result.case_id


@pytest.mark.parametrize(
    ("p", "bucket", "actor", "status"),
    [
        (0.8, "question", "reply_choice", "pending_reply"),  # sure: the rider gets an answer
        (0.45, "escalation", "rules_auditor", "hitl_review"),  # unsure: a person reads it
    ],
)
def test_a_cases_reply_goes_through_the_cascade_by_default(
    deps, truth, p: float, bucket: str, actor: str, status: str
) -> None:
    """`vanpool reply` / the API's default strategy: a reply without a cue word is bucketed
    by the bundled model's choice when it is sure, and goes to a person when it is not."""
    from casework.apps.vanpool.service import reply_to_case

    case_id = _waiting_case(deps, truth)
    chooser = ScriptedChooser(_buckets("question", p))
    config = _models(**{LOCAL_ROLE: chooser, "classifier": _local()})
    result = reply_to_case(
        deps, case_id, "I wonder what this review means for my seat.", config=config
    )
    assert len(chooser.calls) == 1  # the rules had no cue word; no remote model is configured
    assert (result.outreach.bucket, deps.repo.get_case(case_id).status) == (bucket, status)
    [classified] = [
        e for e in deps.repo.audit_log(case_id=case_id) if e["action"] == "reply_classified"
    ]
    assert (classified["actor"], classified["detail"]["bucket"]) == (actor, bucket)
