"""What the app's faces (CLI, API, demo, evaluation) call: validate HED strings (with a
dataset's definitions), a BIDS sidecar and events file, the vocabulary, annotate one
description (also as a stream of the run's events, and with an image the vision agent
describes first), a CSV batch, or an events file's categorical levels into a sidecar.

A batch goes through the platform's ``run_batch`` (local threads or Ray) and is resumable:
each finished row is stored, as it finishes, with the batch's key (the file's absolute path,
strategy, schema) and its row id, and a re-run skips those rows. A row that fails (bad
description, model error) is reported in the output and retried on the next run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.apps.hed.agent import (
    EVALUATE,
    VALIDATE,
    route_after_evaluation,
    route_after_validation,
)
from casework.apps.hed.batchfile import BatchReport, batch_key, read_batch, write_results
from casework.apps.hed.context import (
    ContextReport,
    Definitions,
    load_definitions,
    read_events,
    read_sidecar,
    sidecar_definitions,
    validate_files,
)
from casework.apps.hed.dataset import load_eval_cases, load_validator_cases
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import (
    DEFAULT_SCHEMA,
    REVIEW_WAITING,
    ROLES,
    HedAnnotationState,
    HedDecision,
    HedInput,
    StoredAnnotation,
    ValidatorKind,
    decision_json,
)
from casework.apps.hed.remediation import augment
from casework.apps.hed.rules import (
    check_description,
    level_description,
)
from casework.apps.hed.sidecar import (
    EventsAnnotation,
    default_sidecar_path,
    drop_repeats,
    levels_to_annotate,
    write_if_valid,
)
from casework.apps.hed.strategies import (
    GRAPH_STRATEGIES,
    STRATEGIES,
    astream_run,
    strategy_state,
)
from casework.apps.hed.validation import Issue, ValidationResult, check_schema, validate_many
from casework.apps.hed.validation import bench_validators as bench_strings
from casework.apps.hed.vision import describe_image
from casework.apps.hed.vocabulary import estimate_tokens, load_vocabulary
from casework.config import Settings
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.registry import strategy_named
from casework.runtime import EndReason, RunConfig
from casework.runtime.batch import BatchConfig, check_batch_config
from casework.runtime.memory import ExampleDraft
from casework.runtime.review_provider import OUTCOME_OF, DecideOutcome, outcome_text

__all__ = [
    "STRATEGIES",
    "BatchTask",
    "VocabularyListing",
    "annotate",
    "annotate_events",
    "annotation_input",
    "annotation_stream",
    "bench_validators",
    "check_batch",
    "check_request",
    "decide_review",
    "load_annotation_model",
    "next_node",
    "read_definitions",
    "remediation_hint",
    "run_batch",
    "settled_outcome",
    "validate_dataset",
    "validate_strings",
    "vocabulary_listing",
]


# ---------------------------------------------------------------------- validation
def validate_strings(
    strings: Sequence[str],
    schema: str = DEFAULT_SCHEMA,
    *,
    validator: ValidatorKind = "auto",
    definitions: Definitions | None = None,
) -> list[ValidationResult]:
    """Validate HED strings with the JS validator (hedtools as the fallback, or as chosen);
    with ``definitions`` (a dataset's), hedtools validates them in that context."""
    strings = list(strings)
    for n, text in enumerate(strings, start=1):
        if not text.strip():
            raise InputError(
                f'HED string {n} is empty; pass a HED string such as "Sensory-event, Red".'
            )
    defs = definitions.strings if definitions is not None else ()
    return validate_many(strings, schema, validator=validator, definitions=defs)


def read_definitions(path: Path, schema: str = DEFAULT_SCHEMA) -> Definitions:
    """The definitions of a file: a JSON sidecar's ``Definition`` entries, or a text / TSV file
    of ``(Definition/Name, (...))`` strings; errors in them are the result's ``issues``."""
    return load_definitions(path, check_schema(schema))


def validate_dataset(
    *,
    sidecar: Path | None = None,
    events: Path | None = None,
    schema: str = DEFAULT_SCHEMA,
    definitions: Path | None = None,
) -> ContextReport:
    """A BIDS sidecar and/or events file validated as hedtools' BIDS validation does, with the
    extra definitions of ``definitions`` (a file) in context."""
    check_schema(schema)
    if sidecar is None and events is None:
        raise InputError(
            "Nothing to validate; pass --sidecar events.json (and --events events.tsv), or "
            "HED strings."
        )
    defs = load_definitions(definitions, schema) if definitions is not None else None
    return validate_files(sidecar=sidecar, events=events, schema=schema, definitions=defs)


def remediation_hint(issue: Issue, schema: str = DEFAULT_SCHEMA) -> str:
    """What the annotation agent is told about one error: its last line names the closest
    valid tags of the schema."""
    return augment(issue, load_vocabulary(schema)).splitlines()[-1].strip()


def bench_validators(schema: str = DEFAULT_SCHEMA, *, repeat: int = 3) -> dict[str, Any]:
    """Speed and agreement of the JS and the Python validator on the project's strings (the
    validator cases and the gold annotations)."""
    strings = [c["hed"] for c in load_validator_cases()]
    strings += [c["expected"]["hed"] for c in load_eval_cases()]
    return bench_strings(strings, schema, repeat=repeat)


@dataclass(frozen=True)
class VocabularyListing:
    tags: dict[str, dict[str, Any]]
    """Every tag: its long form, units, rules."""
    text: str
    """The vocabulary as the annotation prompt carries it."""
    tokens: int
    """About how many tokens ``text`` is."""


def vocabulary_listing(schema: str = DEFAULT_SCHEMA, *, full: bool = False) -> VocabularyListing:
    """The schema's vocabulary as the annotation prompt carries it (compact unless ``full``)."""
    vocab = load_vocabulary(check_schema(schema))
    text = vocab.prompt_text(compact=not full)
    return VocabularyListing(
        tags={name: vars(info) for name, info in sorted(vocab.tags.items())},
        text=text,
        tokens=estimate_tokens(text),
    )


# ---------------------------------------------------------------------- annotation
def check_request(schema: str, strategy: str, description: str | None = None) -> None:
    """Refuse an unknown strategy or schema, and an unusable description, before any deps
    are built."""
    strategy_named(STRATEGIES, strategy)
    check_schema(schema)
    if description is not None:
        check_description(description)


def load_annotation_model(config: RunConfig, strategy: str) -> None:
    """Build the annotation model of ``config`` a graph strategy needs now, so a model that
    cannot be built is one sentence before the run rather than an error mid-run."""
    if strategy in GRAPH_STRATEGIES:
        config.models(ROLES["annotate"])


def annotation_input(
    config: RunConfig,
    description: str,
    *,
    schema: str = DEFAULT_SCHEMA,
    run_assessment: bool = False,
    image: bytes | None = None,
    image_name: str = "the image",
) -> tuple[HedInput, str]:
    """One annotation's input, checked before anything runs: the description, with the
    vision agent's description of ``image`` appended when one is given; and that image
    description ("" without an image)."""
    image_text = ""
    if image is not None:
        image_text = describe_image(image, config, name=image_name)
        description = " ".join(filter(None, [description, image_text]))
    check_description(description)
    check_schema(schema)
    input = HedInput(description=description, schema_version=schema, run_assessment=run_assessment)
    return input, image_text


def next_node(after: str, state: HedAnnotationState) -> str:
    """Where the annotation graph goes from ``state`` after the ``validate`` or ``evaluate``
    node: its own routers decide."""
    if after == VALIDATE:
        return route_after_validation(state)
    if after == EVALUATE:
        return route_after_evaluation(state)
    raise InputError(f"A routing case's 'after' must be validate or evaluate, not {after!r}.")


def annotation_stream(
    input: HedInput, deps: HedDeps, config: RunConfig, strategy: str = "cascade"
) -> AsyncIterator[dict[str, Any]]:
    """One strategy's run as events: for a graph strategy LangGraph's (``model``, ``token``,
    ``step``), then ``complete`` with the ``decision``, stored when the run finished (not when
    a model error cut it short). The strategy and the input are checked before the first
    event."""
    run = strategy_named(STRATEGIES, strategy)
    state = strategy_state(strategy, input, deps) if strategy in GRAPH_STRATEGIES else None

    async def events() -> AsyncIterator[dict[str, Any]]:
        if state is None:  # no graph to stream: the decision is the only event
            decision = await asyncio.to_thread(run, input, deps, config)
            stream: AsyncIterator[dict[str, Any]] = _complete(decision)
        else:
            stream = astream_run(state, deps, config, strategy=strategy)
        async for event in stream:
            if event["type"] == "complete":
                if "result" in event:  # the harness's end: its RunResult carries the decision
                    event = {"type": "complete", "decision": event["result"].decision}
                finished = event["decision"].run.ended_by != EndReason.ERROR_MODEL
                if deps.repo is not None and finished:
                    await asyncio.to_thread(deps.repo.save, event["decision"])
            yield event

    return events()


async def _complete(decision: HedDecision) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "complete", "decision": decision}


