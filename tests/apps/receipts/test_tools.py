"""Every tool against the seeded store, called the way the agent calls them."""

from __future__ import annotations

import json

from casework.apps.receipts import evidence
from casework.apps.receipts.agent import build_agent, render_task
from casework.apps.receipts.tools import TOOL_NAMES, build_tools
from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime.runconfig import RunConfig


def _run_all_tools(deps, ref):
    steps = [call(name) for name in TOOL_NAMES] + [
        call("submit_decision", verdict="VALID", confidence=90, reasoning="ok")
    ]
    model = ScriptedChatModel(steps=steps)
    agent = build_agent(deps, RunConfig(models=RoleModels.given(model)), evidence_budget=10)
    run = agent.run(render_task(ref), context=ref, trace=False)
    model.assert_exhausted()
    return {
        c.name: (json.loads(c.output) if c.name != "submit_decision" else c.output)
        for c in run.tool_calls
    }


def test_tools_take_no_ids_from_the_model(seeded):
    tools = build_tools(seeded)
    assert [t.name for t in tools] == sorted(TOOL_NAMES, key=[t.name for t in tools].index)
    assert set(TOOL_NAMES) == {t.name for t in tools}
    for t in tools:
        params = set(t.tool_call_schema.model_json_schema().get("properties", {}))
        assert params <= {"n_results", "same_merchant"}, (t.name, params)


def test_every_tool_on_a_grand_total(seeded, ref):
    r = ref("costco", 42, 3, "GRAND_TOTAL")  # "303.83" on "** TOTAL 303.83"
    out = _run_all_tools(seeded, r)
    ctx = out["get_word_context"]
    assert ctx["word"] == "303.83" and ctx["line"] == "** TOTAL 303.83"
    assert ctx["amount_role"] == "GRAND_TOTAL" and ctx["supports"] == [
        "GRAND_TOTAL fits: the line makes this amount GRAND_TOTAL"
    ]
    assert ctx["section"] == "totals" and ctx["column"] == "right" and ctx["shape"] == "amount"
    assert ctx["above"] == ["SUBTOTAL 289.00", "TAX 14.83"]

    merchant = out["get_merchant_metadata"]
    assert (
        merchant["status"] == "ok"
        and merchant["name"] == "Costco Wholesale"
        and merchant["phone"] == "(818) 597-3901"
    )

    similar = out["search_similar_words"]
    assert similar["status"] == "ok" and 1 <= len(similar["neighbours"]) <= 6
    assert all(
        {"word", "label", "status", "line", "sim", "merchant"} <= set(n)
        for n in similar["neighbours"]
    )
    assert similar["suggested_label_valid"] >= 3  # other receipts' totals

    history = out["get_all_labels_for_word"]
    assert [(h["label"], h["status"], h["current"]) for h in history["labels"]] == [
        ("GRAND_TOTAL", "VALID", True)
    ]

    receipt = out["get_labels_on_receipt"]
    assert receipt["label_counts"]["PRODUCT_NAME"] > 20
    assert {"word": "303.83", "label": "GRAND_TOTAL", "this_word": True} in receipt["same_line"]
    assert receipt["suggested_label_count"] >= 1

    edge = out["check_edge_cases"]
    assert edge == {
        "word": "303.83",
        "label": "GRAND_TOTAL",
        "matches": [],
        "patterns_checked": 2,
        "known_invalid": False,
    }


def test_context_tools_flag_a_wrong_label(seeded, ref):
    r = ref("wildfork", 12, 4, "UNIT_PRICE")  # the right-hand 14.00 is the line total
    ctx = evidence.word_context(seeded, r)
    assert ctx["amount_role"] == "LINE_TOTAL" and ctx["rightmost_amount"] is True
    assert ctx["conflicts"] == [
        "UNIT_PRICE is wrong: the line makes this amount LINE_TOTAL, not UNIT_PRICE"
    ]
    assert ctx["label_check"] == "UNIT_PRICE looks WRONG here"
    # the decisive facts come first
    assert list(ctx)[:4] == ["label_check", "word", "suggested_label", "conflicts"]


def test_check_edge_cases_matches_known_patterns(seeded, ref):
    r = ref("costco", 42, 2, "GRAND_TOTAL")  # the keyword "TOTAL"
    edge = evidence.check_edge_cases(seeded, r)
    assert edge["known_invalid"] is True
    assert edge["matches"][0]["reason"].startswith("An amount label needs digits")


def test_merchant_metadata_supports_merchant_words(seeded, ref):
    out = evidence.merchant_metadata(seeded, ref("traderjoes", 1, 1, "MERCHANT_NAME"))
    assert out["word_found_in"] == ["name", "website"]  # traderjoes.com contains it too
    assert out["supports"] == ["MERCHANT_NAME fits: the word is part of the merchant's name"]
    wrong = evidence.merchant_metadata(seeded, ref("traderjoes", 1, 1, "ADDRESS_LINE"))
    assert wrong["conflicts"] == [
        "ADDRESS_LINE is wrong: the word is not part of the merchant's address"
    ]


def test_similar_words_filter_by_merchant_and_skip_own_line(seeded, ref):
    r = ref("costco", 11, 4, "LINE_TOTAL")
    out = evidence.similar_words_summary(seeded, r, n=8, same_merchant=True)
    assert out["status"] == "ok" and "merchant" not in out["neighbours"][0]
    found = evidence.neighbours(seeded, r, n=8, same_merchant=True)
    assert {nb.merchant for nb in found} == {"Costco Wholesale"}
    assert all(nb.line_id != 11 or nb.receipt != r.receipt_key for nb in found)
    assert evidence.similar_words_summary(seeded, r, n=50)["neighbours"].__len__() <= 10


def test_blind_runs_hide_the_words_own_labels(seeded, ref):
    open_ = evidence.all_labels_for_word(seeded, ref("costco", 42, 3, "SUBTOTAL"))
    blind = evidence.all_labels_for_word(seeded, ref("costco", 42, 3, "SUBTOTAL", blind=True))
    assert open_["count"] == 1 and blind["count"] == 0
    receipt = evidence.labels_on_receipt(seeded, ref("costco", 42, 3, "SUBTOTAL", blind=True))
    assert all(not item.get("this_word") for item in receipt["same_line"])
