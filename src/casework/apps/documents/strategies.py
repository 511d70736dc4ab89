"""The documents app's strategies, ``run(input, deps, config)``: ``memory`` (the fields read
where a verified extraction of the same vendor found them: ``memory.py``), ``rules`` (no
model), ``fields`` (the rules, then the bundled model for the fields they are not sure of:
``fields.py``, shown the most similar verified documents first), ``agent`` (the ReAct
extraction agent) and ``cascade`` (the default): the memory when it is sure, else the rules
when their calibrated confidence is high enough, else ``fields``, else, with a remote model
configured (``--model``), the agent on it. The layers of one run write the same extraction row; the
layer that decides writes last (under ``--all-layers`` the row holds the last layer's).

In the cascade the rules and the field layer are as sure as the vendor is known
(``_familiar``): once the caller has verified documents, one far from all of them (a vendor no
person has checked yet) keeps only part of its confidence and reaches a person, whose answer
is the example the memory reads that vendor's next documents by. Both layers also take what
the memory is sure of, and a known vendor's name or address in its verified spelling when the
rules read it with an OCR slip (``memory.respelled``)."""

from __future__ import annotations

from typing import Any

from casework.apps.documents import extractor
from casework.apps.documents.agent import decision_for, run_extraction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.examples import document_key
from casework.apps.documents.fields import (
    CONF_GROUNDED,
    CONF_UNGROUNDED,
    ask_fields,
    document_type,
    grounded,
    stored_readings,
)
from casework.apps.documents.memory import (
    DEMO_SIMILARITY,
    DEMONSTRATIONS,
    FieldRecall,
    ask_fields_shown,
    per_document,
    recall_fields,
    respelled,
    sure_fields,
)
from casework.apps.documents.models import ROLES, ExtractionDecision, ExtractionInput
from casework.apps.documents.normalize import as_amount, date_candidates, values_match
from casework.errors import InputError, ModelError, NotFoundError
from casework.llm.roles import LOCAL_ROLE
from casework.runtime.cascade import Cascade, Layer
from casework.runtime.decision import EndReason, RunInfo
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import (
    Demonstration,
    demonstration_evidence,
    demonstrations,
    memory_evidence,
    nearest_similarity,
    novelty_confidence,
)
from casework.runtime.runconfig import RunConfig
from casework.runtime.strategy import Strategy
from casework.runtime.usage import Usage

__all__ = [
    "STRATEGIES",
    "cascade",
    "documents_memory",
    "run_agent",
    "run_fields",
    "run_memory",
    "run_rules",
]


def documents_memory(deps: DocumentsDeps, config: RunConfig) -> Memory:
    """The verified extractions in the deps' store (an evaluation's own store in an
    evaluation), as the run's caller sees them."""
    from casework.stores import open_stores

    return Memory(open_stores(deps.settings).engine, "documents", config.caller)


def _row(input: ExtractionInput, deps: DocumentsDeps) -> int:
    """The extraction the layer writes: the request's (a cascade's), else a new one."""
    return (
        input.extraction_id
        or deps.repo.create_extraction(input.user_id, input.document_id, requested=input.fields).id
    )