def annotate(
    input: HedInput,
    deps: HedDeps,
    config: RunConfig,
    *,
    strategy: str = "cascade",
    batch_key: str | None = None,
    row_id: str | None = None,
) -> HedDecision:
    """Run one strategy under ``config`` and store the finished run (a run cut short by a
    model error is not stored as finished, so a batch retries it)."""
    decision = strategy_named(STRATEGIES, strategy)(input, deps, config)
    if deps.repo is not None and decision.run and decision.run.ended_by != EndReason.ERROR_MODEL:
        deps.repo.save(decision, batch_key=batch_key, row_id=row_id)
    return decision


class BatchTask:
    """``task((row_id, description))`` -> the row's decision: what ``run_batch`` runs.

    It crosses to Ray workers pickled, holding only specs (settings, model names, strategy);
    a worker builds its deps and run config on its first row (without the database: the
    caller's process stores every result as it arrives). Locally it runs on the caller's deps
    and config (``bind``)."""

    def __init__(
        self,
        *,
        settings: Settings,
        strategy: str,
        schema: str,
        assess: bool,
        model: str | None,
        validator: ValidatorKind,
    ) -> None:
        self.settings = settings
        self.strategy = strategy
        self.schema = schema
        self.assess = assess
        self.model = model
        self.validator = validator
        self._deps: HedDeps | None = None
        self._config: RunConfig | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_deps": None, "_config": None}

    def bind(self, deps: HedDeps, config: RunConfig) -> BatchTask:
        self._deps, self._config = deps, config
        return self

    def __call__(self, row: tuple[str, str]) -> HedDecision:
        if self._deps is None:
            from casework.apps.hed.deps import build_deps

            self._deps = build_deps(self.settings, validator=self.validator, with_repo=False)
        if self._config is None:
            self._config = RunConfig.of(self.settings, self.model)
        input = HedInput(description=row[1], schema_version=self.schema, run_assessment=self.assess)
        return strategy_named(STRATEGIES, self.strategy)(input, self._deps, self._config)


