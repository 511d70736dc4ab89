"""The graph's steps: annotation, validation, evaluation, assessment and feedback agents.

Validation, the vocabulary check and the closest-match suggestions are deterministic code;
the model writes the annotation, judges faithfulness and completeness, and condenses
feedback. Each step takes the state and the deps and returns the state update.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from casework.apps.hed.baseline import lookup_annotation
from casework.apps.hed.grammar import annotation_grammar
from casework.apps.hed.models import (
    ROLES,
    AssessmentVerdict,
    FaithfulnessVerdict,
    HedAnnotationState,
)
from casework.apps.hed.remediation import augment_all, closest_tags
from casework.apps.hed.rules import HED_RULES, clean_annotation, defined_names, flatten_tags
from casework.apps.hed.shortprompt import entries_text, prompt_tags
from casework.apps.hed.validation import Issue, ValidationResult, validate_many
from casework.apps.hed.vocabulary import load_vocabulary
from casework.llm.local import is_local_model
from casework.runtime.prompts import load_prompt
from casework.runtime.runconfig import RunConfig

__all__ = [
    "MAX_FEEDBACK_CHARS",
    "annotate",
    "assess",
    "evaluate",
    "portability_warnings",
    "summarize_feedback",
    "validate",
]

MAX_FEEDBACK_CHARS = 1500
"""The summarised feedback passed to the next annotation attempt is cut here."""
SUMMARY_MAX_TOKENS = 200
"""Bound on the summariser's answer."""
_KEEP_VERBATIM = ("  Closest valid tags", "  Allowed units")

if TYPE_CHECKING:
    from casework.apps.hed.deps import HedDeps


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content or "")


@cache
def _system_text(schema: str, compact: bool) -> str:
    vocabulary = load_vocabulary(schema).prompt_text(compact=compact)
    return load_prompt(
        __package__, "system", schema_version=schema, rules=HED_RULES, vocabulary=vocabulary
    )


@cache
def _short_system_text(schema: str) -> str:
    return load_prompt(__package__, "system_short", schema_version=schema, rules=HED_RULES)


def _entries(state: HedAnnotationState, deps: HedDeps) -> str:
    """The short prompt's schema entries for the case and its demonstrations (``''`` for the
    whole-vocabulary prompt)."""
    if not deps.short_prompt:
        return ""
    vocab = load_vocabulary(state["schema_version"])
    shown = [hed for _, hed in deps.demonstrations]
    tags = prompt_tags(state["input_description"], shown, vocab)
    return (
        "\nSchema entries this event and its examples point to (the likely ones; any schema "
        f"tag may be used):\n{entries_text(tags, vocab)}\n"
    )


def _system(state: HedAnnotationState, deps: HedDeps) -> SystemMessage:
    """One system turn for every agent: HED rules + vocabulary. Sharing it lets a local
    model's prompt cache keep the long prefix across annotate, evaluate and summarise calls
    instead of re-reading ~3,800 tokens each time. The short prompt's system turn is the rules
    alone (the same for every case, so a warm start restores it); its schema entries go in
    the task."""
    if deps.short_prompt:
        return SystemMessage(_short_system_text(state["schema_version"]))
    return SystemMessage(_system_text(state["schema_version"], deps.compact_vocabulary))


def annotate(state: HedAnnotationState, deps: HedDeps, config: RunConfig) -> dict[str, Any]:
    """The annotation agent: HED rules + short-form vocabulary + prior feedback -> a string."""
    feedback = state.get("feedback", "")
    if feedback:
        feedback = (
            f"Your previous answer was: {state.get('current_annotation', '')}\nFix it:\n{feedback}"
        )
    model = config.models(ROLES["annotate"])
    draft = ""
    if deps.draft and not feedback:
        found = lookup_annotation(
            state["input_description"], load_vocabulary(state["schema_version"])
        )
        draft = f"A word look-up found: {found}\nKeep the tags that fit, group them, add what is missing.\n"
    names = defined_names(state.get("definitions", []))
    task = load_prompt(
        __package__,
        "annotate_task",
        entries=_entries(state, deps),
        examples=_examples_text(deps.demonstrations),
        description=state["input_description"],
        feedback=feedback,
        draft=draft,
        definitions=_definitions_note(names),
    )
    # The bundled model writes under the schema's grammar: only tags that exist, and Def/
    # only for the names the sidecar defines.
    annotator: Any = model
    if deps.grammar and is_local_model(model):
        annotator = model.bind(grammar=annotation_grammar(state["schema_version"], names))
    reply = annotator.invoke([_system(state, deps), HumanMessage(task)])
    annotation = clean_annotation(_text(reply.content))
    return {
        "current_annotation": annotation,
        "total_iterations": state.get("total_iterations", 0) + 1,
        "validation_status": "pending",
        "is_faithful": None,
        "messages": [HumanMessage(task), AIMessage(annotation)],
    }


def _examples_text(shown: tuple[tuple[str, str], ...]) -> str:
    """The prompt's examples: verified annotations of similar events when the memory has
    some (they replace the generic two: the prompt stays as short), else the generic two."""
    if not shown:
        return load_prompt(__package__, "annotate_examples")
    return "\n".join(f'Example. Event: "{text}"\nHED: {hed}' for text, hed in shown)


def _definitions_note(names: tuple[str, ...]) -> str:
    """The task's line about the sidecar's definitions ('' without any)."""
    if not names:
        return ""
    listed = ", ".join(f"Def/{n.replace('/#', '/<number>')}" for n in names)
    return (
        f"The sidecar defines: {listed}. Write Def/Name for what a definition names, "
        "(Def/Name, Onset) when the event starts it and (Def/Name, Offset) when it ends it.\n"
    )


