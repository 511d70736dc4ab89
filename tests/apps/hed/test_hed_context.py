"""HED in a dataset's context: definitions, a BIDS sidecar and events file (validated by
hedtools' BIDS validation, issues located), and an events file annotated into a sidecar.

The fixtures in ``data/`` are real-shaped files written for these tests: a go/no-go task's
sidecar with a definitions column, ``Def/``, ``(Def/…, Onset)``/``Offset`` and a ``{column}``
reference; its events file; and a text file of definitions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from casework.apikit import add_error_handler, current_caller
from casework.apps.hed.api import router
from casework.apps.hed.cli import app
from casework.apps.hed.context import load_definitions, validate_files
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.grammar import annotation_grammar
from casework.apps.hed.rules import (
    categorical_levels,
    defined_names,
    drop_repeats_across_columns,
    level_description,
    row_hed_strings,
)
from casework.apps.hed.service import annotate_events, read_definitions, validate_strings
from casework.config import get_settings
from casework.errors import InputError
from casework.llm import RoleModels, ScriptedChatModel, say
from casework.runtime import RunConfig
from casework.runtime.context import Caller, Role

DATA = Path(__file__).parent / "data"
SIDECAR = DATA / "task-GoNoGo_events.json"
EVENTS = DATA / "sub-01_task-GoNoGo_events.tsv"
DEFINITIONS = DATA / "definitions.txt"


def _deps() -> HedDeps:
    return HedDeps(settings=get_settings(), validator="python")


def _config() -> RunConfig:  # a model that must never be asked: the rules strategy runs
    return RunConfig(models=RoleModels.given(ScriptedChatModel(responder=lambda m, t: say("?"))))


# ---------------------------------------------------------------------- definitions
def test_strings_that_use_definitions_validate_when_the_definitions_are_given() -> None:
    defs = read_definitions(DEFINITIONS, "8.3.0")
    assert defs.names == ("Go-cue-image", "Acc/#", "Right-press") and defs.valid
    strings = [
        "Sensory-event, (Def/Go-cue-image, Onset)",
        "(Def/Acc/4.5, Onset)",
        "(Def-expand/Right-press, ((Index-finger, (Right-side-of, Experiment-participant)), "
        "(Press, Mouse-button)))",
        "Def/Stop-cue-image",  # not among the definitions
        "(Def-expand/Acc/4.5, (Acceleration/4.5 m-per-s^2, Blue))",  # not what Acc expands to
    ]
    given = validate_strings(strings, "8.3.0", definitions=defs)
    assert [r.codes for r in given] == [[], [], [], ["DEF_INVALID"], ["DEF_EXPAND_INVALID"]]
    assert given[0].validator == "python" and "without definitions" in given[0].fallback_reason
    alone = validate_strings(strings[:2], "8.3.0", validator="python")
    assert [r.codes for r in alone] == [["DEF_INVALID"], ["DEF_INVALID"]]


def test_a_sidecars_definition_entries_are_definitions_too() -> None:
    defs = load_definitions(SIDECAR, "8.3.0")
    assert defs.names == ("Go-cue-image", "Stop-cue-image", "Right-press", "Go-nogo-block")
    assert defs.valid


def test_an_invalid_definition_is_reported_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "defs.tsv"
    path.write_text(
        "name\tdefinition\n"
        "color\t(Definition/MyColor, (Label/Pie))\n"
        "bad\t(Definition/Bad, (Blech))\n"
        "again\t(Definition/MyColor, (Label/Cake))\n"
    )
    defs = load_definitions(path, "8.3.0")
    assert defs.names == ("MyColor",) and not defs.valid
    assert [(i.code, i.row, i.file) for i in defs.issues] == [
        ("TAG_INVALID", 3, "defs.tsv"),
        ("DEFINITION_INVALID", 4, "defs.tsv"),  # MyColor again, with other contents
    ]


def test_definition_files_that_cannot_serve_are_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_definitions(tmp_path / "none.txt", "8.3.0")
    (tmp_path / "plain.txt").write_text("Sensory-event, Red\n")
    with pytest.raises(InputError, match="holds no definitions"):
        load_definitions(tmp_path / "plain.txt", "8.3.0")
    (tmp_path / "broken.json").write_text('{"event_type": {"HED": ')
    with pytest.raises(InputError, match="is not valid JSON"):
        load_definitions(tmp_path / "broken.json", "8.3.0")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="not an object"):
        load_definitions(tmp_path / "list.json", "8.3.0")


# ---------------------------------------------------------------------- sidecar and events
def test_the_real_shaped_pair_is_valid_and_errors_say_where_they_are(tmp_path: Path) -> None:
    report = validate_files(sidecar=SIDECAR, events=EVENTS, schema="8.3.0")
    assert report.valid and report.definitions == 4 and report.warnings == ()

    sidecar = json.loads(SIDECAR.read_text())
    sidecar["event_type"]["HED"]["stop_cue"] = "Sensory-event, Blech, (Def/Stop-cue-image, Onset)"
    sidecar["event_type"]["HED"]["button_press"] = "Agent-action, Def/Left-press"
    bad = tmp_path / "task-GoNoGo_events.json"
    bad.write_text(json.dumps(sidecar))
    report = validate_files(sidecar=bad, schema="8.3.0")
    assert [(i.code, i.column, i.level) for i in report.errors] == [  # hedtools' order
        ("DEF_INVALID", "event_type", "button_press"),
        ("TAG_INVALID", "event_type", "stop_cue"),
    ]
    assert report.errors[1].where == "task-GoNoGo_events.json column event_type level stop_cue"


def test_an_offset_without_its_onset_is_an_error_at_its_row(tmp_path: Path) -> None:
    lines = EVENTS.read_text().splitlines()
    events = tmp_path / "sub-01_task-GoNoGo_events.tsv"
    events.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # no block_start row
    report = validate_files(sidecar=SIDECAR, events=events, schema="8.3.0")
    assert [(i.code, i.row, i.file) for i in report.errors] == [
        ("TEMPORAL_TAG_ERROR", 7, "sub-01_task-GoNoGo_events.tsv")
    ]


def test_a_column_reference_to_no_column_is_an_error(tmp_path: Path) -> None:
    sidecar = json.loads(SIDECAR.read_text())
    sidecar["event_type"]["HED"]["go_cue"] = "Sensory-event, {stimulus_file}"
    bad = tmp_path / "events.json"
    bad.write_text(json.dumps(sidecar))
    assert validate_files(sidecar=bad, schema="8.3.0").codes == ["SIDECAR_BRACES_INVALID"]


def test_the_extra_definitions_serve_an_events_file_without_a_sidecar(tmp_path: Path) -> None:
    events = tmp_path / "events.tsv"
    events.write_text("onset\tduration\tHED\n1.0\tn/a\t(Def/Acc/2.5, Onset)\n3.0\tn/a\tRed\n")
    alone = validate_files(events=events, schema="8.3.0")
    assert alone.codes == ["DEF_INVALID"]
    defs = load_definitions(DEFINITIONS, "8.3.0")
    assert validate_files(events=events, schema="8.3.0", definitions=defs).valid


def test_unreadable_files_are_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(InputError, match="is empty"):
        validate_files(events=tmp_path / "empty.tsv", schema="8.3.0")
    (tmp_path / "commas.tsv").write_text("onset,duration\n1,2\n")
    with pytest.raises(InputError, match="tab-separated"):
        validate_files(events=tmp_path / "commas.tsv", schema="8.3.0")
    with pytest.raises(InputError, match="Nothing to validate"):
        validate_files(schema="8.3.0")


# ---------------------------------------------------------------------- the CLI
def test_cli_validates_a_pair_with_exit_codes_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["validate", "--sidecar", str(SIDECAR), "--events", str(EVENTS)])
    assert ok.exit_code == 0 and "valid (hedtools, HED 8.3.0)" in ok.output
    lines = EVENTS.read_text().splitlines()
    events = tmp_path / "events.tsv"
    events.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    bad = runner.invoke(
        app, ["validate", "--sidecar", str(SIDECAR), "--events", str(events), "--json"]
    )
    assert bad.exit_code == 1
    data = json.loads(bad.stdout)
    assert data["valid"] is False and data["files"] == ["task-GoNoGo_events.json", "events.tsv"]
    assert [(e["code"], e["row"]) for e in data["errors"]] == [("TEMPORAL_TAG_ERROR", 7)]
    strings = runner.invoke(
        app, ["validate", "(Def/Acc/4.5, Onset)", "--definitions", str(DEFINITIONS), "--json"]
    )
    assert strings.exit_code == 0
    assert json.loads(strings.stdout)["definitions"]["names"] == [
        "Go-cue-image",
        "Acc/#",
        "Right-press",
    ]


def test_cli_usage_errors_are_one_sentence() -> None:
    runner = CliRunner()
    nothing = runner.invoke(app, ["validate"])
    assert isinstance(nothing.exception, InputError) and "--sidecar" in str(nothing.exception)
    both = runner.invoke(app, ["validate", "Red", "--sidecar", str(SIDECAR)])
    assert "not both" in str(both.exception) and "--definitions" in str(both.exception)
    assert InputError.exit_code == 2


# ---------------------------------------------------------------------- annotation rules
def test_categorical_levels_and_what_each_level_means() -> None:
    header = ["onset", "duration", "event_type", "response_time", "value", "stim_file"]
    rows = [
        ["1.0", "n/a", "go_cue", "n/a", "5", "go.png"],
        ["2.0", "n/a", "button_press", "0.6", "256", "n/a"],
        ["3.0", "n/a", "go_cue", "n/a", "5", "go.png"],
    ]
    assert categorical_levels(header, rows) == {"event_type": ["go_cue", "button_press"]}
    sidecar = {"value": {"Levels": {"5": "Go cue shown", "256": "Key press"}}}
    assert categorical_levels(header, rows, sidecar) == {
        "event_type": ["go_cue", "button_press"],
        "value": ["5", "256"],
    }
    assert level_description("event_type", "go_cue") == "go cue"
    assert level_description("value", "5") == "value 5"
    assert level_description("value", "5", sidecar) == "Go cue shown"


def test_a_tag_two_levels_of_one_event_write_stays_with_the_first() -> None:
    header = ["onset", "event_type", "face_type"]
    rows = [
        ["1.0", "show_face", "famous"],
        ["2.0", "press", "n/a"],
        ["2.0", "block_end", "n/a"],  # the same onset: one event with the press
    ]
    hed = {
        "event_type": {
            "show_face": "Sensory-event, Visual-presentation, Face",
            "press": "Agent-action, Press",
            "block_end": "Agent-action, Experiment-control",
        },
        "face_type": {"famous": "Sensory-event, Visual-presentation, Famous, Face"},
    }
    assert drop_repeats_across_columns(header, rows, hed) == {
        "event_type": {
            "show_face": "Sensory-event, Visual-presentation, Face",
            "press": "Agent-action, Press",
            "block_end": "Experiment-control",
        },
        "face_type": {"famous": "Famous"},
    }
    kept = drop_repeats_across_columns(header, rows, hed, frozenset({("face_type", "famous")}))
    assert kept["face_type"]["famous"] == hed["face_type"]["famous"]


def test_the_hed_a_row_carries_besides_its_levels_comes_first() -> None:
    header = ["onset", "event_type", "stim_file", "HED"]
    rows = [["1.0", "show", "face.png", "Sensory-event"], ["2.0", "show", "n/a", "n/a"]]
    sidecar = {"stim_file": {"HED": "(Image, Pathname/#)"}}
    carried = row_hed_strings(header, rows, sidecar)
    assert carried == ["(Image, Pathname/face.png), Sensory-event", ""]
    hed = {"event_type": {"show": "Sensory-event, (Image, Pathname/face.png), Face"}}
    assert drop_repeats_across_columns(header, rows, hed, row_hed=carried) == {
        "event_type": {"show": "Face"}
    }


def test_the_grammar_offers_the_sidecars_definition_names_only() -> None:
    names = defined_names(
        ["(Definition/Go-cue-image, (Green, Circle))", "(Definition/Acc/#, (Acceleration/#))"]
    )
    assert names == ("Go-cue-image", "Acc/#")
    grammar = annotation_grammar("8.3.0", names)
    assert 'defref ::= "Def/Go-cue-image" | "Def/Acc/" number' in grammar
    assert '| defref | "(" defref ", " ("Onset" | "Offset") ")"' in grammar
    assert "defref" not in annotation_grammar("8.3.0")


# ---------------------------------------------------------------------- annotate --events
def test_annotate_events_writes_a_sidecar_that_validates(tmp_path: Path) -> None:
    out = tmp_path / "sub-01_task-GoNoGo_events.json"
    result = annotate_events(EVENTS, _deps(), _config(), strategy="rules", out=out)
    assert result.out == out and result.report.valid
    written = json.loads(out.read_text())
    assert list(written) == ["event_type"]
    assert written["event_type"]["Levels"]["go_cue"] == "go cue"
    assert written["event_type"]["HED"]["button_press"] == "Agent-action, Press"
    assert validate_files(sidecar=out, events=EVENTS, schema="8.3.0").valid


def test_annotate_events_keeps_the_sidecars_hed_and_uses_its_descriptions(tmp_path: Path) -> None:
    sidecar = json.loads(SIDECAR.read_text())
    del sidecar["event_type"]["HED"]["go_cue"]
    given = tmp_path / "given.json"
    given.write_text(json.dumps(sidecar))
    out = tmp_path / "out.json"
    result = annotate_events(EVENTS, _deps(), _config(), sidecar=given, strategy="rules", out=out)
    assert result.out == out
    by_level = {i["level"]: i for i in result.levels}
    assert by_level["stop_cue"]["decided_by"] == "sidecar (kept)"
    assert by_level["go_cue"]["description"].startswith("A green circle appears")
    # Sensory-event and Visual-presentation are its, and Green, Circle, Computer-screen
    assert by_level["go_cue"]["hed"].startswith("Sensory-event, Visual-presentation, Green")
    written = json.loads(out.read_text())
    assert written["hed_definitions"] == sidecar["hed_definitions"]  # kept as given
    assert written["stim_file"] == sidecar["stim_file"]


def test_nothing_is_written_when_the_sidecar_is_not_valid(tmp_path: Path) -> None:
    sidecar = json.loads(SIDECAR.read_text())
    sidecar["event_type"]["HED"]["stop_cue"] = "Sensory-event, Blech"  # the user's own, kept
    given = tmp_path / "given.json"
    given.write_text(json.dumps(sidecar))
    out = tmp_path / "out.json"
    result = annotate_events(EVENTS, _deps(), _config(), sidecar=given, strategy="rules", out=out)
    assert result.out is None and not out.exists() and result.report.codes == ["TAG_INVALID"]
    runner = CliRunner()
    cli = runner.invoke(
        app,
        [
            "annotate",
            "--events",
            str(EVENTS),
            "--sidecar",
            str(given),
            "--strategy",
            "rules",
            "--out",
            str(out),
        ],
    )
    assert cli.exit_code == 1 and "nothing written" in cli.output and not out.exists()


def test_annotate_events_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    runner = CliRunner()
    existing = tmp_path / "sub-01_events.json"
    existing.write_text("{}")
    events = tmp_path / "sub-01_events.tsv"
    events.write_text(EVENTS.read_text())
    clash = runner.invoke(app, ["annotate", "--events", str(events), "--strategy", "rules"])
    assert "exists; pass --out" in str(clash.exception) and existing.read_text() == "{}"
    numbers = tmp_path / "numbers.tsv"
    numbers.write_text("onset\tduration\tvalue\n1.0\tn/a\t5\n2.0\tn/a\t6\n")
    with pytest.raises(InputError, match="no categorical column"):
        annotate_events(numbers, _deps(), _config(), strategy="rules", out=tmp_path / "n.json")
    both = runner.invoke(app, ["annotate", "A beep.", "--events", str(events)])
    assert "not both" in str(both.exception)


# ---------------------------------------------------------------------- the API
def _client() -> TestClient:
    def factory(choice):
        return _deps(), _config()

    api = FastAPI()
    api.state.settings = get_settings()
    api.dependency_overrides[current_caller] = lambda: Caller(1, "ana", Role.USER)
    api.include_router(router(get_settings(), factory), prefix="/hed")
    add_error_handler(api)
    return TestClient(api)


def test_api_validates_an_uploaded_pair() -> None:
    files = {
        "sidecar": (SIDECAR.name, SIDECAR.read_bytes()),
        "events": (EVENTS.name, EVENTS.read_bytes()),
    }
    r = _client().post("/hed/validate/files", files=files, data={"schema_version": "8.3.0"})
    assert r.status_code == 200 and r.json()["valid"] is True
    assert r.json()["files"] == [SIDECAR.name, EVENTS.name]
    none = _client().post("/hed/validate/files", data={"schema_version": "8.3.0"})
    assert none.status_code == 422 and "Nothing to validate" in none.json()["error"]


def test_api_annotates_an_uploaded_events_file() -> None:
    files = {"events": (EVENTS.name, EVENTS.read_bytes())}
    r = _client().post("/hed/annotate/events", files=files, data={"strategy": "rules"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["written"] is True and body["out"] is None and body["validation"]["valid"]
    assert set(body["sidecar"]["event_type"]["HED"]) == {
        "block_start",
        "go_cue",
        "button_press",
        "stop_cue",
        "block_end",
    }
    sidecar = json.loads(SIDECAR.read_text())
    sidecar["event_type"]["HED"]["stop_cue"] = "Sensory-event, Blech"
    files["sidecar"] = ("events.json", json.dumps(sidecar).encode())
    bad = _client().post("/hed/annotate/events", files=files, data={"strategy": "rules"})
    assert bad.status_code == 422 and bad.json()["kind"] == "InputError"
    assert bad.json()["result"]["validation"]["errors"][0]["code"] == "TAG_INVALID"


def test_an_annotation_may_use_the_definitions_in_its_input() -> None:
    from casework.apps.hed.models import HedInput
    from casework.apps.hed.strategies import one_shot

    prompts: list[str] = []

    def responder(messages, tools):
        prompts.append(str(messages[-1].content))
        return say("Sensory-event, (Def/Go-cue-image, Onset)")

    config = RunConfig(models=RoleModels.given(ScriptedChatModel(responder=responder)))
    defs = list(load_definitions(SIDECAR, "8.3.0").strings)
    described = "A green circle appears: the participant should press."
    given = one_shot(HedInput(description=described, definitions=defs), _deps(), config)
    assert given.is_valid and given.annotation == "Sensory-event, (Def/Go-cue-image, Onset)"
    assert "The sidecar defines: Def/Go-cue-image, Def/Stop-cue-image" in prompts[0]
    alone = one_shot(HedInput(description=described), _deps(), config)
    assert not alone.is_valid and alone.validation_errors[0].startswith("DEF_INVALID")
    assert "The sidecar defines" not in prompts[1]
