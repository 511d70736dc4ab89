"""Batch (resumable, nothing lost), storage, the vision agent and the CLI's error sentences."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from casework.apps.hed.batchfile import read_batch
from casework.apps.hed.cli import app
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.repository import HedRepository
from casework.apps.hed.service import run_batch
from casework.apps.hed.vision import check_image, describe_image
from casework.config import get_settings
from casework.errors import ConfigError, InputError
from casework.llm import RoleModels, ScriptedChatModel, call, say
from casework.runtime import RunConfig
from casework.stores.sql import get_engine, migrate

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"


@pytest.fixture
def repo(tmp_path: Path) -> HedRepository:
    engine = get_engine(f"sqlite:///{tmp_path / 'hed.db'}")
    migrate(engine)
    return HedRepository(engine)


def responder(messages, tools):  # annotates every event the same way, judges it faithful
    if tools:
        return call("FaithfulnessVerdict", faithful=True, feedback="")
    return say(GOOD)


def test_batch_resumes_and_loses_nothing(tmp_path: Path, repo: HedRepository) -> None:
    csv_path = tmp_path / "events.csv"
    csv_path.write_text("id,description\na,A red circle.\nb,   \nc,Another red circle.\n")
    model = ScriptedChatModel(responder=responder)
    deps = HedDeps(settings=get_settings(), validator="python", repo=repo)
    config = RunConfig(models=RoleModels.given(model))
    seen: list[str] = []
    report = run_batch(
        csv_path,
        deps,
        config,
        strategy="loop",  # the scripted model annotates; the default cascade's look-up would
        concurrency=2,
        on_row=lambda rid, d: seen.append(rid),
    )
    assert (report.total, report.done, report.failed, report.skipped) == (3, 2, 1, 0)
    assert sorted(seen) == ["a", "b", "c"] and report.verdicts == {"VALID": 2}
    lines = [json.loads(x) for x in report.out.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["a", "b", "c"]  # the file's order, every row
    assert lines[0]["annotation"] == GOOD and lines[0]["run"]["strategy"] == "loop"
    assert lines[1]["error"] == "The event description is empty; describe the event in a sentence."
    calls = model.calls
    again = run_batch(csv_path, deps, config, strategy="loop")
    assert (again.skipped, again.done, again.failed) == (2, 0, 1)
    assert model.calls == calls  # finished rows are not annotated twice
    assert [json.loads(x)["id"] for x in again.out.read_text().splitlines()] == ["a", "b", "c"]
    assert len(repo.recent()) == 2


def test_batch_file_errors_are_one_sentence(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("text\nhello\n")
    with pytest.raises(InputError, match="no 'description' column"):
        read_batch(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("id,description\n1,a\n1,b\n")
    with pytest.raises(InputError, match="repeats row ids"):
        read_batch(dup)
    assert read_batch(_write(tmp_path / "n.csv", "description\nx\ny\n")) == [("1", "x"), ("2", "y")]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (255, 0, 0)).save(buf, format="PNG")
    return buf.getvalue()


def test_vision_agent_sends_the_image_and_returns_a_description() -> None:
    got: list = []

    def look(messages):
        got.append(messages[0].content)
        return say("A red square fills the screen.")

    model = ScriptedChatModel(steps=[look])
    config = RunConfig(models=RoleModels.given(model))
    assert describe_image(_png(), config) == "A red square fills the screen."
    parts = got[0]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert "behavioural experiment" in parts[0]["text"]


def test_not_an_image_and_no_vision_model_are_one_sentence() -> None:
    with pytest.raises(InputError, match="is not an image"):
        check_image(b"%PDF-1.4 not an image", "scan.pdf")
    assert check_image(_png()) == "image/png"
    models = RoleModels(get_settings(), override="local:qwen2.5-coder-1.5b")
    with pytest.raises(ConfigError, match="No vision model is configured; pass --vision-model"):
        models("vision")
    assert RoleModels(get_settings(), vision="ollama:llava").spec("vision") == "ollama:llava"


def test_cli_user_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(app, ["annotate", "  "])
    assert isinstance(empty.exception, InputError) and "empty" in str(empty.exception)
    schema = runner.invoke(app, ["annotate", "A beep.", "--schema", "7.0.0"])
    assert "Unknown HED schema version" in str(schema.exception)
    strategy = runner.invoke(app, ["annotate", "A beep.", "--strategy", "magic"])
    assert "Unknown strategy 'magic'" in str(strategy.exception)
    img = runner.invoke(app, ["annotate", "--image", str(tmp_path / "none.png")])
    assert "does not exist" in str(img.exception)
    missing = runner.invoke(app, ["batch", str(tmp_path / "none.csv")])
    assert "does not exist" in str(missing.exception)


def test_cli_history_lists_stored_runs(settings, repo: HedRepository) -> None:
    runner = CliRunner()
    empty = runner.invoke(app, ["history"])
    assert empty.exit_code == 0 and "No annotation runs stored yet" in empty.output
    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.models import HedInput
    from casework.apps.hed.service import annotate

    model = ScriptedChatModel(responder=responder)
    deps = build_deps(settings, validator="python")
    config = RunConfig(models=RoleModels.given(model))
    annotate(HedInput(description="A red circle."), deps, config, strategy="loop")
    annotate(HedInput(description="A red circle."), deps, config)  # the default: the cascade
    rows = json.loads(runner.invoke(app, ["history", "--json"]).stdout)
    # newest first; the cascade's look-up was sure of this one, so the model was not asked
    assert [(r["verdict"], r["annotation"], r["strategy"]) for r in rows] == [
        ("VALID", "Sensory-event, Visual-presentation, Red, Circle", "cascade"),
        ("VALID", GOOD, "loop"),
    ]


def test_settings_vision_role_is_used_and_never_the_default() -> None:
    settings = get_settings().model_copy(
        update={"models": get_settings().models.model_copy(update={"vision": "ollama:llava"})}
    )
    assert RoleModels(settings, "local:qwen2.5-coder-1.5b").spec("vision") == "ollama:llava"
    assert get_settings().models.vision is None


def test_a_batch_task_pickled_for_a_worker_builds_its_own_deps(tmp_path: Path) -> None:
    """What a Ray worker gets: specs only (no live model or store); it builds its deps on its
    first row and answers with the decision; the caller stores it."""
    import pickle

    from casework.apps.hed.service import BatchTask

    settings = get_settings().model_copy(update={"home": tmp_path / "home"})
    task = BatchTask(
        settings=settings,
        strategy="rules",
        schema="8.3.0",
        assess=False,
        model=None,
        validator="python",
    )
    task.bind(HedDeps(settings=settings), RunConfig.of(settings))
    shipped = pickle.loads(pickle.dumps(task))
    assert shipped._deps is None  # the caller's deps never travel
    decision = shipped(("r1", "The participant presses the right mouse button."))
    assert decision.run is not None and decision.run.strategy == "rules"
    assert decision.annotation.startswith("Agent-action, Participant-response")
    assert shipped._deps is not None and shipped._deps.repo is None


def test_batch_on_the_local_executor_with_the_baseline_and_executor_errors(
    tmp_path: Path, repo: HedRepository, capfd: pytest.CaptureFixture[str]
) -> None:
    csv_path = _write(tmp_path / "ev.csv", "description\nA beep sounds.\nA red circle appears.\n")
    deps = HedDeps(settings=get_settings(), validator="python", repo=repo)
    report = run_batch(csv_path, deps, strategy="rules", executor="local", concurrency=2)
    assert (report.done, report.failed, report.verdicts) == (2, 0, {"VALID": 2})
    with pytest.raises(InputError, match=r"Unknown executor 'threads'; use local or ray\."):
        run_batch(csv_path, deps, strategy="rules", executor="threads")
    with pytest.raises(InputError, match=r"--address is only for --executor ray\."):
        run_batch(csv_path, deps, strategy="rules", address="127.0.0.1:1")

    from casework import cli

    for argv, message in (
        (["--executor", "threads"], "Unknown executor 'threads'; use local or ray."),
        (["--address", "127.0.0.1:1"], "--address is only for --executor ray."),
    ):
        capfd.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["hed", "batch", str(csv_path), "--strategy", "rules", *argv])
        out, err = capfd.readouterr()
        assert exit_info.value.code == 2 and out == "" and message in err
        assert "Traceback" not in err


@pytest.mark.slow
def test_batch_on_a_local_ray_resumes_and_loses_nothing(
    tmp_path: Path, repo: HedRepository
) -> None:
    pytest.importorskip("ray")
    csv_path = _write(tmp_path / "ev.csv", "id,description\na,A beep sounds.\nb,  \nc,A tone.\n")
    deps = HedDeps(settings=get_settings(), validator="python", repo=repo)
    report = run_batch(csv_path, deps, strategy="rules", executor="ray", concurrency=2)
    assert (report.done, report.failed, report.skipped) == (2, 1, 0)
    lines = [json.loads(x) for x in report.out.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["a", "b", "c"] and "empty" in lines[1]["error"]
    again = run_batch(csv_path, deps, strategy="rules", executor="local")
    assert (again.skipped, again.done, again.failed) == (2, 0, 1)


def test_cli_annotate_under_model_names_that_model(settings, tmp_path: Path) -> None:
    """`hed annotate --model X --json`: the decision names the model it ran (issue #20); X
    replays a scripted recording of the same description; the status line follows the run's
    step events."""
    from casework.apps.hed.models import HedInput
    from casework.apps.hed.strategies import STRATEGIES
    from casework.llm import RecordingChatModel

    cassette = tmp_path / "one-shot.jsonl"
    recording = RoleModels.given(
        RecordingChatModel.wrap(ScriptedChatModel(steps=[say(GOOD)]), cassette)
    )
    deps = HedDeps(settings=settings, validator="python")
    STRATEGIES["one-shot"](HedInput(description="A red circle."), deps, RunConfig(models=recording))
    spec = f"replay:{cassette}"
    args = ["annotate", "A red circle.", "--strategy", "one-shot", "--validator", "python"]
    res = CliRunner().invoke(app, [*args, "--model", spec, "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    data = json.loads(res.stdout)
    assert (data["annotation"], data["run"]["model"], data["run"]["strategy"]) == (
        GOOD,
        spec,
        "one-shot",
    )