def check_batch(path: Path, *, schema: str, strategy: str, config: BatchConfig) -> int:
    """Refuse a batch that cannot run (strategy, schema, executor, a missing file) before any
    deps are built; the number of rows of the file."""
    strategy_named(STRATEGIES, strategy)
    check_schema(schema)
    check_batch_config(config)
    if not path.is_file():
        raise InputError(f"{path} does not exist; pass a CSV file with a 'description' column.")
    return len(read_batch(path))


def run_batch(
    path: Path,
    deps: HedDeps,
    config: RunConfig | None = None,
    *,
    strategy: str = "cascade",
    schema: str = "8.3.0",
    assess: bool = False,
    concurrency: int = 1,
    executor: str = "local",
    address: str | None = None,
    out: Path | None = None,
    on_row: Callable[[str, dict[str, Any]], None] | None = None,
) -> BatchReport:
    """Annotate every row not yet finished under ``config`` (default: the settings' models)
    through the platform's ``run_batch`` (worker threads here, or a Ray cluster, where each
    worker resolves the config's model spec); each result is stored as it arrives, so an interrupted
    batch loses nothing. All rows' results (old and new) go as JSON lines to ``out``, in the
    file's order; a row that failed says why and is retried on the next run."""
    from casework.runtime.batch import BatchResult
    from casework.runtime.batch import run_batch as platform_batch

    if deps.repo is None:
        raise InputError("A batch needs the database to resume from; build deps with a repository.")
    strategy_named(STRATEGIES, strategy)  # refused before any row runs
    run_config = config or RunConfig.of(deps.settings)
    batch = BatchConfig(
        executor=executor, address=address, concurrency=max(1, concurrency), retries=2
    )
    check_batch_config(batch)
    rows = read_batch(path)
    key = batch_key(path, strategy, schema, assess)
    out = out or path.with_suffix(".hed.jsonl")
    report = BatchReport(key=key, out=out, total=len(rows))
    results: dict[str, dict[str, Any]] = dict(deps.repo.finished_rows(key))
    todo = [(rid, text) for rid, text in rows if rid not in results]
    report.skipped = len(rows) - len(todo)

    def finished(item: BatchResult[HedDecision]) -> None:
        rid = item.key
        assert isinstance(rid, str)
        decision = item.value
        if decision is None:
            err = item.error
            data: dict[str, Any] = {"id": rid, "error": str(err) if err else "not run"}
            if err is not None and not isinstance(err, CaseworkError):
                data["error"] = f"{type(err).__name__}: {err}"
        else:
            data = decision_json(decision)
            if decision.run and decision.run.ended_by == EndReason.ERROR_MODEL:
                data["error"] = decision.run.detail
            else:  # a run cut short by a model error is not stored as finished: retried next time
                deps.repo.save(decision, batch_key=key, row_id=rid)
        results[rid] = data
        if "error" in data:
            report.failed += 1
        else:
            report.done += 1
        if on_row is not None:
            on_row(rid, data)

    batch.progress = finished
    task = BatchTask(
        settings=deps.settings,
        strategy=strategy,
        schema=schema,
        assess=assess,
        model=run_config.models.override,
        validator=deps.validator,
    )
    if executor == "local":
        task.bind(deps, run_config)
    try:  # an interrupted batch keeps what finished: stored, and written out
        platform_batch(todo, task, batch, key=lambda row: row[0])
    finally:
        write_results(out, rows, results, report)
    return report


