"""Help and usage errors load none of the heavy libraries (issue #31, part 7): the root CLI
lists apps and evaluations from their AppSpec, and an app's commands import their service,
LangChain, Chroma, torch or the model only inside the command that runs. The time itself is
measured by `casework bench startup` (make bench), not here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["langchain", "langchain_core", "langgraph", "chromadb", "torch", "llama_cpp"]
HEAVY += ["sentence_transformers", "sqlalchemy", "fastapi", "pydantic_settings"]

PROBE = """
import json, sys
from casework.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = [m for m in {heavy!r} if m in sys.modules]
sys.stderr.write(json.dumps({{"code": code, "heavy": heavy}}) + "\\n")
"""


def _probe(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_library() -> None:
    code = f"import sys, casework.cli; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--help"], 0),
        (["vanpool", "--help"], 0),
        (["hed", "--help"], 0),
        (["eval", "--help"], 0),
        (["vanpool", "bogus"], 2),
    ],
)
def test_help_and_usage_errors_load_no_heavy_library(argv: list[str], code: int) -> None:
    assert _probe(*argv) == {"code": code, "heavy": []}


def test_the_startup_check_names_the_commands_over_the_limit() -> None:
    from casework.bench.startup import check_startup

    def row(median: float) -> dict:
        return {"median_seconds": median}

    result = {
        "limit_seconds": 0.5,
        "load_average_1m": 0.25,
        "commands": {"casework --help": row(0.31), "casework eval --help": row(0.62)},
    }
    assert check_startup(result) == (
        "median start-up over 0.5 s: `casework eval --help` 0.62 s "
        "(1-minute load 0.2; the limit is for an idle machine)."
    )
    result["commands"]["casework eval --help"] = row(0.5)
    assert check_startup(result) is None
