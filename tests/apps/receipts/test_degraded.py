"""A failing source is an 'unavailable' answer; the agent decides from the others."""

from __future__ import annotations

import json

import pytest
from langchain.tools import ToolRuntime

from casework.apps.receipts import evidence
from casework.apps.receipts.agent import build_agent, decision_from_run, render_task
from casework.apps.receipts.baseline import baseline_decide
from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.places import PlacesUnavailable
from casework.apps.receipts.tools import build_tools
from casework.errors import SourceUnavailable
from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime.runconfig import RunConfig


class BrokenCollection:
    """A vector store whose every call fails (a corrupt index, a missing embedding model)."""

    def get(self, *a, **kw):
        raise RuntimeError("embedding function failed to load")

    query = upsert = update = get


class NoPlaces:
    name = "google"

    def lookup(self, receipt):
        raise PlacesUnavailable("quota exceeded")


def _with(deps: ReceiptsDeps, **changes) -> ReceiptsDeps:
    fields = {
        f: getattr(deps, f)
        for f in ("repo", "vectors", "places", "settings", "cache", "vectors_error", "extra")
    }
    return ReceiptsDeps(**{**fields, **changes})


def test_no_vector_store_is_unavailable_not_an_error(seeded, ref):
    deps = seeded.without_vectors("the chroma directory is missing")
    with pytest.raises(SourceUnavailable) as err:
        evidence.similar_words_summary(deps, ref("costco", 42, 3, "GRAND_TOTAL"))
    assert (err.value.source, err.value.reason) == (
        "similar words",
        "the chroma directory is missing",
    )


def test_broken_embeddings_are_unavailable(seeded, ref):
    with pytest.raises(SourceUnavailable) as err:
        evidence.similar_words_summary(
            _with(seeded, vectors=BrokenCollection()), ref("costco", 42, 3, "GRAND_TOTAL")
        )
    assert err.value.source == "similar words" and "embedding function failed" in err.value.reason


def test_missing_or_failing_place_is_unavailable(seeded, ref):
    r = ref("costco", 1, 1, "MERCHANT_NAME")
    with pytest.raises(SourceUnavailable) as err:
        evidence.merchant_metadata(_with(seeded, places=NoPlaces()), r)
    assert (err.value.source, err.value.reason) == ("merchant metadata", "quota exceeded")

    class Nothing:
        name = "local"

        def lookup(self, receipt):
            return None

    with pytest.raises(SourceUnavailable, match="no place is known"):
        evidence.merchant_metadata(_with(seeded, places=Nothing()), r)


def test_tools_raise_source_unavailable_for_the_runtime(seeded, ref):
    """The tools report a failed store by raising; the runtime makes it an observation."""

    class ExplodingRepo:
        def __getattr__(self, name):
            raise RuntimeError("database went away")

    deps = _with(seeded, repo=ExplodingRepo(), vectors=BrokenCollection())
    tools = {t.name: t for t in build_tools(deps)}
    r = ref("costco", 42, 3, "GRAND_TOTAL")
    runtime = ToolRuntime(
        state={}, context=r, config={}, stream_writer=lambda _: None, tool_call_id="t1", store=None
    )
    with pytest.raises(SourceUnavailable) as err:
        tools["get_word_context"].func(runtime=runtime)
    assert err.value.source == "word context"
    assert err.value.reason == "RuntimeError: database went away"
    ok = _with(seeded, places=NoPlaces())
    with pytest.raises(SourceUnavailable, match="quota exceeded"):
        {t.name: t for t in build_tools(ok)}["get_merchant_metadata"].func(runtime=runtime)
    context = json.loads(
        {t.name: t for t in build_tools(ok)}["get_word_context"].func(runtime=runtime)
    )
    assert context["word"] == "303.83"


def test_agent_decides_from_the_other_sources(seeded, ref):
    deps = _with(seeded, vectors=BrokenCollection(), places=NoPlaces())
    r = ref("wildfork", 12, 4, "UNIT_PRICE")
    model = ScriptedChatModel(
        steps=[
            call("search_similar_words"),
            call("get_merchant_metadata"),
            call("get_word_context"),
            call(
                "submit_decision",
                verdict="INVALID",
                confidence=92,
                reasoning="The line makes it the line total.",
            ),
        ]
    )
    run = build_agent(deps, RunConfig(models=RoleModels.given(model))).run(
        render_task(r), context=r, trace=False
    )
    result = decision_from_run(run, model="scripted")
    assert run.ended_by == "submit" and all(c.ok for c in run.tool_calls)
    outputs = {c.name: json.loads(c.output) for c in run.tool_calls[:3]}
    assert outputs["search_similar_words"]["status"] == "unavailable"
    assert outputs["get_merchant_metadata"]["status"] == "unavailable"
    assert outputs["get_word_context"]["word"] == "14.00"
    assert (result.verdict, result.confidence) == ("INVALID", 92)
    assert result.unavailable == ["get_merchant_metadata", "search_similar_words"]


def test_baseline_fails_where_the_agent_does_not(seeded, ref):
    """The spec's complaint about the old validator: a vector failure fails the validation."""
    result = baseline_decide(seeded.without_vectors("down"), ref("costco", 42, 3, "GRAND_TOTAL"))
    assert (result.verdict, result.confidence) == ("NEEDS_REVIEW", 0.0)
    assert [(c.name, c.ok) for c in result.run.tool_calls] == [
        ("check_edge_cases", True),
        ("search_similar_words", False),
    ]
    assert result.unavailable == ["search_similar_words"]


def test_an_unexpected_tool_failure_is_reported_not_raised(seeded, ref):
    class ExplodingRepo:
        def __getattr__(self, name):
            raise RuntimeError("database went away")

    deps = _with(seeded, repo=ExplodingRepo())
    r = ref("costco", 42, 3, "GRAND_TOTAL")
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("submit_decision", verdict="NEEDS_REVIEW", confidence=20, reasoning="no context"),
        ]
    )
    run = build_agent(deps, RunConfig(models=RoleModels.given(model))).run(
        render_task(r), context=r, trace=False
    )
    assert "database went away" in run.tool_calls[0].output
    assert run.decision.verdict == "NEEDS_REVIEW"
