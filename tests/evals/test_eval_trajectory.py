"""Trajectory and tool-choice evaluators on hand-built trajectories with known answers."""

from __future__ import annotations

import pytest

from casework.evals.evaluators.trajectory import (
    Call,
    as_calls,
    circular_calls,
    classify_trajectory,
    edit_distance,
    evaluate_trajectory,
    match_trajectory,
    redundant_calls,
    self_corrections,
    tool_choice,
    tool_path,
)
from casework.runtime.react import ToolCallRecord


def c(name: str, ok: bool = True, output: str | None = None, **args: object) -> Call:
    return Call(name, args, ok, output if output is not None else f"{name}{sorted(args.items())}")


@pytest.mark.parametrize(
    ("actual", "reference", "expected"),
    [
        # strict, unordered, subset, superset
        (["a", "b"], ["a", "b"], (True, True, True, True)),
        (["b", "a"], ["a", "b"], (False, True, True, True)),
        (["a", "b", "c"], ["a", "b"], (False, False, False, True)),  # superset: an extra call
        (["a"], ["a", "b"], (False, False, True, False)),  # subset: a call missing
        (["a", "a", "b"], ["a", "b"], (False, False, False, True)),  # a repeat is an extra
        (["a", "c"], ["a", "b"], (False, False, False, False)),
        ([], [], (True, True, True, True)),
        ([], ["a"], (False, False, True, False)),
    ],
)
def test_match_modes(actual: list[str], reference: list[str], expected: tuple[bool, ...]) -> None:
    got = tuple(
        match_trajectory(actual, reference, m)
        for m in ("strict", "unordered", "subset", "superset")
    )
    assert got == expected


def test_unknown_mode() -> None:
    with pytest.raises(ValueError, match="unknown match mode"):
        match_trajectory([], [], "fuzzy")  # type: ignore[arg-type]


def test_edit_distance() -> None:
    assert edit_distance(["a", "b", "c"], ["a", "c"]) == 1
    assert edit_distance(["x", "y"], ["a", "b", "c"]) == 3
    assert edit_distance([], []) == 0


def test_circular_trajectory_repeats_without_progress() -> None:
    # A(x) B(y) A(x) B(y): the second A follows B's new output, so it is only redundant;
    # the second B follows a repeated A that told nothing new, so it is circular.
    calls = [c("A", x=1), c("B", y=1), c("A", x=1), c("B", y=1)]
    assert redundant_calls(calls) == [2, 3]
    assert circular_calls(calls) == [3]
    scores = evaluate_trajectory(calls, ["A", "B"])
    assert scores.is_circular and scores.type == "circular"


def test_immediate_repeat_is_circular_and_redundant() -> None:
    calls = [c("lookup", word="apple"), c("lookup", word="apple")]
    assert circular_calls(calls) == [1]
    assert redundant_calls(calls) == [1]


def test_repeat_with_new_information_in_between_is_not_circular() -> None:
    calls = [c("A", x=1), c("B", output="fresh fact"), c("A", x=1)]
    assert circular_calls(calls) == []
    assert redundant_calls(calls) == [2]


def test_self_correction_error_then_successful_retry() -> None:
    calls = [
        c("lookup", ok=False, output="Error: not found", word="salmonx"),
        c("lookup", word="salmon"),
    ]
    assert self_corrections(calls) == (1, 1)
    assert circular_calls(calls) == []
    scores = evaluate_trajectory(calls, ["lookup"])
    assert scores.type == "recovery" and scores.errors == 1 and scores.corrected == 1


def test_retry_of_the_same_failing_call_is_a_repeated_error() -> None:
    same = [
        c("lookup", ok=False, output="Error: timeout", w=1),
        c("lookup", ok=False, output="Error: timeout", w=1),
    ]
    assert self_corrections(same) == (2, 0)
    assert circular_calls(same) == [1]
    assert redundant_calls(same) == []  # nothing was answered yet
    retried = [c("lookup", ok=False, output="Error: timeout", w=1), c("lookup", w=1)]
    assert circular_calls(retried) == []  # a productive retry
    assert self_corrections(retried) == (1, 1)


def test_superset_path_is_exploratory_with_path_ratio() -> None:
    calls = [
        c("get_shifts"),
        c("get_vanpool"),
        c("search_similar"),
        c("submit_decision", verdict="VALID"),
    ]
    scores = evaluate_trajectory(calls, ["get_vanpool", "get_shifts"])
    assert scores.path == ["get_shifts", "get_vanpool", "search_similar"]
    assert scores.matches == {
        "strict": False,
        "unordered": False,
        "subset": False,
        "superset": True,
    }
    assert scores.type == "exploratory" and scores.optimal is False
    assert scores.optimal_length == 2 and scores.path_length == 3
    assert scores.path_ratio == pytest.approx(1.5)
    assert scores.path_efficiency == pytest.approx(2 / 3)
    assert scores.edit_distance == 2