def run_memory(
    input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
) -> ExtractionDecision:
    """The fields read where the nearest verified extractions found theirs (``memory.py``);
    its confidence is its least sure field's. With no example yet it reads nothing and
    computes no embedding."""
    repo = deps.repo
    ext_id = _row(input, deps)
    text = _text_of(input, deps)
    found = _recall(documents_memory(deps, config), text, input.fields)
    if found is None:
        said = "No verified example yet."
    elif not found.used:
        near = f" (the nearest at {found.nearest:.2f})" if found.nearest is not None else ""
        said = f"No verified example of this vendor reads its fields{near}."
    else:
        unread = sorted(n for n, v in found.values.items() if v is None)
        ids = ", ".join(str(e.id) for e, _ in found.used)
        said = (
            f"Read from {len(found.used)} verified example(s) ({ids}); the nearest at "
            f"similarity {found.used[0][1]:.2f}"
            + (f"; not read: {', '.join(unread)}" if unread else "")
            + "."
        )
    fields = {n: v for n, v in (found.values if found else {}).items() if v is not None}
    if fields:
        confidences = {n: round(found.confidences[n] / 100, 3) for n in fields} if found else {}
        kind = extractor.classify(text)
        if not input.fields:
            fields["document_type"] = kind
        repo.set_fields(input.user_id, ext_id, fields, confidences, method="memory")
        repo.set_document_type(input.user_id, ext_id, kind)
        repo.complete(input.user_id, ext_id)
    else:
        repo.set_fields(input.user_id, ext_id, {}, {}, method="memory")
        repo.fail(input.user_id, ext_id, said)
    decision = decision_for(
        deps, input.user_id, ext_id, RunInfo(ended_by=EndReason.RULES, strategy="memory")
    )
    decision = decision.model_copy(
        update={"confidence": found.confidence if found else 0.0, "reasoning": said}
    )
    if found:
        decision.evidence = [*memory_evidence(found.used), *decision.evidence]
    return decision


def run_rules(input: ExtractionInput, deps: DocumentsDeps, config: RunConfig) -> ExtractionDecision:
    """The rules extractor writes the extraction; completed when it found a field, else failed."""
    return _rules(input, deps, None)


def _rules(
    input: ExtractionInput, deps: DocumentsDeps, found: FieldRecall | None
) -> ExtractionDecision:
    """The rules' extraction, with the fields the memory is sure of (``found``, in a cascade)
    written over theirs: a known vendor's name as a person verified it, not as OCR misread it."""
    repo = deps.repo
    ext_id = _row(input, deps)
    text = _text_of(input, deps)
    fields, confidences = extractor.extract(text, input.fields)
    known = _take_known(found, fields, confidences)
    if any(v is not None for k, v in fields.items() if k != "document_type"):
        repo.set_fields(input.user_id, ext_id, fields, confidences, method="rules")
        repo.set_document_type(input.user_id, ext_id, extractor.classify(text))
        repo.complete(input.user_id, ext_id)
    else:
        repo.set_fields(input.user_id, ext_id, {}, {}, method="rules")
        repo.fail(input.user_id, ext_id, "The rules extractor found no labelled field in the text.")
    decision = decision_for(
        deps, input.user_id, ext_id, RunInfo(ended_by=EndReason.RULES, strategy="rules")
    )
    if found is not None and known:
        decision.evidence = [*memory_evidence(found.used), *decision.evidence]
    # the extraction's confidence is how much of it the rules found, not the mean of their
    # fixed per-field confidences (those stay on each field)
    coverage = extractor.coverage_confidence(text, fields, input.fields)
    return decision.model_copy(update={"confidence": round(coverage * 100, 1)})


def run_agent(input: ExtractionInput, deps: DocumentsDeps, config: RunConfig) -> ExtractionDecision:
    return run_extraction(input, deps, config)


def _recall(memory: Memory, text: str, requested: list[str] | None) -> FieldRecall | None:
    """What the memory reads of the document; None with no example yet (no embedding). A
    per-document field the memory read at its anchor that the rules find after its own label
    as another value is not sure (confidence 0): the anchor landed on another number, an
    item's price or a rounding line, where the label names the field on this document."""
    if memory.count() == 0:
        return None
    found = recall_fields(memory, text, document_key(text), requested)
    labelled, sure = extractor.extract(text, requested)
    for name, value in found.values.items():
        if value is None or not per_document(name):
            continue
        ruled = labelled.get(name)
        disagrees = (
            ruled is not None
            and sure.get(name, 0.0) >= extractor.CONF_LABELLED
            and not values_match(ruled, value)
        )
        if disagrees or not _of_its_kind(name, value):
            found.confidences[name] = 0.0
    return found


def _of_its_kind(name: str, value: str) -> bool:
    """Whether a value the memory read at its anchor is a date where a date is asked and an
    amount where an amount is: a shape match can land on a receipt number (``3-1708032``)."""
    low = name.lower()
    if "date" in low:
        return bool(date_candidates(value))
    if any(word in low for word in ("total", "amount", "tax")) and "rate" not in low:
        return as_amount(value) is not None
    return True


