"""The documents app's strategies, ``run(input, deps, config)``: ``rules`` (no model), ``fields``
(the rules, then the bundled model for the fields they are not sure of: ``fields.py``),
``agent`` (the ReAct extraction agent) and ``cascade`` (the default): the rules when their
calibrated confidence is high enough, else ``fields``, else, with a remote model configured
(``--model``), the agent on it. The layers of one run write the same extraction row; the
layer that decides writes last (under ``--all-layers`` the row holds the last layer's)."""

from __future__ import annotations

from typing import Any

from casework.apps.documents import extractor
from casework.apps.documents.agent import decision_for, run_extraction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.fields import (
    CONF_GROUNDED,
    CONF_UNGROUNDED,
    ask_fields,
    document_type,
    grounded,
    stored_readings,
)
from casework.apps.documents.models import ROLES, ExtractionDecision, ExtractionInput
from casework.errors import InputError, ModelError, NotFoundError
from casework.llm.roles import LOCAL_ROLE
from casework.runtime.cascade import Cascade, Layer
from casework.runtime.decision import EndReason, RunInfo
from casework.runtime.runconfig import RunConfig
from casework.runtime.strategy import Strategy
from casework.runtime.usage import Usage

__all__ = ["STRATEGIES", "cascade", "run_agent", "run_fields", "run_rules"]


def run_rules(input: ExtractionInput, deps: DocumentsDeps, config: RunConfig) -> ExtractionDecision:
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
    decision = decision_for(
        deps, input.user_id, ext_id, RunInfo(ended_by=EndReason.RULES, strategy="rules")
    )
    # the extraction's confidence is how much of it the rules found, not the mean of their
    # fixed per-field confidences (those stay on each field)
    coverage = extractor.coverage_confidence(found[0], fields, input.fields)
    return decision.model_copy(update={"confidence": round(coverage * 100, 1)})


def run_agent(input: ExtractionInput, deps: DocumentsDeps, config: RunConfig) -> ExtractionDecision:
    return run_extraction(input, deps, config)


def _text_of(input: ExtractionInput, deps: DocumentsDeps) -> str:
    found = deps.repo.document_text(input.user_id, input.document_id)
    if found is None:
        raise NotFoundError(f"No document {input.document_id}.")
    return found[0]


def run_fields(
    input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
) -> ExtractionDecision:
    """The rules' labelled values, and the bundled model's reading for every other field of
    the document's type (auto mode) or of the request (custom mode)."""
    repo = deps.repo
    ext_id = (
        input.extraction_id
        or repo.create_extraction(input.user_id, input.document_id, requested=input.fields).id
    )
    text = _text_of(input, deps)
    fields, confidences = extractor.extract(text, input.fields)
    model = config.models(LOCAL_ROLE)
    kind = extractor.classify(text)
    typing = not input.fields and kind == "document"  # auto mode, no cue word: ask the model

    readings = stored_readings(deps.settings.home)

    def unsure() -> list[str]:
        """The fields the rules are not sure of and the model reads well enough."""
        wanted = extractor.wanted_fields(text, input.fields, kind)
        return [
            n
            for n in wanted
            if confidences.get(n, 0.0) < extractor.CONF_LABELLED and readings.trusted(n)
        ]

    asked = unsure()
    run = config.run(
        "documents_fields",
        LOCAL_ROLE if typing or asked else None,
        strategy="fields",
        payload={"extraction_id": ext_id, "asked": asked},
    )
    ended_by, detail = EndReason.SUBMIT, ""
    values: dict[str, Any] = {}
    try:
        if typing:  # the type says which fields to read
            kind, typed = document_type(model, text)
            if typed is not None:
                run.count(typed)  # scored outside LangChain, like the fields call
            asked = unsure()
        if asked:
            values, usage = ask_fields(model, text, asked)
            run.count(usage)  # measured by the call: the bundled model decodes outside LangChain
    except ModelError as exc:  # the rules' values stand; the decision says why
        run.count(Usage(model_calls=1))
        ended_by, detail = EndReason.ERROR_MODEL, str(exc)
    for name, value in values.items():
        if value is None:
            continue  # the model saw nothing: a rules guess (if any) stands
        fields[name] = value
        confidences[name] = CONF_GROUNDED if grounded(value, text) else CONF_UNGROUNDED
    if not input.fields:
        fields["document_type"] = kind
    if any(v is not None for k, v in fields.items() if k != "document_type"):
        repo.set_fields(input.user_id, ext_id, fields, confidences, method="fields")
        repo.set_document_type(input.user_id, ext_id, kind)
        repo.complete(input.user_id, ext_id)
    else:
        repo.set_fields(input.user_id, ext_id, {}, {}, method="fields")
        repo.fail(input.user_id, ext_id, "Neither the rules nor the model found a field.")
    decision = decision_for(deps, input.user_id, ext_id)
    run.end(decision, ended_by, detail)  # fills decision.run
    return decision


# -- the cascade -------------------------------------------------------------------------

RULES_THRESHOLD = 80.0
"""Until a policy is fitted: the rules decide when their mean field confidence is 0.8 (every
value found after its own label)."""
FIELDS_THRESHOLD = 60.0


def _review(last: ExtractionDecision, said: str, outcomes: list[Any]) -> ExtractionDecision:
    """No layer was sure: the last layer's extraction stands, marked for review."""
    note = f" No layer was sure ({said}); a person should check it."
    return last.model_copy(update={"reasoning": (last.reasoning + note)[:1200]})


def _no_extraction(said: str, outcomes: list[Any]) -> ExtractionDecision:
    raise InputError(f"No layer could extract the document: {said}.")


_layered: Cascade[ExtractionDecision] = Cascade(
    "documents",
    [
        Layer("rules", run_rules, default_threshold=RULES_THRESHOLD),
        Layer("fields", run_fields, default_threshold=FIELDS_THRESHOLD),
        Layer("agent", run_agent, default_threshold=FIELDS_THRESHOLD, remote=True),
    ],
    decision=ExtractionDecision,
    role=ROLES["agent"],
    review=_review,
    no_answer=_no_extraction,
    undecided_verdicts=frozenset({"failed"}),
)


class _OneRow:
    """The cascade on one extraction row: made before the first layer runs, so every layer
    writes the same row (the API makes it first anyway)."""

    def __init__(self, inner: Cascade[ExtractionDecision]) -> None:
        self.inner = inner
        self.__name__ = inner.name

    def __call__(
        self, input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
    ) -> ExtractionDecision:
        if input.extraction_id is None:
            row = deps.repo.create_extraction(
                input.user_id, input.document_id, requested=input.fields
            )
            input = input.model_copy(update={"extraction_id": row.id})
        return self.inner(input, deps, config)

    def exploring(self) -> _OneRow:
        return _OneRow(self.inner.exploring())


cascade = _OneRow(_layered)


STRATEGIES: dict[str, Strategy[ExtractionInput, DocumentsDeps]] = {
    "rules": run_rules,
    "fields": run_fields,
    "agent": run_agent,
    "cascade": cascade,
}
