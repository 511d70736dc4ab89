"""Vanpool, the proof of learning from review: the memory layer goes first in the outreach
cascade, the bucket choice sees verified replies as demonstrations, a sent escalation draft
verifies its reply, and deleting an example restores the answer it changed. Scripted models;
the examples are embedded with the bundled MiniLM."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from vanpool_helpers import Clock, Sink, first

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.reply_cues import reply_cue
from casework.apps.vanpool.review import VanpoolReview
from casework.apps.vanpool.strategies import OUTREACH_STRATEGIES, ReplyInput, reply_memory
from casework.examples import learn_from_review, memory_for
from casework.llm import RoleModels
from casework.llm.choice import ScriptedChooser
from casework.llm.local import LocalChatModel
from casework.llm.roles import LOCAL_ROLE
from casework.runtime import RunConfig
from casework.runtime.context import Caller, Role
from casework.runtime.memory import ExampleDraft
from casework.runtime.memory_layer import examples_used
from casework.runtime.review_provider import ReviewFilters

ANA = Caller(1, "ana", Role.REVIEWER)
REPLY = "We relocated to the Fremont campus last month."


def _chooser(winner: str, p: float) -> ScriptedChooser:
    rest = (1 - p) / 3
    return ScriptedChooser(
        {
            b: math.log(p if b == winner else rest)
            for b in ("acknowledgment", "question", "update", "escalation")
        }
    )


def _config(chooser: ScriptedChooser) -> RunConfig:
    def models(role: str):
        if role == "classifier":  # the bundled model: no remote layer (never asked here)
            return LocalChatModel(model_path=Path("/nonexistent.gguf"))
        assert role == LOCAL_ROLE, f"role {role!r} was not expected"
        return chooser

    return RunConfig(models=RoleModels.given(models))


def _verify(deps, text: str, bucket: str) -> int:
    memory = reply_memory(deps, _config(ScriptedChooser()))
    return memory.add(text, {"reply": text}, {"bucket": bucket}, verified_by="ana", source="api").id


def test_a_verified_reply_is_answered_from_memory_and_deleting_it_restores_the_model(
    deps,
) -> None:
    cascade = OUTREACH_STRATEGIES["cascade"]
    before = cascade(ReplyInput(REPLY), deps, _config(_chooser("update", 0.8)))
    assert (before.bucket, before.run.decided_by) == ("update", "choice")
    # An empty memory answers "undecided" at once (no embedding), and the case goes on.
    assert [(o.layer, o.confidence) for o in before.run.layers] == [
        ("memory", 0.0),
        ("memory-vote", 0.0),
        ("rules", 40.0),
        ("choice", 80.0),
    ]

    example = _verify(deps, REPLY, "question")  # a reviewer's answer differs from the model's
    chooser = _chooser("update", 0.8)
    learned = cascade(ReplyInput(REPLY), deps, _config(chooser))
    assert (learned.bucket, learned.confidence) == ("question", 100.0)
    assert learned.run.decided_by == "memory" and [o.layer for o in learned.run.layers] == [
        "memory"
    ]
    assert learned.run.usage.model_calls == 0 and chooser.calls == []
    assert examples_used(learned) == [example]

    reply_memory(deps, _config(chooser)).delete(example)
    restored = cascade(ReplyInput(REPLY), deps, _config(_chooser("update", 0.8)))
    assert (restored.bucket, restored.run.decided_by) == ("update", "choice")
    assert examples_used(restored) == []


def test_a_reply_far_from_every_example_goes_on_to_the_next_layers(deps) -> None:
    _verify(deps, "Which shift schedule did you compare mine against?", "question")
    result = OUTREACH_STRATEGIES["cascade"](
        ReplyInput("Thanks, all good here."), deps, _config(_chooser("update", 0.8))
    )
    assert result.bucket == "acknowledgment" and result.run.decided_by == "rules"
    memory = next(o for o in result.run.layers if o.layer == "memory")
    assert memory.verdict == "NEEDS_REVIEW" and not memory.kept


def test_the_bucket_choice_sees_the_nearest_verified_replies_before_the_reply(deps) -> None:
    near = _verify(deps, "I moved to a new apartment in Oakland.", "update")
    far = _verify(deps, "Is there a deadline for answering this review?", "question")
    chooser = _chooser("update", 0.7)
    result = OUTREACH_STRATEGIES["choice"](
        ReplyInput("We moved house to Oakland in May."), deps, _config(chooser)
    )
    messages = chooser.calls[0][0]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
    ]
    # least similar first, so the nearest example sits right before the reply
    assert isinstance(messages[3], HumanMessage) and "new apartment in Oakland" in str(
        messages[3].content
    )
    assert isinstance(messages[4], AIMessage) and messages[4].content == "update"
    assert "We moved house to Oakland" in str(messages[5].content)
    assert examples_used(result) == [near, far]


def test_a_sent_escalation_draft_verifies_its_reply_as_an_example(
    deps, truth, sink: Sink, clock: Clock
) -> None:
    vp = first(truth, "location_mismatch")["vanpool_id"]
    case_id = lifecycle.audit_vanpool(deps, vp)[0].case_id
    text = "the van thing, not sure, maybe"
    deps.repo.add_message(
        deps.repo.get_case(case_id).thread_id,
        direction="inbound",
        status="received",
        sender="rider@example.com",
        recipients=[],
        subject="Re",
        body=text,
        now=clock(),
    )
    lifecycle.draft_for_review(deps, case_id, "We will look into it.", "outreach")
    review = VanpoolReview(deps.settings, deps=deps)
    [item] = review.items(ReviewFilters(), limit=10)
    outcome = review.decide(item.id, "approve", note="", edit=None, caller=ANA)
    assert outcome.applied and outcome.example == ExampleDraft(
        {"reply": text}, {"bucket": "escalation"}
    )
    stored = learn_from_review(deps.settings, "vanpool", outcome, ANA)
    assert stored is not None and (stored.verified_by, stored.source) == ("ana", "review")
    memory = memory_for(deps.settings, "vanpool", ANA)
    assert [e.answer for e, _ in memory.nearest(text, 1)] == [{"bucket": "escalation"}]
    again = review.decide(item.id, "approve", note="", edit=None, caller=ANA)
    assert not again.applied and learn_from_review(deps.settings, "vanpool", again, ANA) is None


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_chooses_a_bucket_with_verified_replies_in_its_prompt(deps) -> None:
    pytest.importorskip("xllamacpp")
    from casework.llm.local import load_local_model

    shown = [
        _verify(deps, "I moved to a new apartment in Oakland.", "update"),
        _verify(deps, "Is there a deadline for answering this review?", "question"),
    ]
    model = load_local_model()
    config = RunConfig(models=RoleModels.given(lambda role: model))
    result = OUTREACH_STRATEGIES["choice"](
        ReplyInput("We moved house to Oakland in May."), deps, config
    )
    assert result.bucket == "update" and examples_used(result) == shown
    assert result.run is not None and result.run.usage.model_calls == 1


def test_the_choice_is_less_sure_of_a_reply_unlike_every_verified_one(deps) -> None:
    reply = ReplyInput("We moved house to Oakland in May.")
    alone = OUTREACH_STRATEGIES["choice"](reply, deps, _config(_chooser("update", 0.8)))
    assert alone.confidence == 80.0  # no verified reply yet: as before

    _verify(deps, "Is there a deadline for answering this review?", "question")
    far = OUTREACH_STRATEGIES["choice"](reply, deps, _config(_chooser("update", 0.8)))
    nearest = far.evidence[0].fields["similarity"]
    assert nearest < 0.25 and far.confidence == 40.0  # the floor: half of 80
    assert f"80 -> 40, the nearest verified reply at similarity {nearest:.2f}" in far.reasoning

    _verify(deps, "We bought a new place last month.", "update")
    between = OUTREACH_STRATEGIES["choice"](reply, deps, _config(_chooser("update", 0.8)))
    similarity = between.evidence[0].fields["similarity"]
    assert similarity == pytest.approx(0.49, abs=0.01)
    expected = 80 * (0.5 + 0.5 * (similarity - 0.25) / 0.5)  # linear between far and near
    assert between.confidence == pytest.approx(expected, abs=0.01)

    _verify(deps, "I moved to a new apartment in Oakland.", "update")
    near = OUTREACH_STRATEGIES["choice"](reply, deps, _config(_chooser("update", 0.8)))
    assert near.evidence[0].fields["similarity"] > 0.75 and near.confidence == 80.0


# Replies without a cue word (no "?", no question opening, no "yes"/"thanks"...), three kinds.
AGREED = [
    "Sounds good to me.",
    "Sounds great, go ahead.",
    "That sounds good.",
    "Sounds perfect.",
    "Great, that works for me.",
    "That works for me.",
    "Perfect, that works.",
    "Works for me.",
]
CHANGED = [
    "No, make it for the 5th instead.",
    "No, make it for the 12th of March.",
    "No, please make it for 3 people.",
    "No, make it for 4 people instead.",
    "No, make it at 6 pm.",
    "No, make it at 10 in the morning.",
    "No, make it next Friday.",
    "No, book it for Saturday instead.",
]
ASKED = [
    "I'd like to know the pickup time.",
    "I'd like to know the address of the pickup point.",
    "Tell me the pickup time please.",
    "Tell me the address of the lot please.",
    "I would like to know the driver's phone number.",
    "I'd like the phone number of the driver.",
    "Please tell me the departure time.",
    "I want to know the departure address.",
]


def test_many_agreeing_verified_replies_answer_without_the_model(deps) -> None:
    ids = {
        text: _verify(deps, text, bucket)
        for bucket, texts in (("acknowledgment", AGREED), ("update", CHANGED), ("question", ASKED))
        for text in texts
    }
    reply = "Sounds good, that works."
    assert reply_cue(reply) is None and reply not in ids
    chooser = _chooser("update", 0.9)
    result = OUTREACH_STRATEGIES["cascade"](ReplyInput(reply), deps, _config(chooser))
    assert result.bucket == "acknowledgment" and result.run is not None
    assert result.run.decided_by == "memory-vote" and result.confidence == 100.0
    assert chooser.calls == [] and result.run.usage.model_calls == 0
    used = examples_used(result)
    assert len(used) == 7 and set(used) <= {ids[t] for t in AGREED}  # the seven that voted
    assert "on the caller's 24 examples (leave-one-out)" in result.reasoning
    # An escalation cue goes to the cue words and a person, whatever the examples say.
    cued = OUTREACH_STRATEGIES["cascade"](
        ReplyInput("Sounds good, whatever."), deps, _config(chooser)
    )
    vote = next(o for o in cued.run.layers if o.layer == "memory-vote")
    assert (vote.verdict, vote.confidence) == ("none", 0.0)
    assert "An escalation cue word: left to a person." in vote.output["reasoning"]
    assert (cued.bucket, cued.run.decided_by) == ("escalation", "rules")

    # Fewer than 20 verified replies: the vote is never sure, and the model decides again.
    memory = reply_memory(deps, _config(chooser))
    for text in AGREED[:5]:
        memory.delete(ids[text])
    again = OUTREACH_STRATEGIES["cascade"](ReplyInput(reply), deps, _config(chooser))
    assert again.run is not None and again.run.decided_by == "choice"
    assert len(chooser.calls) == 1
