"""`casework eval documents` through the platform harness: the user's short JSONL form, the
run-level field metrics, the tenancy suite as a dataset, and the agent with a scripted model."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from casework import cli
from casework.apps.documents.evalsuite import DATASET, TENANCY, eval_suite, run_metrics
from casework.config import get_settings
from casework.errors import InputError
from casework.evals.datasets import load_dataset
from casework.evals.results import CaseResult
from casework.evals.runner import run_suite
from casework.llm import ScriptedChatModel, call

FILES = DATASET.parent / "files"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    get_settings.cache_clear()
    yield tmp_path / "home"
    get_settings.cache_clear()


def _mine(folder: Path) -> Path:
    """Three documents of a user's own, in the issue's short form, files next to the JSONL."""
    (folder / "docs").mkdir(parents=True)
    for name in ("invoice-01.pdf", "letter-28.pdf", "letter-37.pdf"):
        shutil.copy(FILES / name, folder / "docs" / name)
    lines = [
        {  # custom mode; gold written as a person would: symbols, day-first date, odd case
            "id": "inv",
            "file": "docs/invoice-01.pdf",
            "fields": ["company", "date", "total", "iban"],
            "gold": {
                "company": "atelier  MOREAU sarl",
                "date": "03/09/2024",
                "total": "€640.97",
                "iban": None,
            },
        },
        {
            "id": "letter",
            "file": "docs/letter-28.pdf",
            "gold": {
                "company": "Kestrel Engineering GmbH",
                "date": "6 March 2024",
                "reference": "REF-909/79",
                "recipient": "Tomas Novak",
            },
        },
        {
            "id": "long-letter",
            "file": "docs/letter-37.pdf",
            "gold": {
                "company": "Acme Supplies Ltd",
                "date": "2025-02-09",
                "reference": "REF-301/71",
                "recipient": "Tomas Novak",
            },
        },
    ]
    path = folder / "mine.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _cli_json(*argv: str) -> dict:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        cli.main(list(argv))
    return json.loads(buffer.getvalue())


def test_eval_documents_rules_on_three_documents_pins_field_f1(home: Path, tmp_path: Path) -> None:
    dataset = _mine(tmp_path / "set")
    checked = _cli_json("eval", "validate", str(dataset), "--app", "documents", "--json")
    assert checked["cases"] == 3
    summary = _cli_json(
        "eval", "documents", "--strategy", "rules", "--dataset", str(dataset), "--json",
        "--no-progress",
    )  # fmt: skip
    m = summary["metrics"]
    assert summary["cases"] == 3 and m["errors"] == 0
    # 8 gold values right (3 + 3 + 2), 1 wrong (letter-37's recipient), 3 missed
    assert (m["field_precision"], m["field_recall"]) == (
        pytest.approx(8 / 9),
        pytest.approx(8 / 11),
    )
    assert m["field_f1"] == pytest.approx(0.8)
    assert m["completion_rate"] == 1.0 and m["document_exact_match"] == pytest.approx(1 / 3)
    assert m["field_match.total"] == 1.0 and m["field_match.iban"] == 1.0
    assert m["field_match.recipient"] == 0.0 and m["field_match.reference"] == 0.5
    assert m["tool_calls_per_document"] == 0.0 and m["seconds_per_document"] > 0
    assert m["calibrated_fields"] == 9 and m["field_ece"] is not None
    # a document is right only with every gold field: the two that are not are listed
    assert summary["failed_cases"] == ["letter", "long-letter"]
    targets = {t["metric"]: t["met"] for t in summary["targets"]}
    assert targets == {"field_f1": False, "completion_rate": True, "cross_tenant_leaks": None}
    # the evaluation wrote into its private store, not the working database
    assert _documents_in(home / "evals" / "documents-eval.db") == 3
    assert _documents_in(home / "casework.db") == 0


def _documents_in(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        return (
            conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            if "documents" in tables
            else 0
        )


def test_a_bad_line_is_one_sentence_with_its_number(tmp_path: Path) -> None:
    suite = eval_suite()
    path = tmp_path / "bad.jsonl"
    (tmp_path / "a.pdf").write_bytes((FILES / "invoice-01.pdf").read_bytes())
    cases = {
        '{"id": "x", "file": "nope.pdf", "gold": {}}': "there is no file 'nope.pdf' next to the dataset",
        '{"id": "x", "file": "a.pdf", "gold": [1]}': "gold must be an object",
        '{"id": "x", "file": "a.pdf", "fields": "total", "gold": {}}': "fields must be a non-empty list",
        '{"id": "x", "file": "a.pdf", "golden": {}}': "unknown key 'golden'",
        '{"id": "x", "inputs": {"fields": ["a"]}}': "the line names no file",
    }
    for line, message in cases.items():
        path.write_text('{"id": "ok", "file": "a.pdf", "gold": {"total": 1}}\n' + line + "\n")
        with pytest.raises(InputError, match=r"bad\.jsonl line 2: " + message):
            load_dataset(path, read_case=suite.read_case)
    path.write_text('{"file": "a.pdf", "gold": {"total": 640.97}}\n')
    (case,) = load_dataset(path, read_case=suite.read_case)
    assert case.id == "case-1" and case.inputs == {"file": str(tmp_path / "a.pdf"), "fields": None}
    assert case.expected == {"gold": {"total": 640.97}}


def test_the_bundled_sets_load(tmp_path: Path) -> None:
    suite = eval_suite()
    cases = load_dataset(DATASET, read_case=suite.read_case)
    assert len(cases) == 44
    assert {c.metadata["type"] for c in cases} == {"invoice", "receipt", "form", "letter"}
    assert {c.metadata["render"] for c in cases} == {"pdf", "pdf2", "pdf3", "png", "jpg", "scanpdf"}
    assert sum(bool(c.inputs.get("fields")) for c in cases) == 8  # custom mode
    assert all(Path(c.inputs["file"]).is_file() for c in cases)
    attacks = load_dataset(TENANCY, read_case=suite.read_case)
    assert [c.inputs["attack"] for c in attacks] == [
        "injection",
        "bound-tools",
        "stack-tools",
        "api",
        "json-paths",
    ]


def test_tenancy_through_the_harness_counts_zero_leaks(home: Path, tmp_path: Path) -> None:
    run = run_suite(
        eval_suite(), strategy="rules", dataset="tenancy", progress=False, out_dir=tmp_path / "r"
    )
    m = run.metrics
    assert (m["cross_tenant_reads"], m["cross_tenant_writes"], m["cross_tenant_leaks"]) == (0, 0, 0)
    assert m["verdict_accuracy"] == 1.0 and m["errors"] == 0
    # every door was tried: 21 answers of the injected agent and the rules strategy, 7 bound
    # tools, 10 stack tools, 15 API calls, 18 JSON paths
    assert [c.output["attempts"] for c in run.cases] == [21, 7, 10, 15, 18]
    assert m["tenancy_attempts"] == 71
    assert [c.output["verdict"] for c in run.cases] == ["contained"] * 5


def test_tenancy_through_the_harness_sees_a_leak(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figure can fail: a repository that reads a document's text without its owner."""
    from casework.apps.documents.repository import DocumentsRepository

    def unscoped(self: DocumentsRepository, user_id: int, document_id: int):  # type: ignore[no-untyped-def]
        from sqlalchemy import select

        from casework.apps.documents.tables import OcrResultRow
        from casework.stores.sql import session_scope

        with session_scope(self.engine) as s:
            row = s.execute(
                select(OcrResultRow.raw_text, OcrResultRow.page_count).where(
                    OcrResultRow.document_id == document_id
                )
            ).one_or_none()
        return (row[0], row[1]) if row else None

    monkeypatch.setattr(DocumentsRepository, "document_text", unscoped)
    run = run_suite(
        eval_suite(), strategy="rules", dataset="tenancy", progress=False, out_dir=tmp_path / "r"
    )
    leaked = [c for c in run.cases if c.output and c.output["verdict"] == "leaked"]
    assert [c.case_id for c in leaked] == ["tenancy-bound-tools", "tenancy-api"]
    assert run.metrics["cross_tenant_reads"] == 2 and run.metrics["cross_tenant_leaks"] == 2
    assert run.metrics["verdict_accuracy"] == 0.6


