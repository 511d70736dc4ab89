"""The builder of the annotations-by-others sets: which sidecar levels become cases."""

from __future__ import annotations

import json

import pytest

from casework.apps.hed.data import others_sets
from casework.apps.hed.data.others_sets import build, main, sidecar_levels

# Shaped as hed-examples' sidecars are: value columns, levels with HED, a definitions column.
SIDECAR = {
    "onset": {"Description": "Onset of the event.", "Units": "s"},
    "response_time": {"Description": "Seconds to respond.", "HED": "Response-time/# s"},
    "event_type": {
        "Levels": {
            "show_face": "A face image appears.",
            "left_press": "The participant pressed the left button.",
            "setup_right": "Right-hand condition starts.",
            "no_hed": "A level without HED.",
            "blank": "",
        },
        "HED": {
            "show_face": "Sensory-event, Visual-presentation, (Image, Face)",
            "left_press": "Agent-action, (Press, (Left-side-of, Mouse-button))",
            "setup_right": "(Def/Right-condition, Onset)",
            "blank": "Sensory-event",
            "unknown": "Experiment-structure",
        },
    },
    "hed_defs": {
        "Levels": {"def_a": "A definition."},
        "HED": {"def_a": "(Definition/Right-condition, (Condition-variable))"},
    },
    "trial": {"Levels": {"bad": "An invalid trial."}, "HED": {"bad": "(Invalid, Flurb-thing)"}},
}


def test_only_levels_with_a_description_and_context_free_hed_become_cases() -> None:
    cases = sidecar_levels(SIDECAR, "ds/task-x")
    assert [c["id"] for c in cases] == [
        "ds/task-x/event_type/show_face",
        "ds/task-x/event_type/left_press",
        "ds/task-x/hed_defs/def_a",
        "ds/task-x/trial/bad",
    ]
    assert cases[1] == {
        "id": "ds/task-x/event_type/left_press",
        "inputs": {
            "description": "The participant pressed the left button.",
            "schema_version": "8.3.0",
        },
        "expected": {"hed": "Agent-action, (Press, (Left-side-of, Mouse-button))", "valid": True},
        "metadata": {"dataset": "ds/task-x", "column": "event_type", "level": "left_press"},
    }


def test_gold_strings_invalid_under_the_schema_are_left_out(tmp_path, monkeypatch) -> None:
    sidecar = tmp_path / "datasets" / "eeg_x" / "task-X_events.json"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text(json.dumps(SIDECAR))
    monkeypatch.setitem(others_sets.SETS, "test", ("datasets/eeg_x/task-X_events.json",))
    cases = build(tmp_path, "test")
    # the definition stands alone (DEFINITION_INVALID) and Flurb-thing is no schema tag
    assert [c["metadata"]["level"] for c in cases] == ["show_face", "left_press"]
    assert {c["metadata"]["dataset"] for c in cases} == {"eeg_x/task-X"}


def test_a_bare_git_directory_is_refused_in_one_sentence(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path), "-o", str(tmp_path / "out.jsonl")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "give a work tree of hed-standard/hed-examples (a git clone), not a bare git directory."
    )
    assert err.count("\n") == 0
    assert not (tmp_path / "out.jsonl").exists()
