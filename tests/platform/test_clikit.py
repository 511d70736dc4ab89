"""``casework.clikit``: the public surface, JSON on stdout, progress on stderr only when wanted,
and the common options behaving the same in any command that declares them."""

from __future__ import annotations

import json

import pytest
import typer

from casework import clikit
from casework.clikit import (
    ConcurrencyOption,
    JsonOption,
    LimitOption,
    ModelOption,
    NoProgressOption,
)


def test_public_surface() -> None:
    assert clikit.__all__ == [
        "AddressOption",
        "ConcurrencyOption",
        "ExecutorOption",
        "JsonOption",
        "LazyCommand",
        "LazyGroup",
        "LimitOption",
        "ModelOption",
        "NoProgressOption",
        "Users",
        "byte_progress",
        "caller_named",
        "console",
        "err_console",
        "lazy_group",
        "mount_user_add",
        "print_json",
        "progress",
        "progress_enabled",
        "read_password",
        "set_progress",
        "use_users",
    ]


def test_print_json_writes_one_plain_document(capfd: pytest.CaptureFixture[str]) -> None:
    clikit.print_json({"path": clikit, "text": "[red]not markup[/]", "n": 1.5})
    out, err = capfd.readouterr()
    assert json.loads(out) == {
        "path": str(clikit),
        "text": "[red]not markup[/]",
        "n": 1.5,
    }
    assert out.endswith("}\n") and err == ""


@pytest.mark.parametrize(
    ("terminal", "switched_on", "enabled", "drawn"),
    [
        (True, True, True, True),
        (False, True, True, False),  # piped stderr: no bar
        (True, False, True, False),  # --no-progress somewhere in this process
        (True, True, False, False),  # the caller asked for none
    ],
)
def test_progress_draws_on_stderr_only_when_wanted(
    terminal: bool,
    switched_on: bool,
    enabled: bool,
    drawn: bool,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1" if terminal else "0")
    clikit.set_progress(switched_on)
    try:
        with clikit.progress(enabled=enabled) as bar:
            task = bar.add_task("Counting", total=3)
            for _ in range(3):
                bar.advance(task)
    finally:
        clikit.set_progress(True)
    out, err = capfd.readouterr()
    assert out == ""
    assert ("Counting" in err and "3/3" in err) is drawn
    if not drawn:
        assert err == ""


def _demo_app(seen: dict[str, object]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def run(
        limit: LimitOption = None,
        concurrency: ConcurrencyOption = 4,
        model: ModelOption = None,
        as_json: JsonOption = False,
        no_progress: NoProgressOption = False,
    ) -> None:
        seen.update(limit=limit, concurrency=concurrency, model=model, as_json=as_json)

    @app.command()
    def other() -> None:
        pass

    return app


def test_common_options_parse_once_for_every_command() -> None:
    from typer.testing import CliRunner

    seen: dict[str, object] = {}
    runner = CliRunner()
    app = _demo_app(seen)
    result = runner.invoke(app, ["run", "-n", "5", "-c", "2", "-m", "openai:gpt-4o-mini", "--json"])
    assert result.exit_code == 0, result.output
    assert seen == {
        "limit": 5,
        "concurrency": 2,
        "model": "openai:gpt-4o-mini",
        "as_json": True,
    }
    assert clikit._progress_on is True
    try:
        assert runner.invoke(app, ["run", "--no-progress"]).exit_code == 0
        assert clikit._progress_on is False  # the switch reaches bars drawn anywhere
    finally:
        clikit.set_progress(True)
    bad = runner.invoke(app, ["run", "--limit", "0"], standalone_mode=False)
    assert isinstance(bad.exception, typer.BadParameter)
    assert bad.exception.format_message() == (
        "Invalid value for '--limit' / '-n': Input should be greater than or equal to 1"
    )


def test_a_lazy_group_lists_by_help_and_loads_only_what_runs() -> None:
    from typer.testing import CliRunner

    loads: list[str] = []

    def load_hello() -> typer.Typer:
        loads.append("hello")
        sub = typer.Typer()

        @sub.command()
        def wave(name: str) -> None:
            print(f"hi {name}")

        return sub

    def never() -> typer.Typer:
        raise AssertionError("the 'other' command was loaded")

    entries = {
        "hello": clikit.LazyCommand("Greet people.", load_hello),
        "other": clikit.LazyCommand("Never run here.", never),
    }
    root = typer.Typer(cls=clikit.lazy_group(lambda: entries))

    @root.command()
    def plain() -> None:
        """A command of the group's own."""

    @root.command()
    def other_plain() -> None:
        """Two, so typer builds a group."""

    runner = CliRunner()
    listed = runner.invoke(root, ["--help"], env={"COLUMNS": "100"})
    assert listed.exit_code == 0 and loads == []
    assert listed.output.index("plain") < listed.output.index("hello")
    assert "Greet people." in listed.output and "Never run here." in listed.output
    assert runner.invoke(root, ["hello", "wave", "ana"]).output == "hi ana\n"
    assert runner.invoke(root, ["hello", "wave", "bo"]).output == "hi bo\n"
    assert loads == ["hello"]  # once per process
    assert runner.invoke(root, ["nope"]).exit_code == 2
