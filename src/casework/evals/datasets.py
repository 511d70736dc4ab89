"""Evaluation datasets: JSONL, one case per line.

Each line is an object::

    {"id": "shift-007",
     "inputs": {"employee_ids": ["E-101", "E-205"]},
     "expected": {"verdict": "INVALID", "tools": ["get_shifts", "get_vanpool"]},
     "metadata": {"scenario_type": "true_conflict", "complexity": "simple", "tags": ["night"]}}

``inputs`` is required; ``expected`` (alias ``outputs`` / ``expected_outputs``, as LangSmith
exports them) and ``metadata`` are optional objects. ``expected`` may hold ``tools`` (the
reference tool path) and ``tool_args`` (``{tool: {arg: value}}``) for the trajectory and
tool-choice evaluators. A missing ``id`` becomes ``case-<line>``. Blank lines are skipped.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from casework.errors import InputError
from casework.evals.suite import EvalCase, EvalSuite

__all__ = [
    "dataset_digest",
    "dataset_summary",
    "dump_dataset",
    "load_dataset",
    "parse_case",
    "resolve_dataset",
]

_EXPECTED_ALIASES = ("expected", "outputs", "expected_outputs")
_KNOWN_KEYS = {"id", "inputs", "metadata", *_EXPECTED_ALIASES}


def parse_case(record: Any, *, line: int) -> EvalCase:
    """One case from a decoded JSON line; raises ``ValueError`` with the problem, in words."""
    if not isinstance(record, dict):
        raise ValueError(f"a case must be a JSON object, not {type(record).__name__}")
    unknown = sorted(set(record) - _KNOWN_KEYS)
    if unknown:
        raise ValueError(
            f"unknown key {unknown[0]!r} (a case has id, inputs, expected and metadata)"
        )
    case_id = record.get("id", f"case-{line}")
    if (
        isinstance(case_id, bool)
        or not isinstance(case_id, str | int)
        or str(case_id).strip() == ""
    ):
        raise ValueError("id must be a non-empty string or an integer")
    if "inputs" not in record:
        raise ValueError("the case has no inputs")
    inputs = record["inputs"]
    if not isinstance(inputs, dict):
        raise ValueError("inputs must be a JSON object")
    given = [k for k in _EXPECTED_ALIASES if k in record]
    if len(given) > 1:
        raise ValueError(f"the case has both {given[0]!r} and {given[1]!r}; keep one")
    expected = record.get(given[0], {}) if given else {}
    if expected is None:
        expected = {}
    if not isinstance(expected, dict):
        raise ValueError("expected must be a JSON object")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be a JSON object")
    tools = expected.get("tools")
    if tools is not None and (
        not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)
    ):
        raise ValueError("expected.tools must be a list of tool names")
    tool_args = expected.get("tool_args")
    if tool_args is not None and (
        not isinstance(tool_args, dict) or not all(isinstance(v, dict) for v in tool_args.values())
    ):
        raise ValueError("expected.tool_args must map each tool name to an object of arguments")
    tags = metadata.get("tags")
    if tags is not None and not isinstance(tags, list):
        raise ValueError("metadata.tags must be a list")
    return EvalCase(id=str(case_id), inputs=inputs, expected=expected, metadata=metadata)


def load_dataset(
    path: str | Path,
    *,
    limit: int | None = None,
    read_case: Callable[[dict[str, Any], Path], dict[str, Any]] | None = None,
) -> list[EvalCase]:
    """All cases of a JSONL file, in file order (the first ``limit`` when given); each line
    goes through ``read_case`` first when given (``EvalSuite.read_case``: an app's own form).

    Raises ``InputError`` naming the file and line of the first malformed case.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"No dataset at {path}: give a JSONL file with one case per line.")
    cases: list[EvalCase] = []
    seen: dict[str, int] = {}
    content = _text_of(path)
    for number, raw in enumerate(content.split("\n"), start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(_not_json_lines(path, content, number, exc)) from None
        if isinstance(record, list) and text == content.strip():
            raise InputError(_ONE_LIST.format(name=path.name))  # the list on one line
        try:
            if read_case is not None and isinstance(record, dict):
                record = read_case(record, path)
            case = parse_case(record, line=number)
        except ValueError as exc:
            raise InputError(f"{path.name} line {number}: {exc}.") from None
        if case.id in seen:
            raise InputError(
                f"{path.name} line {number}: case id {case.id!r} is already used on line {seen[case.id]}."
            )
        seen[case.id] = number
        cases.append(case)
        if limit is not None and len(cases) >= limit:
            break
    if not cases:
        raise InputError(f"The dataset {path} has no cases.")
    return cases


def _text_of(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{path.name} is not UTF-8 text; save it as UTF-8 JSON Lines, one case per line."
        ) from None


_ONE_LIST = (
    "{name} is one JSON list, not JSON Lines: write one case per line "
    "(`casework eval sql` reads a Spider or BIRD list with --db-dir)."
)


def _not_json_lines(path: Path, content: str, number: int, exc: json.JSONDecodeError) -> str:
    """The sentence for a line that does not decode; a whole file that is one JSON list (a
    Spider or BIRD question file) says so rather than blame its first line."""
    if content.lstrip().startswith("["):
        try:
            whole = json.loads(content)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, list):
            return _ONE_LIST.format(name=path.name)
    return f"{path.name} line {number} is not valid JSON ({exc.msg} at column {exc.colno})."


def dump_dataset(cases: Iterable[EvalCase], path: str | Path) -> Path:
    """Write cases as JSONL (the inverse of ``load_dataset``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for case in cases:
            record: dict[str, Any] = {"id": case.id, "inputs": case.inputs}
            if case.expected:
                record["expected"] = case.expected
            if case.metadata:
                record["metadata"] = case.metadata
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def dataset_digest(path: str | Path) -> str:
    """SHA-256 of the file, so two runs can tell whether they saw the same dataset."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def resolve_dataset(suite: EvalSuite, dataset: str | Path | None) -> Path:
    """The suite's default dataset, one of its named datasets, or a user's file."""
    if dataset is None or str(dataset) == "":
        return Path(suite.dataset)
    name = str(dataset)
    if name in suite.datasets:
        return Path(suite.datasets[name])
    path = Path(name).expanduser()
    if path.is_file():
        return path
    named = ", ".join(sorted(suite.datasets)) or "none"
    raise InputError(
        f"No dataset {name!r}: give a JSONL file path or one of {suite.app}'s named datasets ({named})."
    )


def dataset_summary(cases: list[EvalCase]) -> dict[str, Any]:
    """Counts by scenario type, complexity, tag and expected verdict, for ``casework eval validate``."""

    def count(values: Iterable[Any]) -> dict[str, int]:
        return dict(sorted(Counter(str(v) for v in values if v is not None).items()))

    return {
        "cases": len(cases),
        "scenario_type": count(c.metadata.get("scenario_type") for c in cases),
        "complexity": count(c.metadata.get("complexity") for c in cases),
        "tags": count(t for c in cases for t in c.metadata.get("tags") or []),
        "verdict": count(c.expected.get("verdict") for c in cases),
        "with_reference_tools": sum(1 for c in cases if c.expected.get("tools") is not None),
    }
