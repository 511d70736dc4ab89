"""The examples faces, built once for every app with ``AppSpec.examples`` (vanpool here):
``casework vanpool examples import|list|show|recall|delete`` and ``/vanpool/examples``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from casework import cli
from casework.access import create_token, create_user, open_access
from casework.config import Settings
from casework.examples import memory_for
from casework.server import create_app

CASES = [
    {
        "inputs": {"reply": "Details look right to me, thanks."},
        "expected": {"bucket": "acknowledgment"},
    },
    {"inputs": {"reply": "Which address do you have for me?"}, "expected": {"bucket": "question"}},
]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        cli.main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cli_imports_lists_shows_recalls_and_deletes(settings, tmp_path, capsys) -> None:
    file = _write(tmp_path / "ex.jsonl", [json.dumps(c) for c in CASES])
    code, out, _ = _run(["vanpool", "examples", "import", str(file), "--json"], capsys)
    assert code == 0
    stored = json.loads(out)
    assert [e["answer"] for e in stored] == [{"bucket": "acknowledgment"}, {"bucket": "question"}]
    assert {e["source"] for e in stored} == {"import"} and all(e["shared"] for e in stored)
    code, out, _ = _run(["vanpool", "examples", "list"], capsys)
    assert code == 0 and "2 of 2 example(s)." in out and "Which address do you have" in out
    first = stored[0]["id"]
    code, out, _ = _run(["vanpool", "examples", "show", str(first)], capsys)
    assert json.loads(out)["key_text"] == "Details look right to me, thanks."
    code, out, _ = _run(
        ["vanpool", "examples", "recall", "Details look right to me, thanks.", "--json"], capsys
    )
    recalled = json.loads(out)
    assert recalled["answer"] == {"bucket": "acknowledgment"} and recalled["confidence"] == 100.0
    assert recalled["examples_used"][0]["id"] == first
    code, out, _ = _run(["vanpool", "examples", "delete", str(first)], capsys)
    assert code == 0 and f"Deleted vanpool example {first}" in out
    code, _, err = _run(["vanpool", "examples", "show", str(first)], capsys)
    assert code == 2 and f"No vanpool example {first}" in err and "Traceback" not in err


def test_a_bad_line_is_named_and_nothing_is_stored(settings, tmp_path, capsys) -> None:
    bad_bucket = {"inputs": {"reply": "ok"}, "expected": {"bucket": "maybe"}}
    file = _write(tmp_path / "bad.jsonl", [json.dumps(CASES[0]), "", json.dumps(bad_bucket)])
    code, _, err = _run(["vanpool", "examples", "import", str(file)], capsys)
    assert code == 2 and "Traceback" not in err
    assert (
        "Line 3: expected.bucket must be one of acknowledgment, question, update, escalation" in err
    )
    assert "nothing was stored" in err
    broken = _write(tmp_path / "broken.jsonl", [json.dumps(CASES[0]), "{not json"])
    code, _, err = _run(["vanpool", "examples", "import", str(broken)], capsys)
    assert code == 2 and "Line 2 of broken.jsonl is not valid JSON" in err
    no_reply = _write(tmp_path / "audit.jsonl", ['{"inputs": {"vanpool_id": "VP-101"}}'])
    code, _, err = _run(["vanpool", "examples", "import", str(no_reply)], capsys)
    assert code == 2 and "Line 1: a vanpool example is an outreach reply" in err
    assert memory_for(settings, "vanpool", None).count() == 0


def test_a_file_that_is_not_utf8_is_one_sentence(settings, tmp_path, capsys) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(
        '{"inputs": {"reply": "Ça va"}, "expected": {"bucket": "update"}}\n'.encode("latin-1")
    )
    code, _, err = _run(["vanpool", "examples", "import", str(latin)], capsys)
    assert code == 2 and "Traceback" not in err
    assert "latin.jsonl is not UTF-8 text; save it as UTF-8 JSON Lines" in err
    assert memory_for(settings, "vanpool", None).count() == 0


@pytest.fixture
def served(tmp_path):
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    engine = open_access(settings)
    create_user(engine, "ana", "reviewer", password="pw-ana-123456")
    create_user(engine, "bob", "user", password="pw-bob-123456")
    create_user(engine, "cy", "reviewer", password="pw-cy-1234567")
    app = create_app(settings)

    def client(name: str) -> TestClient:
        c = TestClient(app, raise_server_exceptions=False)
        c.headers["Authorization"] = f"Bearer {create_token(engine, name)[1]}"
        return c

    return settings, client


def test_api_adds_lists_and_deletes_per_tenant(served) -> None:
    settings, client = served
    ana, bob, cy = client("ana"), client("bob"), client("cy")
    res = ana.post("/vanpool/examples", json=CASES)
    assert res.status_code == 201, res.text
    ids = [e["id"] for e in res.json()]
    assert [e["verified_by"] for e in res.json()] == ["ana", "ana"]
    assert {e["source"] for e in res.json()} == {"api"}
    assert bob.post("/vanpool/examples", json=CASES[0]).status_code == 403  # a user may not add
    assert [e["id"] for e in ana.get("/vanpool/examples").json()] == ids[::-1]
    assert ana.get(f"/vanpool/examples/{ids[0]}").json()["answer"] == {"bucket": "acknowledgment"}
    assert bob.get("/vanpool/examples").json() == []  # ana's examples are hers
    assert cy.delete(f"/vanpool/examples/{ids[0]}").status_code == 404
    bad = ana.post("/vanpool/examples", json=[CASES[0], {"inputs": {"reply": " "}}])
    assert bad.status_code == 422
    assert bad.json()["error"].startswith("Line 2: a vanpool example is an outreach reply")
    assert len(ana.get("/vanpool/examples").json()) == 2  # nothing of the bad request stored
    assert ana.delete(f"/vanpool/examples/{ids[0]}").json() == {"deleted": ids[0]}
    assert ana.get(f"/vanpool/examples/{ids[0]}").status_code == 404
    assert memory_for(settings, "vanpool", None).count() == 1


def test_an_imported_case_reads_its_file_beside_the_jsonl(tmp_path: Path) -> None:
    from casework.examples import read_jsonl

    folder = tmp_path / "set"
    folder.mkdir()
    lines = [
        {"inputs": {"file": "files/a.pdf"}, "expected": {}},
        {"inputs": {"file": "/abs/b.pdf"}, "expected": {}},
        {"inputs": {"text": "x"}, "expected": {}},
    ]
    (folder / "cases.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    read = [record["inputs"] for _, record in read_jsonl(folder / "cases.jsonl")]
    assert read == [
        {"file": str((folder / "files" / "a.pdf").resolve())},
        {"file": "/abs/b.pdf"},
        {"text": "x"},
    ]