def test_optimal_incomplete_dead_end_unscored_and_submit_in_reference() -> None:
    optimal = evaluate_trajectory([c("b"), c("a"), c("submit_decision")], ["a", "b"])
    assert optimal.type == "optimal" and optimal.optimal and optimal.path_efficiency == 1.0
    incomplete = evaluate_trajectory([c("a")], ["a", "b"])
    assert incomplete.type == "incomplete" and incomplete.path_efficiency == 1.0
    dead = evaluate_trajectory(
        [c("a"), c("a", output="other")], ["a"], ended_by="limit:model_calls"
    )
    assert dead.type == "dead_end"
    unscored = evaluate_trajectory([c("a")])
    assert unscored.type == "unscored" and unscored.matches == {} and unscored.path_ratio is None
    with_submit = evaluate_trajectory([c("a"), c("submit_decision")], ["a", "submit_decision"])
    assert with_submit.path == ["a", "submit_decision"] and with_submit.matches["strict"]
    assert (
        classify_trajectory(ended_by="interrupted", circular=False, corrected=0, matches={})
        == "interrupted"
    )


def test_accepts_tool_call_records_and_dicts() -> None:
    records = [
        ToolCallRecord("a", {"x": 1}, "id1", ok=False, output="Error"),
        {"name": "a", "args": {"x": 2}},
    ]
    calls = as_calls(records)
    assert calls[0] == Call("a", {"x": 1}, False, "Error") and calls[1].ok
    assert tool_path([*records, "submit_decision"]) == ["a", "a"]
    assert tool_path(["submit_decision"], keep_submit=True) == ["submit_decision"]


def test_tool_choice_missing_unnecessary_and_parameters() -> None:
    calls = [
        c("get_employee", output="employee E-101 rides vanpool VP-7", employee_id="E-101"),
        c(
            "get_vanpool", output="VP-7: 6 riders", vanpool_id="VP-7"
        ),  # grounded by the earlier output
        c("get_shift", output="none", employee_id="E-999"),  # invented id
        c("search_web", query="vanpool rules 2024"),  # free text is not an identifier
        c("submit_decision", verdict="VALID"),
    ]
    result = tool_choice(
        calls,
        ["get_employee", "get_vanpool", "get_shift_schedule"],
        expected_args={
            "get_employee": {"employee_id": "E-101"},
            "get_vanpool": {"vanpool_id": "VP-8"},
        },
        inputs={"employee_ids": ["E-101"]},
    )
    assert result.missing == ["get_shift_schedule"]
    assert result.unnecessary == ["get_shift", "search_web"]
    assert not result.correct
    assert result.precision == pytest.approx(2 / 4) and result.recall == pytest.approx(2 / 3)
    assert (
        result.params_checked == 2 and result.params_correct == 1 and result.param_accuracy == 0.5
    )
    assert result.params_total == 4
    flagged = {(h["tool"], h["arg"]) for h in result.hallucinated}
    assert flagged == {("get_vanpool", "vanpool_id"), ("get_shift", "employee_id")}


def test_list_arguments_of_ids_match_in_any_order() -> None:
    want = {"check": {"employee_ids": ["E-2", "E-1"], "rows": [[1, 2]]}}
    same = tool_choice(
        [c("check", employee_ids=["E-1", "E-2"], rows=[[1, 2]])], ["check"], expected_args=want
    )
    assert (same.params_checked, same.params_correct) == (2, 2)
    # a missing or extra id is wrong; nested lists keep their order
    wrong = tool_choice(
        [c("check", employee_ids=["E-1"], rows=[[2, 1]])], ["check"], expected_args=want
    )
    assert (wrong.params_checked, wrong.params_correct) == (2, 0)


def test_tool_choice_all_right_and_no_reference_tools() -> None:
    right = tool_choice([c("a"), c("b"), c("a")], ["b", "a"])
    assert (
        right.correct
        and right.precision == 1.0
        and right.recall == 1.0
        and right.hallucinated == []
    )
    nothing = tool_choice([], [])
    assert nothing.correct and nothing.precision == 1.0 and nothing.recall == 1.0
    extra = tool_choice([c("a")], [])
    assert not extra.correct and extra.precision == 0.0
