"""The documents app's strategies: ``rules`` (no model) and ``agent``; ``run(input, deps)``."""

from __future__ import annotations

from casework.apps.documents import extractor
from casework.apps.documents.agent import decision_for, run_extraction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ExtractionDecision, ExtractionInput
from casework.errors import NotFoundError
from casework.runtime.decision import EndReason, RunInfo
from casework.runtime.strategy import Strategy

__all__ = ["STRATEGIES", "run_agent", "run_rules"]


def run_rules(input: ExtractionInput, deps: DocumentsDeps) -> ExtractionDecision:
    """The rules extractor writes the extraction; completed when it found a field, else failed."""
    repo = deps.repo
    ext_id = (
        input.extraction_id
        or repo.create_extraction(input.user_id, input.document_id, requested=input.fields).id
    )
    found = repo.document_text(input.user_id, input.document_id)
    if found is None:
        raise NotFoundError(f"No document {input.document_id}.")
    fields, confidences = extractor.extract(found[0], input.fields)
    if any(v is not None for k, v in fields.items() if k != "document_type"):
        repo.set_fields(input.user_id, ext_id, fields, confidences, method="rules")
        repo.set_document_type(input.user_id, ext_id, extractor.classify(found[0]))
        repo.complete(input.user_id, ext_id)
    else:
        repo.set_fields(input.user_id, ext_id, {}, {}, method="rules")
        repo.fail(input.user_id, ext_id, "The rules extractor found no labelled field in the text.")
    return decision_for(
        deps, input.user_id, ext_id, RunInfo(ended_by=EndReason.RULES, strategy="rules")
    )


def run_agent(input: ExtractionInput, deps: DocumentsDeps) -> ExtractionDecision:
    return run_extraction(input, deps)


STRATEGIES: dict[str, Strategy[ExtractionInput, DocumentsDeps]] = {
    "rules": run_rules,
    "agent": run_agent,
}