def _text_of(input: ExtractionInput, deps: DocumentsDeps) -> str:
    found = deps.repo.document_text(input.user_id, input.document_id)
    if found is None:
        raise NotFoundError(f"No document {input.document_id}.")
    return found[0]


def _take_known(
    found: FieldRecall | None, fields: dict[str, Any], confidences: dict[str, float]
) -> dict[str, str]:
    """The fields the memory is sure of (issue 32), written over the rules' ``fields`` and
    ``confidences``: one unsure field kept the memory layer from deciding the document, which
    is no reason to pay the model for the others."""
    if found is None:
        return {}
    known = sure_fields(found, MEMORY_THRESHOLD)
    for name, value in known.items():
        fields[name] = value
        confidences[name] = round(found.confidences[name] / 100, 3)
    # a vendor's name or address the rules read with an OCR slip: the verified spelling, at
    # the rules' own confidence (they found it; the memory only spells it)
    spelled = respelled(found, fields)
    fields.update(spelled)
    return {**spelled, **known}


def run_fields(
    input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
) -> ExtractionDecision:
    """The rules' labelled values, and the bundled model's reading for every other field of
    the document's type (auto mode) or of the request (custom mode)."""
    repo = deps.repo
    ext_id = _row(input, deps)
    text = _text_of(input, deps)
    fields, confidences = extractor.extract(text, input.fields)
    memory = documents_memory(deps, config)
    found = _recall(memory, text, input.fields)
    known = _take_known(found, fields, confidences)
    # auto mode, a known vendor: read for the fields a person verified on its documents (as
    # the memory layer reads it), not for every field of the type
    verified = list(found.values) if found is not None and not input.fields else []
    model = config.models(LOCAL_ROLE)
    kind = extractor.classify(text)
    typing = not input.fields and kind == "document"  # auto mode, no cue word: ask the model

    readings = stored_readings(deps.settings.home)

    def unsure() -> list[str]:
        """The fields neither the memory nor the rules are sure of, the model reads well."""
        wanted = verified or extractor.wanted_fields(text, input.fields, kind)
        return [
            n
            for n in wanted
            if n not in known
            and confidences.get(n, 0.0) < extractor.CONF_LABELLED
            and readings.trusted(n)
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
    shown: list[Demonstration] = []
    try:
        if typing:  # the type says which fields to read
            kind, typed = document_type(model, text)
            if typed is not None:
                run.count(typed)  # scored outside LangChain, like the fields call
            asked = unsure()
        if asked:
            # the most similar verified documents of the same vendor (kNN demonstrations)
            nearest = demonstrations(memory, document_key(text), DEMONSTRATIONS)
            shown = [d for d in nearest if d.similarity >= DEMO_SIMILARITY]
            values, usage = (
                ask_fields_shown(model, text, asked, shown)
                if shown
                else ask_fields(model, text, asked)
            )
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
    read_from = memory_evidence(found.used) if found is not None and known else []
    decision.evidence = [*read_from, *demonstration_evidence(shown), *decision.evidence]
    run.end(decision, ended_by, detail)  # fills decision.run
    return decision


# -- the cascade -------------------------------------------------------------------------

MEMORY_THRESHOLD = 75.0
"""Until a policy is fitted: on 40 SROIE receipts of 8 vendors (``--learn``, README), the
memory's readings at confidence 75 or more had 45 of 48 gold fields right where the rules,
the next layer, had 41 (at 90: 3 receipts, 12 of 12 both); the runtime's 90 is for answers
that are one label, not four fields read off a scan."""
RULES_THRESHOLD = 80.0
"""Until a policy is fitted: the rules decide when their mean field confidence is 0.8 (every
value found after its own label)."""
FIELDS_THRESHOLD = 60.0


NOVELTY_NEAR = 0.85
"""A document whose nearest verified one is this similar keeps its layer's confidence: about
the 90th percentile of the nearest of 20 other vendors' receipts (0.84). MiniLM finds all
receipts alike, so the runtime's 0.75 does not tell a known vendor from a new one: on 298
SROIE training receipts (``train-dev`` less stream 3's), the nearest receipt of the same
vendor is at 0.82 / 0.89 / 0.95 (10th / 25th / 50th percentile), the nearest of 20 receipts
of other vendors at 0.68 / 0.78 / 0.84 (10th / 50th / 90th)."""
NOVELTY_FAR = 0.75
"""At or below this (about the median nearest of 20 other vendors) a document is from a
vendor no verified example shows: its layer keeps ``NOVELTY_FLOOR`` of its confidence."""


def _familiar(
    decided: ExtractionDecision,
    input: ExtractionInput,
    deps: DocumentsDeps,
    config: RunConfig,
    nearest: float | None,
) -> ExtractionDecision:
    """A layer's extraction, less sure when the caller has verified documents and none is of
    this one's vendor (``novelty_confidence`` of ``nearest``, the nearest verified document's
    similarity, with documents' own near and far): a new vendor's first documents reach a
    person and become the examples the memory reads its later ones by. Without any verified
    document (``nearest`` None) the confidence is as it was."""
    scaled = novelty_confidence(decided.confidence, nearest, near=NOVELTY_NEAR, far=NOVELTY_FAR)
    if nearest is None or scaled == decided.confidence:
        return decided
    said = (
        f" Confidence {decided.confidence:g} -> {scaled:g}: the nearest verified document is at"
        f" similarity {nearest:.2f}, not yet a vendor a person has checked."
    )
    return decided.model_copy(
        update={"confidence": scaled, "reasoning": (decided.reasoning + said)[:1200]}
    )


def _rules_layer(
    input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
) -> ExtractionDecision:
    """The cascade's rules: the memory's sure fields over theirs, as sure as the vendor is
    known."""
    found = _recall(documents_memory(deps, config), _text_of(input, deps), input.fields)
    nearest = found.nearest if found is not None else None
    return _familiar(_rules(input, deps, found), input, deps, config, nearest)


def _fields_layer(
    input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
) -> ExtractionDecision:
    """The cascade's field layer, as sure as the vendor is known."""
    memory = documents_memory(deps, config)
    nearest = nearest_similarity(memory, document_key(_text_of(input, deps)))
    return _familiar(run_fields(input, deps, config), input, deps, config, nearest)


def _review(last: ExtractionDecision, said: str, outcomes: list[Any]) -> ExtractionDecision:
    """No layer was sure: the last layer's extraction stands, marked for review."""
    note = f" No layer was sure ({said}); a person should check it."
    return last.model_copy(update={"reasoning": (last.reasoning + note)[:1200]})


def _no_extraction(said: str, outcomes: list[Any]) -> ExtractionDecision:
    raise InputError(f"No layer could extract the document: {said}.")


_layered: Cascade[ExtractionDecision] = Cascade(
    "documents",
    [
        Layer("memory", run_memory, default_threshold=MEMORY_THRESHOLD),
        Layer("rules", _rules_layer, default_threshold=RULES_THRESHOLD),
        Layer("fields", _fields_layer, default_threshold=FIELDS_THRESHOLD),
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

# The cascade without a model (the memory, then the rules; nobody sure: a person): what
# learning from review does when no model is at hand.
memory_rules = _OneRow(
    Cascade(
        "documents",
        [
            Layer("memory", run_memory, default_threshold=MEMORY_THRESHOLD),
            Layer("rules", _rules_layer, default_threshold=RULES_THRESHOLD),
        ],
        decision=ExtractionDecision,
        review=_review,
        no_answer=_no_extraction,
        undecided_verdicts=frozenset({"failed"}),
        name="memory-rules",
    )
)


STRATEGIES: dict[str, Strategy[ExtractionInput, DocumentsDeps]] = {
    "memory": run_memory,
    "rules": run_rules,
    "fields": run_fields,
    "agent": run_agent,
    "cascade": cascade,
    "memory-rules": memory_rules,
}
