"""The same question verified on two databases is two sql examples (``QueryExamples.scope``);
verified again on one of them, it corrects that one only."""

from __future__ import annotations

import json

from casework import cli
from casework.examples import memory_for


def _import(path, lines, capsys) -> list[dict]:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    try:
        cli.main(["sql", "examples", "import", str(path), "--json"])
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_one_question_on_two_databases_is_two_examples(settings, tmp_path, capsys) -> None:
    q = "How many singers do we have?"
    first = _import(
        tmp_path / "a.jsonl",
        [
            {"inputs": {"question": q, "db_id": "concert_singer"}, "expected": {"sql": "SELECT 1"}},
            {"inputs": {"question": q, "db_id": "singer"}, "expected": {"sql": "SELECT 2"}},
        ],
        capsys,
    )
    assert len({e["id"] for e in first}) == 2
    again = _import(
        tmp_path / "b.jsonl",
        [{"inputs": {"question": q, "db_id": "singer"}, "expected": {"sql": "SELECT 3"}}],
        capsys,
    )
    assert again[0]["id"] == first[1]["id"]
    kept = {e.inputs["db_id"]: e.answer["sql"] for e in memory_for(settings, "sql", None).list()}
    assert kept == {"concert_singer": "SELECT 1", "singer": "SELECT 3"}
