"""The whole ``casework`` command tree keeps the CLI contract, discovered from the Typer app
(every group and command, each registered app's and ``eval``'s), so a new command is covered
without a new test:

- a usage error (unknown command or option, missing argument, bad int/float value) prints
  click's usage line plus one sentence on stderr and exits 2, never a traceback;
- every command with ``--json`` has an invocation in ``JSON_INVOCATIONS`` and, run on a
  temporary home, prints exactly one JSON document on stdout while its progress goes to stderr.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer

import casework
from casework import cli
from casework.clikit import LazyGroup
from casework.config import get_settings

ROOT = typer.main.get_command(cli.app)


def walk(command: Any = ROOT, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every (path, click command) of the tree, groups included, root first; the lazy
    sub-commands (each app's, each app's evaluation) are loaded to be walked."""
    yield path, command
    if isinstance(command, LazyGroup):
        for name in list(command.entries()):
            command.load(name)
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from walk(sub, (*path, name))


def is_group(command: Any) -> bool:
    return hasattr(command, "commands")


def arguments(command: Any) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "argument"]


def number_type(param: Any) -> type | None:
    """int or float when the parameter parses one (a bool is not a number here)."""
    annotation = param.type_descriptor.annotation
    return annotation if annotation in (int, float) else None


def placeholder(param: Any) -> str:
    """A value the parser accepts for an argument, so only the value under test is wrong."""
    return {int: "1", float: "1.5"}.get(number_type(param), "x")  # type: ignore[arg-type]


def usage_cases() -> Iterator[Any]:
    for path, command in walk():
        name = " ".join(path) or "(root)"
        yield pytest.param(
            [*path, "--no-such-option"],
            path,
            "No such option: --no-such-option",
            id=f"{name}:option",
        )
        if is_group(command):
            yield pytest.param(
                [*path, "no-such-command"], path, "No such command", id=f"{name}:command"
            )
            continue
        args = arguments(command)
        if any(a.required for a in args):
            yield pytest.param(list(path), path, "Missing argument", id=f"{name}:missing")
        for param in command.params:
            if number_type(param) is None:
                continue
            if param.param_type_name == "argument":
                values = ["abc" if a is param else placeholder(a) for a in args]
                argv = [*path, *values]
            else:
                argv = [*path, *(placeholder(a) for a in args), param.opts[0], "abc"]
            yield pytest.param(argv, path, "Invalid value for", id=f"{name}:{param.name}=abc")


