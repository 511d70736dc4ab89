"""Choosing among options: probabilities from the model's scores, its bias divided out."""

from __future__ import annotations

import math

import pytest
from langchain_core.messages import HumanMessage

from casework.errors import ModelError
from casework.llm.choice import ScriptedChooser, choose, option_bias
from casework.llm.scripted import ScriptedChatModel, call

ASK = [HumanMessage("Which label fits FEBREZE?")]


def test_probabilities_are_the_normalised_scores() -> None:
    model = ScriptedChooser(
        {"PRODUCT": math.log(0.6), "MERCHANT": math.log(0.3), "OTHER": math.log(0.1)}
    )
    choice = choose(model, ASK, ["PRODUCT", "MERCHANT", "OTHER"])
    assert choice.option == "PRODUCT" and choice.scored
    assert choice.probabilities["MERCHANT"] == pytest.approx(0.3)
    assert choice.confidence == 60.0 and choice.margin() == pytest.approx(0.3)
    assert choice.usage.model_calls == 1 and choice.usage.input_tokens == 10


def test_the_bias_of_a_content_free_input_is_divided_out() -> None:
    # The model says PRODUCT to anything (0.8 on "N/A"); here it says PRODUCT 0.6, MERCHANT 0.4.
    model = ScriptedChooser(
        {"PRODUCT": math.log(0.8), "MERCHANT": math.log(0.2)},
        {"PRODUCT": math.log(0.6), "MERCHANT": math.log(0.4)},
    )
    bias = option_bias(model, [HumanMessage("N/A")], ["PRODUCT", "MERCHANT"])
    assert bias == pytest.approx({"PRODUCT": 0.8, "MERCHANT": 0.2})
    choice = choose(model, ASK, ["PRODUCT", "MERCHANT"], bias=bias)
    # 0.6/0.8 = 0.75 against 0.4/0.2 = 2.0 -> MERCHANT at 2.0 / 2.75
    assert choice.option == "MERCHANT"
    assert choice.probabilities["MERCHANT"] == pytest.approx(2.0 / 2.75)
    assert choice.raw["PRODUCT"] == pytest.approx(0.6)


def test_a_model_that_cannot_score_answers_by_a_forced_call() -> None:
    model = ScriptedChatModel(steps=[call("choose", option="OTHER")])
    choice = choose(model, ASK, ["PRODUCT", "OTHER"])
    assert (choice.option, choice.scored, choice.confidence) == ("OTHER", False, 100.0)
    assert option_bias(model, ASK, ["PRODUCT", "OTHER"]) is None


def test_an_answer_outside_the_options_is_an_error() -> None:
    model = ScriptedChatModel(steps=[call("choose", option="SOMETHING")])
    with pytest.raises(ModelError, match="not one of the options"):
        choose(model, ASK, ["PRODUCT", "OTHER"])