def test_the_agent_strategy_with_a_scripted_model(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    shutil.copy(FILES / "invoice-01.pdf", tmp_path / "inv.pdf")
    path.write_text(
        json.dumps({"id": "inv", "file": "inv.pdf", "gold": {"total": 640.97, "tax": 106.83}})
        + "\n"
    )

    def scripted(case_id: str, role: str) -> ScriptedChatModel:
        return ScriptedChatModel(
            steps=[
                call("get_document_text"),
                call("identify_document", document_type="invoice"),
                call(
                    "extract_fields",
                    fields={"total": 640.97, "tax": 100.0},
                    confidences={"total": 0.9, "tax": 0.8},
                ),
                call("complete_extraction"),
            ]
        )

    run = run_suite(
        eval_suite(),
        strategy="agent",
        dataset=path,
        base_model=scripted,
        progress=False,
        out_dir=tmp_path / "r",
    )
    m = run.metrics
    assert m["errors"] == 0 and m["completion_rate"] == 1.0
    assert (m["field_precision"], m["field_recall"], m["field_f1"]) == (0.5, 0.5, 0.5)
    assert m["tool_calls_per_document"] == 4.0
    # confidences 0.9 (right) and 0.8 (wrong): two bins, gaps 0.1 and 0.8
    assert m["field_ece"] == pytest.approx((0.1 + 0.8) / 2)
    assert run.cases[0].output["method"] == "agent"


def test_run_metrics_count_an_errored_case_as_nothing_extracted() -> None:
    gold = {"gold": {"total": 10.0, "date": "2024-01-02"}}
    done = CaseResult(
        case_id="a",
        index=0,
        inputs={"file": "a.pdf"},
        expected=gold,
        output={
            "verdict": "completed",
            "fields": {"total": "$10.00", "date": "01/02/2024"},
            "confidence_scores": {"total": 1.0, "date": 0.5},
        },
        wall_seconds=2.0,
    )
    broken = CaseResult(
        case_id="b", index=1, inputs={"file": "b.pdf"}, expected=gold, error="X", wall_seconds=4.0
    )
    m = run_metrics([done, broken])
    assert (m["field_precision"], m["field_recall"]) == (1.0, 0.5)
    assert m["completion_rate"] == 0.5 and m["seconds_per_document"] == 3.0
    assert m["field_ece"] == pytest.approx(0.25)  # (0 + 0.5) / 2
    attack = CaseResult(case_id="t", index=2, inputs={"attack": "api"}, error="boom")
    assert run_metrics([attack])["cross_tenant_leaks"] == 1  # an attack that errored proved nothing


def test_the_models_readings_are_fitted_from_an_all_layers_run(settings):
    from casework.apps.documents.evalsuite import fit_readings, model_readings
    from casework.apps.documents.fields import readings_path, stored_readings
    from casework.evals.results import CaseResult

    def case(i, gold, rules, read):
        layers = [
            {"layer": "rules", "output": {"fields": rules}},
            {"layer": "fields", "output": {"fields": read}},
        ]
        return CaseResult(case_id=f"c{i}", index=i, expected={"gold": gold}, layers=layers)

    gold = {"address": "1 High St", "total": "4.50", "date": "2024-03-01"}
    cases = [
        # the model agrees with the rules on the total: not a reading; its address is wrong
        case(0, gold, {"total": "4.50"}, {"total": "4.50", "address": "High St"}),
        # it changes the rules' wrong date to the right one, and reads the address right
        case(1, gold, {"date": "2024-01-03"}, {"date": "1 March 2024", "address": "1 high st"}),
        case(2, gold, {}, {"address": "Shop 4"}),
        case(3, gold, {}, {}),  # nothing read
    ]
    assert model_readings(cases) == [
        ("address", False),
        ("address", True),
        ("date", True),
        ("address", False),
    ]
    said = fit_readings(cases, settings, "run-1")
    assert said is not None and "not asked for address" in said
    record = stored_readings(settings.home)
    assert record.by_field["address"] == (1, 3) and record.by_field["date"] == (1, 1)
    assert record.by_field["recipient"] == (8, 8)  # not read here: the shipped record's
    assert record.source == "run-1" and readings_path(settings.home).is_file()
    # a later run that did not read the address keeps its record
    fit_readings([case(4, gold, {}, {"date": "2024-03-01"})], settings, "run-2")
    assert stored_readings(settings.home).by_field["address"] == (1, 3)
    assert fit_readings([case(5, gold, {}, {})], settings, "run-3") is None