# ---------------------------------------------------------------------- events -> sidecar
def check_events_annotation(
    events: Path, *, out: Path | None, sidecar: Path | None, schema: str, strategy: str
) -> Path:
    """Refuse what cannot run before any model loads; the output path."""
    strategy_named(STRATEGIES, strategy)
    check_schema(schema)
    read_events(events)
    if sidecar is not None:
        read_sidecar(sidecar)
    target = out or default_sidecar_path(events)
    if out is None and target.exists():
        raise InputError(
            f"{target} exists; pass --out to name the sidecar to write (it may be that file)."
        )
    return target


def annotate_events(
    events: Path,
    deps: HedDeps,
    config: RunConfig,
    *,
    sidecar: Path | None = None,
    schema: str = DEFAULT_SCHEMA,
    strategy: str = "cascade",
    out: Path | None = None,
    on_level: Callable[[dict[str, Any]], None] | None = None,
) -> EventsAnnotation:
    """Write a sidecar's HED for the categorical levels of ``events``: each level's
    description (the sidecar's, else its name in words) annotated by ``strategy``, with the
    sidecar's definitions in context (the annotation may use their ``Def/`` names and
    ``Onset``/``Offset``); HED the sidecar already has is kept, and an item a row would repeat
    from an earlier column is taken out (``rules.drop_repeats_across_columns``). The whole
    sidecar is validated
    with the events file (hedtools' BIDS validation) and written to ``out`` only when valid,
    whole, then renamed: nothing is written otherwise."""
    check_schema(schema)
    header, rows = read_events(events)
    base = read_sidecar(sidecar) if sidecar is not None else {}
    name = (out or default_sidecar_path(events)).name
    defs = sidecar_definitions(base, name, schema)
    found = levels_to_annotate(events, header, rows, base)
    result = json.loads(json.dumps(base))  # a copy: the user's sidecar is not changed
    hed: dict[str, dict[str, str]] = {}
    kept: set[tuple[str, str]] = set()
    annotated: list[dict[str, Any]] = []
    for column, values in found.items():
        entry = result.setdefault(column, {})
        entry.setdefault("Description", column.replace("_", " "))
        levels = entry.setdefault("Levels", {})
        existing = entry.get("HED") if isinstance(entry.get("HED"), dict) else {}
        hed[column] = {}
        for value in values:
            description = level_description(column, value, base)
            levels.setdefault(value, description)
            item: dict[str, Any] = {"column": column, "level": value, "description": description}
            if isinstance(existing.get(value), str) and existing[value].strip():
                kept.add((column, value))
                item |= {"hed": existing[value], "decided_by": "sidecar (kept)", "valid": True}
            else:
                input = HedInput(
                    description=description,
                    schema_version=schema,
                    definitions=list(defs.strings) if defs else [],
                )
                item |= _annotate_level(input, deps, config, strategy)
            hed[column][value] = item["hed"]
            annotated.append(item)
            if on_level is not None:
                on_level(item)
    drop_repeats(header, rows, base, result, hed, kept, annotated)
    report = validate_files(sidecar=result, events=events, schema=schema, sidecar_name=name)
    written = write_if_valid(result, report, out or default_sidecar_path(events))
    return EventsAnnotation(sidecar=result, report=report, levels=annotated, out=written)