def _validate_text(
    annotation: str, schema: str, deps: HedDeps, definitions: list[str]
) -> ValidationResult:
    if not annotation:
        issue = Issue("TAG_EMPTY", "The annotation is empty: answer with a HED string.")
        return ValidationResult(annotation, schema, "python", [issue])
    return validate_many([annotation], schema, validator=deps.validator, definitions=definitions)[0]


def validate(state: HedAnnotationState, deps: HedDeps) -> dict[str, Any]:
    """Deterministic: validate, augment each error for the model, count the attempt."""
    annotation = state.get("current_annotation", "")
    schema = state["schema_version"]
    result = _validate_text(annotation, schema, deps, state.get("definitions", []))
    attempts = state.get("validation_attempts", 0) + 1
    limit = state.get("max_validation_attempts", deps.max_validation_attempts)
    status = "valid" if result.valid else "max_attempts_reached" if attempts >= limit else "invalid"
    update: dict[str, Any] = {
        "validation_attempts": attempts,
        "validation_status": status,
        "is_valid": result.valid,
        "validation_errors": [f"{i.code}: {i.message}" for i in result.errors],
        "validation_warnings": [f"{i.code}: {i.message}" for i in result.warnings],
        "validation_errors_augmented": augment_all(result.errors, load_vocabulary(schema)),
        "validator": result.validator,
        "validator_note": result.fallback_reason,
        "history": [
            {
                "step": "validate",
                "iteration": state.get("total_iterations", 0),
                "annotation": annotation,
                "valid": result.valid,
                "codes": result.codes,
            }
        ],
    }
    if attempts == 1:
        update["first_try_valid"] = result.valid
    return update


def portability_warnings(annotation: str, schema: str) -> list[str]:
    """Tags that extend the schema: other tools will not know them; name the closest tags."""
    vocab = load_vocabulary(schema)
    warnings = []
    for tag in flatten_tags(annotation):
        parts = tag.split("/")
        info = vocab.get(tag)
        if info is None or len(parts) < 2 or info.takes_value:
            continue
        if parts[-1].lower() not in vocab.tags:
            near = closest_tags(parts[-1], vocab)
            hint = f"; closest schema tags: {', '.join(near)}" if near else ""
            warnings.append(f"'{tag}' extends the schema with '{parts[-1]}'{hint}")
    return warnings


def evaluate(state: HedAnnotationState, deps: HedDeps, config: RunConfig) -> dict[str, Any]:
    """The evaluation agent: faithfulness by the judge model, vocabulary check by code."""
    annotation = state["current_annotation"]
    warnings = portability_warnings(annotation, state["schema_version"])
    prompt = load_prompt(
        __package__,
        "evaluate",
        description=state["input_description"],
        annotation=annotation,
        vocabulary_check="; ".join(warnings) or "every tag is a schema tag",
    )
    judge = config.models(ROLES["evaluate"]).with_structured_output(FaithfulnessVerdict)
    verdict = judge.invoke([_system(state, deps), HumanMessage(prompt)])
    if not isinstance(verdict, FaithfulnessVerdict):
        faithful, feedback = None, "The evaluation model gave no usable verdict."
    else:
        faithful, feedback = verdict.faithful, verdict.feedback.strip()
    return {
        "is_faithful": faithful,
        "evaluation_feedback": feedback,
        "portability_warnings": warnings,
        "history": [
            {
                "step": "evaluate",
                "iteration": state.get("total_iterations", 0),
                "faithful": faithful,
                "feedback": feedback,
            }
        ],
    }


def assess(state: HedAnnotationState, deps: HedDeps, config: RunConfig) -> dict[str, Any]:
    """The assessment agent: missing dimensions of the final annotation."""
    prompt = load_prompt(
        __package__,
        "assess",
        description=state["input_description"],
        annotation=state.get("current_annotation", ""),
        prior_feedback=state.get("evaluation_feedback") or "none",
    )
    judge = config.models(ROLES["assess"]).with_structured_output(AssessmentVerdict)
    verdict = judge.invoke([_system(state, deps), HumanMessage(prompt)])
    if not isinstance(verdict, AssessmentVerdict):
        return {
            "is_complete": None,
            "assessment_feedback": "The assessment model gave no usable verdict.",
        }
    text = verdict.feedback.strip()
    if verdict.missing:
        text = f"Missing: {'; '.join(verdict.missing)}." + (f" {text}" if text else "")
    return {"is_complete": verdict.complete, "assessment_feedback": text}


def summarize_feedback(
    state: HedAnnotationState, deps: HedDeps, config: RunConfig
) -> dict[str, Any]:
    """The feedback summariser: one bounded model call condensing the validation errors (when
    invalid) or the evaluation feedback (when unfaithful). The closest-tag and unit lines are
    appended verbatim, so a summary that drops them loses nothing."""
    invalid = not state.get("is_valid")
    augmented = state.get("validation_errors_augmented", []) if invalid else []
    evaluation = "" if invalid else state.get("evaluation_feedback", "")
    prompt = load_prompt(
        __package__,
        "summarize_feedback",
        annotation=state.get("current_annotation", ""),
        errors="\n".join(augmented) or "none",
        evaluation=evaluation or "none",
    )
    model = config.models(ROLES["summarize"])
    reply = model.invoke(
        [_system(state, deps), HumanMessage(prompt)], max_tokens=SUMMARY_MAX_TOKENS
    )
    summary = _text(reply.content).strip()
    if not summary:  # an empty answer must not erase the errors
        summary = "\n".join(augmented) or evaluation
    verbatim = [
        line.strip()
        for a in augmented
        for line in a.splitlines()
        if line.startswith(_KEEP_VERBATIM)
    ]
    feedback = "\n".join([summary, *verbatim]) if verbatim else summary
    return {"feedback": feedback[:MAX_FEEDBACK_CHARS]}
