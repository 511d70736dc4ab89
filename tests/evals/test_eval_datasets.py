"""Datasets: JSONL in, EvalCase out; one sentence naming the line for every malformed case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casework.errors import InputError
from casework.evals.datasets import (
    dataset_digest,
    dataset_summary,
    dump_dataset,
    load_dataset,
    resolve_dataset,
)
from casework.evals.suite import EvalCase, EvalSuite


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_loads_cases_with_aliases_default_ids_and_blank_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path / "d.jsonl",
        [
            json.dumps(
                {
                    "id": "a",
                    "inputs": {"x": 1},
                    "expected": {"verdict": "VALID", "tools": ["t"]},
                    "metadata": {"scenario_type": "s", "complexity": "simple", "tags": ["k"]},
                }
            ),
            "",
            json.dumps({"inputs": {"x": 2}, "outputs": {"verdict": "INVALID"}}),
            json.dumps({"id": 7, "inputs": {"x": 3}, "expected_outputs": None}),
        ],
    )
    cases = load_dataset(path)
    assert [c.id for c in cases] == ["a", "case-3", "7"]
    assert cases[0].expected["tools"] == ["t"] and cases[0].metadata["tags"] == ["k"]
    assert cases[1].expected == {"verdict": "INVALID"}
    assert cases[2].expected == {} and cases[2].metadata == {}
    assert [c.id for c in load_dataset(path, limit=2)] == ["a", "case-3"]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('{"id": "a", "inputs": {', "line 2 is not valid JSON"),
        ('["not", "an", "object"]', "line 2: a case must be a JSON object"),
        ('{"id": "b"}', "line 2: the case has no inputs"),
        ('{"id": "b", "inputs": [1]}', "line 2: inputs must be a JSON object"),
        (
            '{"id": "b", "inputs": {}, "expected": "VALID"}',
            "line 2: expected must be a JSON object",
        ),
        ('{"id": "b", "inputs": {}, "metadata": 3}', "line 2: metadata must be a JSON object"),
        (
            '{"id": "b", "inputs": {}, "expected": {"tools": "lookup"}}',
            "expected.tools must be a list",
        ),
        (
            '{"id": "b", "inputs": {}, "expected": {"tool_args": {"t": 1}}}',
            "expected.tool_args must map",
        ),
        ('{"id": "b", "inputs": {}, "metadata": {"tags": "x"}}', "metadata.tags must be a list"),
        ('{"id": "b", "inputs": {}, "expected": {}, "outputs": {}}', "keep one"),
        ('{"id": "b", "inputs": {}, "input": {}}', "unknown key 'input'"),
        ('{"id": "", "inputs": {}}', "id must be a non-empty string"),
        ('{"id": "a", "inputs": {}}', "case id 'a' is already used on line 1"),
    ],
)
def test_malformed_line_is_one_sentence_with_its_line_number(
    tmp_path: Path, line: str, fragment: str
) -> None:
    path = write(tmp_path / "bad.jsonl", ['{"id": "a", "inputs": {}}', line])
    with pytest.raises(InputError) as info:
        load_dataset(path)
    message = str(info.value)
    assert fragment in message
    assert message.startswith("bad.jsonl line 2")
    assert message.endswith(".") and "\n" not in message


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="No dataset at"):
        load_dataset(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="has no cases"):
        load_dataset(write(tmp_path / "empty.jsonl", ["", "  "]))


def test_dump_round_trips_and_digest_tracks_content(tmp_path: Path) -> None:
    cases = [
        EvalCase("x", {"a": 1}, {"verdict": "VALID"}, {"tags": ["t"]}),
        EvalCase("y", {"a": 2}),
    ]
    path = dump_dataset(cases, tmp_path / "out" / "d.jsonl")
    assert load_dataset(path) == cases
    digest = dataset_digest(path)
    dump_dataset(cases[:1], path)
    assert dataset_digest(path) != digest


def test_resolve_dataset_default_named_file_and_unknown(tmp_path: Path) -> None:
    default = write(tmp_path / "default.jsonl", ['{"inputs": {}}'])
    other = write(tmp_path / "other.jsonl", ['{"inputs": {}}'])
    suite = EvalSuite(
        app="toy",
        dataset=default,
        strategies={},
        default_strategy="x",
        labels=[],
        datasets={"edge": other},
    )
    assert resolve_dataset(suite, None) == default
    assert resolve_dataset(suite, "edge") == other
    assert resolve_dataset(suite, str(other)) == other
    with pytest.raises(InputError, match="named datasets \\(edge\\)"):
        resolve_dataset(suite, "missing")


def test_summary_counts() -> None:
    cases = [
        EvalCase(
            "a",
            {},
            {"verdict": "VALID", "tools": []},
            {"scenario_type": "s1", "complexity": "simple", "tags": ["x", "y"]},
        ),
        EvalCase("b", {}, {"verdict": "INVALID"}, {"scenario_type": "s1", "tags": ["x"]}),
    ]
    summary = dataset_summary(cases)
    assert summary["cases"] == 2
    assert summary["scenario_type"] == {"s1": 2}
    assert summary["tags"] == {"x": 2, "y": 1}
    assert summary["verdict"] == {"INVALID": 1, "VALID": 1}
    assert summary["with_reference_tools"] == 1


def test_a_json_list_or_a_file_not_in_utf8_is_named_as_such(tmp_path: Path) -> None:
    spider = tmp_path / "dev.json"
    spider.write_text(json.dumps([{"db_id": "pets_1", "question": "How many pets?"}], indent=2))
    with pytest.raises(InputError) as err:
        load_dataset(spider)
    assert str(err.value) == (
        "dev.json is one JSON list, not JSON Lines: write one case per line "
        "(`casework eval sql` reads a Spider or BIRD list with --db-dir)."
    )
    spider.write_text(json.dumps([{"db_id": "pets_1", "question": "How many pets?"}]))
    with pytest.raises(InputError, match=r"^dev.json is one JSON list, not JSON Lines"):
        load_dataset(spider)  # the list on one line
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"id": "a", "inputs": {"reply": "Ça va"}}\n'.encode("latin-1"))
    with pytest.raises(InputError, match=r"^latin.jsonl is not UTF-8 text; save it as UTF-8"):
        load_dataset(latin)