def run_cli(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``casework ARGV`` in this process: (exit code, stdout, stderr)."""
    capfd.readouterr()
    try:
        cli.main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize(("argv", "path", "message"), list(usage_cases()))
def test_usage_errors_are_a_usage_line_and_one_sentence(
    argv: list[str], path: tuple[str, ...], message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(argv, capfd)
    assert code == 2, (out, err)
    assert "Traceback" not in err and out == ""
    lines = err.rstrip("\n").splitlines()
    assert lines[0].startswith(f"Usage: {' '.join(['casework', *path])} "), err
    assert all(line.startswith(" ") for line in lines[1:-1]), err  # a wrapped usage line
    sentence = lines[-1]
    assert sentence.startswith(f"error: {message}") and sentence.endswith("--help`."), err
    assert ". " not in sentence and f"`casework {' '.join(path)}".rstrip() in sentence


def test_the_seven_reported_commands_are_covered() -> None:
    """The commands issue 8 found printing a traceback are among the generated cases."""
    covered = {tuple(case.values[0]) for case in usage_cases()}
    for argv in (
        ("no-such-command",),
        ("--no-such-option",),
        ("receipts", "no-such-command"),
        ("receipts", "validate"),
        ("eval", "no-such-command"),
        ("eval", "receipts", "--limit", "abc"),
        ("bench", "no-such-command"),
    ):
        assert argv in covered


def test_a_bare_group_prints_its_help_and_exits_2(capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["bench"], capfd)
    assert code == 2 and err == ""
    assert "Usage: casework bench [OPTIONS] COMMAND [ARGS]..." in out and "local-tools" in out


# ------------------------------------------------------------------ --json everywhere
@dataclass(frozen=True)
class Invocation:
    argv: list[str]
    """The command line; ``{name}`` fields come from the ``json_home`` fixture."""
    progress: bool = False
    """The command draws a progress bar (which must land on stderr)."""
    slow: bool = False
    """Runs the bundled model: only with the slow tests."""


SQL_SCHEMA = Path(casework.__file__).parent / "apps" / "sql" / "data" / "schemas" / "security.json"
SPIDER_SCHOOL = (
    "sqlite:///"
    + (SQL_SCHEMA.parents[1] / "spider_sample" / "database" / "school" / "school.sqlite").as_posix()
)

# Every command with --json needs an entry (test_every_json_command_has_an_invocation).
# Scripted or baseline strategies only; the bundled model only in slow entries.
HED_CASES = Path(casework.__file__).parent / "apps/hed/data/eval/cases.jsonl"
DOCUMENT_CASES = Path(__file__).parent / "documents_examples.jsonl"
SQL_CASES = Path(casework.__file__).parent / "apps/sql/data/eval/questions.jsonl"
RECEIPTS_CASES = Path(__file__).parents[1] / "apps" / "receipts" / "data" / "examples.jsonl"
VANPOOL_PLAIN = Path(casework.__file__).parent / "apps/vanpool/data/eval/outreach_plain.jsonl"
DOCUMENT_FILES = Path(casework.__file__).parent / "apps" / "documents" / "data" / "eval" / "files"

JSON_INVOCATIONS: dict[str, Invocation] = {
    "config": Invocation(["config", "--json"]),
    "permissions": Invocation(["permissions", "--json"]),
    "bench startup": Invocation(["bench", "startup", "--repeats", "1", "--json"]),
    "bench runtime": Invocation(["bench", "runtime", "--json", "--steps", "5", "--repeats", "1"]),
    "bench eval-throughput": Invocation(
        [
            "bench",
            "eval-throughput",
            "--cases",
            "4",
            "--concurrency",
            "2",
            "--latency",
            "0.01",
            "--json",
        ]
    ),
    "bench batch": Invocation(
        ["bench", "batch", "--items", "4", "--latency", "0.01", "--executor", "local", "--json"],
        progress=True,
    ),
    "bench inbox": Invocation(["bench", "inbox", "--items", "30", "--repeats", "1", "--json"]),
    "bench decided": Invocation(
        ["bench", "decided", "--app", "vanpool", "--sample", "2", "--json"]
    ),
    "bench api": Invocation(["bench", "api", "--requests", "20", "--concurrency", "2", "--json"]),
    "bench local-tools": Invocation(["bench", "local-tools", "--limit", "1", "--json"], slow=True),
    "bench ocr": Invocation(
        ["bench", "ocr", "{ocr_folder}", "--split", "all", "--engine", "rapidocr", "--json"],
        progress=True,
    ),
    "eval receipts": Invocation(
        ["eval", "receipts", "--strategy", "baseline", "--limit", "3", "--json"], progress=True
    ),
    "eval vanpool": Invocation(
        ["eval", "vanpool", "--strategy", "rules", "--limit", "3", "--json"], progress=True
    ),
    "eval calibrate": Invocation(["eval", "calibrate", "{run}", "--json"]),
    "eval list": Invocation(["eval", "list", "--json"]),
    "eval show": Invocation(["eval", "show", "{run}", "--json"]),
    "eval compare": Invocation(["eval", "compare", "{run}", "{run}", "--json"]),
    "eval validate": Invocation(["eval", "validate", "receipts", "--json"]),
    "receipts import": Invocation(["receipts", "import", "{receipt_file}", "--json"]),
    "receipts index": Invocation(["receipts", "index", "--json"]),
    "receipts seed": Invocation(["receipts", "seed", "--no-index", "--json"]),
    "receipts list": Invocation(["receipts", "list", "--json"]),
    "receipts show": Invocation(["receipts", "show", "chevron", "--json"]),
    "receipts history": Invocation(["receipts", "history", "chevron", "9", "3", "--json"]),
    "receipts validate": Invocation(
        [
            "receipts",
            "validate",
            "chevron",
            "9",
            "3",
            "GRAND_TOTAL",
            "--json",
            "--strategy",
            "baseline",
        ]
    ),
    "receipts harmonize": Invocation(["receipts", "harmonize", "--dry-run", "--json"]),
    "receipts review": Invocation(["receipts", "review", "--json"]),
    "receipts review accept": Invocation(["receipts", "review", "accept", "{review_a}", "--json"]),
    "receipts review reject": Invocation(["receipts", "review", "reject", "{review_b}", "--json"]),
    "receipts edge-cases list": Invocation(["receipts", "edge-cases", "list", "--json"]),
    "vanpool seed": Invocation(["vanpool", "seed", "--json"]),
    "vanpool import": Invocation(["vanpool", "import", "{vanpool_roster}", "--json"]),
    "vanpool audit": Invocation(["vanpool", "audit", "VP-101", "VP-123", "--json"], progress=True),
    "vanpool cases": Invocation(["vanpool", "cases", "--json"]),
    "vanpool case": Invocation(["vanpool", "case", "{vanpool_case}", "--json"]),
    "vanpool approvals": Invocation(["vanpool", "approvals", "--json"]),
    "vanpool reply": Invocation(["vanpool", "reply", "{vanpool_case}", "Noted, thanks.", "--json"]),
    "vanpool tick": Invocation(["vanpool", "tick", "--now", "2026-12-01T09:00", "--json"]),
    "vanpool examples import": Invocation(
        ["vanpool", "examples", "import", str(VANPOOL_PLAIN), "--json"]
    ),
    "vanpool examples list": Invocation(["vanpool", "examples", "list", "--json"]),
    "vanpool examples recall": Invocation(
        ["vanpool", "examples", "recall", "Details look right to me.", "--json"]
    ),
    "hed examples import": Invocation(["hed", "examples", "import", str(HED_CASES), "--json"]),
    "hed examples list": Invocation(["hed", "examples", "list", "--json"]),
    "hed examples recall": Invocation(
        ["hed", "examples", "recall", "A red circle appears on the screen.", "--json"]
    ),
    "documents examples import": Invocation(
        ["documents", "examples", "import", str(DOCUMENT_CASES), "--json"]
    ),
    "documents examples list": Invocation(["documents", "examples", "list", "--json"]),
    "documents examples recall": Invocation(
        ["documents", "examples", "recall", "INVOICE Acme Supplies Ltd", "--json"]
    ),
    "receipts examples import": Invocation(
        ["receipts", "examples", "import", str(RECEIPTS_CASES), "--json"]
    ),
    "receipts examples list": Invocation(["receipts", "examples", "list", "--json"]),
    "receipts examples recall": Invocation(
        ["receipts", "examples", "recall", "Trader Joe's | MUSHROOM [RISOTTO] | RISOTTO", "--json"]
    ),
    "sql examples import": Invocation(["sql", "examples", "import", str(SQL_CASES), "--json"]),
    "sql examples list": Invocation(["sql", "examples", "list", "--json"]),
    "sql examples recall": Invocation(
        ["sql", "examples", "recall", "How many users have MFA on?", "--json"]
    ),
    "eval documents": Invocation(
        ["eval", "documents", "--strategy", "rules", "--limit", "3", "--json"], progress=True
    ),
    "eval sql": Invocation(
        ["eval", "sql", "--strategy", "rules", "--limit", "3", "--json"], progress=True
    ),
    "eval hed": Invocation(
        ["eval", "hed", "--strategy", "rules", "--limit", "3", "--json"], progress=True
    ),
    "sql schema load": Invocation(
        ["sql", "schema", "load", str(SQL_SCHEMA), "--name", "sec", "--json"]
    ),
    "sql schema reflect": Invocation(["sql", "schema", "reflect", SPIDER_SCHOOL, "--json"]),
    "sql schema show": Invocation(["sql", "schema", "show", "sec", "--json"]),
    "sql db create": Invocation(
        ["sql", "db", "create", "--schema", str(SQL_SCHEMA), "--rows", "3", "--json"]
    ),
    "sql validate": Invocation(
        ["sql", "validate", "SELECT COUNT(*) FROM alerts", "--schema", "sec", "--json"]
    ),
    "sql ask": Invocation(
        ["sql", "ask", "How many students are there?", "--strategy", "rules", "--json"]
    ),
    "documents add": Invocation(
        ["documents", "add", "{doc_file}", "--user", "json-user", "--json"], progress=True
    ),
    "documents list": Invocation(["documents", "list", "--user", "json-user", "--json"]),
    "documents ocr": Invocation(["documents", "ocr", "{doc_file}", "--json"]),
    "documents show": Invocation(["documents", "show", "{doc}", "--user", "json-user", "--json"]),
    "documents extract": Invocation(
        ["documents", "extract", "{doc}", "--user", "json-user", "--strategy", "rules", "--json"]
    ),
    "documents correct": Invocation(
        [
            "documents",
            "correct",
            "{extraction}",
            "the total is 45.10",
            "--user",
            "json-user",
            "--json",
        ],
        slow=True,
    ),
    "documents stack show": Invocation(
        ["documents", "stack", "show", "{stack}", "--user", "json-user", "--json"]
    ),
    "hed validate": Invocation(
        ["hed", "validate", "Sensory-event", "--validator", "python", "--json"]
    ),
    "hed vocabulary": Invocation(["hed", "vocabulary", "--json"]),
    "hed history": Invocation(["hed", "history", "--json"]),
    "hed bench-validators": Invocation(["hed", "bench-validators", "--repeat", "1", "--json"]),
    "hed annotate": Invocation(
        ["hed", "annotate", "A red circle appears.", "--strategy", "rules", "--json"]
    ),
    "hed batch": Invocation(
        ["hed", "batch", "{hed_csv}", "--strategy", "rules", "--json"], progress=True
    ),
    "user list": Invocation(["user", "list", "--json"]),
    "user sessions": Invocation(["user", "sessions", "json-user", "--json"]),
    "token create": Invocation(["token", "create", "json-user", "--json"]),
    "token list": Invocation(["token", "list", "json-user", "--json"]),
}


def json_commands() -> list[str]:
    return [
        " ".join(path)
        for path, command in walk()
        if any("--json" in p.opts for p in command.params)
    ]


def test_every_json_command_has_an_invocation() -> None:
    commands = set(json_commands())
    missing = sorted(commands - set(JSON_INVOCATIONS))
    stale = sorted(set(JSON_INVOCATIONS) - commands)
    assert not missing, f"add an entry to JSON_INVOCATIONS for: {missing}"
    assert not stale, f"remove JSON_INVOCATIONS entries of commands that are gone: {stale}"


def _json_cases() -> Iterator[Any]:
    for name, invocation in JSON_INVOCATIONS.items():
        marks = [pytest.mark.slow, pytest.mark.local_model] if invocation.slow else []
        yield pytest.param(name, invocation, id=name, marks=marks)


@pytest.fixture(scope="module")
def json_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A temporary home with four receipts, labels in the review queue and one stored baseline eval run;
    yields the values of the invocations' ``{name}`` fields."""
    from casework.apps.receipts.service import bundled_receipt_files

    home = tmp_path_factory.mktemp("json-home")
    small = ("chevron", "casaverde", "bluebottle", "walgreens")
    files = [p for p in bundled_receipt_files() if p.name.split(".")[0] in small]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CASEWORK_HOME", str(home))
        get_settings.cache_clear()

        def run(*argv: str) -> str:
            buffer = io.StringIO()
            with redirect_stdout(buffer):
                cli.main(list(argv))  # raises SystemExit on any failure
            return buffer.getvalue()

        run("user", "add", "json-user")
        run("receipts", "import", *map(str, files))
        run("receipts", "harmonize")
        queue = json.loads(run("receipts", "review", "--json"))
        assert len(queue) >= 2, "harmonize should have queued two labels for review"
        run_id = json.loads(
            run(
                "eval",
                "receipts",
                "--strategy",
                "baseline",
                "--limit",
                "12",
                "--json",
                "--no-progress",
            )
        )["run_id"]
        doc_file = DOCUMENT_FILES / "form-22.pdf"
        doc = json.loads(run("documents", "add", str(doc_file), "--user", "json-user", "--json"))
        doc_id = str(doc[0]["id"] if isinstance(doc, list) else doc["documents"][0]["id"])
        extraction = json.loads(
            run(
                "documents",
                "extract",
                doc_id,
                "--user",
                "json-user",
                "--strategy",
                "rules",
                "--json",
            )
        )
        run("documents", "stack", "create", "forms", "--user", "json-user")
        hed_csv = home / "events.csv"
        hed_csv.write_text("description\nA red circle appears on the screen.\n", encoding="utf-8")
        from casework.apps.vanpool.synth import DATA_DIR as VANPOOL_DATA

        ocr_folder = home / "scans"  # one scan with its transcript, for `bench ocr`
        ocr_folder.mkdir()
        (ocr_folder / "receipt-38.png").write_bytes(
            (DOCUMENT_FILES / "receipt-38.png").read_bytes()
        )
        (ocr_folder / "receipt-38.txt").write_text("0,0,10,0,10,10,0,10,TOTAL $85.62\n")
        run("vanpool", "seed")
        audited = json.loads(run("vanpool", "audit", "VP-119", "--json"))
        yield {
            "doc_file": str(doc_file),
            "doc": doc_id,
            "extraction": str(extraction.get("extraction_id") or extraction.get("id")),
            "stack": "1",  # the home's first stack
            "hed_csv": str(hed_csv),
            "vanpool_roster": str(VANPOOL_DATA / "roster.json"),
            "vanpool_case": audited["results"][0]["case_id"],
            "run": run_id,
            "review_a": str(queue[0]["id"]),
            "review_b": str(queue[1]["id"]),
            "receipt_file": str(files[0]),
            "ocr_folder": str(ocr_folder),
        }
    get_settings.cache_clear()


@pytest.mark.parametrize(("name", "invocation"), list(_json_cases()))
def test_json_output_is_one_document_on_stdout(
    name: str,
    invocation: Invocation,
    json_home: dict[str, str],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich draws bars and colours as on a terminal
    argv = [arg.format(**json_home) for arg in invocation.argv]
    code, out, err = run_cli(argv, capfd)
    assert code == 0, err
    json.loads(out)  # exactly one document: any stray line or escape code fails to parse
    assert "\x1b" not in out
    if invocation.progress:
        assert "\x1b" in err and "━" in err, "the progress bar should be drawn on stderr"


def test_any_no_progress_flag_silences_every_bar_of_the_process(
    json_home: dict[str, str], capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`eval APP` declares its own --no-progress; it must also reach bars drawn elsewhere
    (the model join) and leave stderr without a bar even on a terminal."""
    from casework import clikit

    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    argv = ["eval", "receipts", "--strategy", "baseline", "--limit", "1", "--json"]
    try:
        code, out, err = run_cli([*argv, "--no-progress"], capfd)
        assert code == 0 and json.loads(out)["cases"] == 1
        assert clikit.progress_enabled() is False and "━" not in err
        code, out, err = run_cli(argv, capfd)
        assert code == 0 and clikit.progress_enabled() is True and "━" in err
    finally:
        clikit.set_progress(True)