def _annotate_level(
    input: HedInput, deps: HedDeps, config: RunConfig, strategy: str
) -> dict[str, Any]:
    """One level's HED by ``strategy`` (empty when not valid) and who decided it."""
    decision = annotate(input, deps, config, strategy=strategy)
    run = decision.run
    valid = bool(decision.annotation) and decision.is_valid
    return {
        "hed": decision.annotation if valid else "",
        "decided_by": (run.decided_by or run.strategy) if run else strategy,
        "valid": valid,
    }


# ---------------------------------------------------------------------- review
def decide_review(
    deps: HedDeps, annotation_id: int, action: str, *, edit: str | None, note: str, actor: str
) -> DecideOutcome:
    """Settle a stored annotation waiting for a person, once: accept the draft (only a valid
    one), correct it (the correction is validated against the run's schema first: an invalid
    one is refused with its errors and nothing changes) or reject it."""
    stored = deps.repo.annotation(annotation_id)
    if stored is None or stored.review_status is None:
        raise NotFoundError(f"No hed review item {annotation_id}; open one from the inbox.")
    if stored.review_status != REVIEW_WAITING:
        return settled_outcome(stored)
    if action not in OUTCOME_OF:
        raise InputError(f"Unknown action {action!r}; use approve, edit or reject.")
    corrected = None
    if action == "approve" and not stored.result.get("is_valid"):
        raise InputError("The draft annotation is not valid HED; correct it, or reject it.")
    if action == "edit":
        corrected = (edit or "").strip()
        if not corrected:
            raise InputError("Write the corrected HED annotation, or reject the item.")
        checked = validate_strings([corrected], stored.schema_version, validator=deps.validator)
        if not checked[0].valid:
            errors = "; ".join(f"{i.code}: {i.message}" for i in checked[0].errors[:3])
            raise InputError(f"The correction is not valid HED {stored.schema_version}: {errors}.")
    outcome = OUTCOME_OF[action]
    applied = deps.repo.settle_review(
        annotation_id, outcome=outcome, corrected=corrected, decided_by=actor, note=note
    )
    again = deps.repo.annotation(annotation_id)
    if not applied and again is not None:
        return settled_outcome(again)
    verified = corrected or (stored.annotation if outcome == "accepted" else None)
    return DecideOutcome(
        applied=True,
        outcome=outcome_text(outcome, corrected),
        decided_by=actor,
        decided_at=again.decided_at if again is not None else None,
        example=None
        if verified is None
        else ExampleDraft(
            inputs={"description": stored.description, "schema_version": stored.schema_version},
            answer={"hed": verified},
            run_id=stored.run_id or None,
        ),
    )


def settled_outcome(stored: StoredAnnotation) -> DecideOutcome:
    """Who settled a decided item, and how (a repeat changes nothing)."""
    return DecideOutcome(
        applied=False,
        outcome=outcome_text(stored.review_outcome, stored.corrected_annotation),
        decided_by=stored.decided_by or "",
        decided_at=stored.decided_at,
    )
