"""The evaluation runner on the bundled set (rules strategy) and on the issue's short JSONL form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docs_fixtures import ALICE

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.evaluate import DATASET, load_cases, run_case, summarize
from casework.apps.documents.strategies import run_rules
from casework.errors import InputError


def test_the_bundled_set_has_44_documents_of_every_kind() -> None:
    cases = load_cases(DATASET)
    assert len(cases) == 44
    kinds = {c["metadata"]["type"] for c in cases}
    renders = {c["metadata"]["render"] for c in cases}
    assert kinds == {"invoice", "receipt", "form", "letter"}
    assert renders == {"pdf", "pdf2", "pdf3", "png", "jpg", "scanpdf"}
    assert sum("fields" in c["inputs"] for c in cases) == 8  # custom mode cases
    for case in cases:
        assert (Path(case["_base"]) / case["inputs"]["file"]).is_file()


def test_rules_on_two_documents_scored_against_gold(deps: DocumentsDeps) -> None:
    cases = load_cases(DATASET, limit=2)
    outputs = [run_case(c, run_rules, deps, ALICE) for c in cases]
    summary = summarize(cases, outputs)
    assert summary["cases"] == 2 and summary["completion_rate"] == 1.0
    assert (summary["precision"], summary["recall"]) == (
        1.0,
        1.0,
    )  # labelled invoices: the rules' home ground
    assert summary["exact_match_per_field"]["total"] == 1.0
    assert summary["calibration"]["bins"][0]["n"] > 0


def test_short_form_and_bad_lines(tmp_path: Path, deps: DocumentsDeps) -> None:
    src = Path(DATASET).parent / "files" / "invoice-01.pdf"
    (tmp_path / "inv.pdf").write_bytes(src.read_bytes())
    path = tmp_path / "mine.jsonl"
    path.write_text(
        json.dumps(
            {"id": "a", "file": "inv.pdf", "fields": ["total"], "gold": {"total": "€640.97"}}
        )
        + "\n"
    )
    cases = load_cases(path)
    out = run_case(cases[0], run_rules, deps, ALICE)
    assert out["fields"] == {"total": 640.97} and out["scores"]["tp"] == 1
    path.write_text("{not json\n")
    with pytest.raises(InputError, match=r"mine\.jsonl line 1 is not JSON"):
        load_cases(path)
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(InputError, match="No dataset"):
        load_cases(missing)
