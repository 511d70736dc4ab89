"""One extraction end to end with the bundled local model (slow: a few minutes on 2 shared cores)."""

from __future__ import annotations

import pytest
from docs_fixtures import ALICE, on, text_read

from casework.apps.documents.agent import run_extraction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ExtractionInput

EASY = "RECEIPT\nBlue Heron Bakery\nDate: 2024-03-12\nSourdough loaf 4.50\nTOTAL 4.50\n"


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_extracts_an_easy_receipt(deps: DocumentsDeps) -> None:
    pytest.importorskip("xllamacpp")
    from casework.llm import resolve_model

    doc = deps.repo.add_document(ALICE, filename="receipt.pdf", data=b"%PDF", read=text_read(EASY))
    events: list[dict] = []
    decision = run_extraction(
        ExtractionInput(document_id=doc.id, user_id=ALICE, fields=["company", "total"]),
        deps,
        on(resolve_model("local:qwen2.5-coder-1.5b", settings=deps.settings), events=events.append),
    )
    ext = deps.repo.get_extraction(ALICE, decision.extraction_id)
    assert ext.status == "completed", ext.reason  # always a final state; here completed
    assert decision.run is not None and decision.run.usage.model_calls >= 2
    assert events and events[0] == {"tool": "get_document_text", "input": {}}
    assert ext.method == "agent", (ext.method, ext.reason)  # the model's own fields, no fallback
    assert set(ext.fields) == {"company", "total"}
    assert float(ext.fields["total"]) == 4.5
