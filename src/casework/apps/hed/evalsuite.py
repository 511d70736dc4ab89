"""The hed evaluation: what ``casework eval hed`` runs (the only evaluation path of the app).

Datasets: ``gold`` (the default, ``data/eval/cases.jsonl``: 87 event descriptions with gold
HED strings), ``routing`` (``data/eval/routing_cases.jsonl``: the spec's routing rules, a
state after a node and the node that must follow), or the user's own file
(``--dataset FILE.jsonl``, one case per line)::

    {"id": "ev-1", "inputs": {"description": "A beep sounds.", "schema_version": "8.3.0"},
     "expected": {"hed": "Sensory-event, Auditory-presentation, Beep"}}

(``schema_version`` is optional, default 8.3.0; ``metadata`` optional, e.g. a ``category``
the report groups by.)

Strategies: ``cascade`` (the default: the look-up where it accounts for the description,
else the bundled model under the schema's grammar, else a remote model's loop), ``loop`` (the
full state machine), ``loop-no-eval``, ``one-shot`` and ``rules`` (no model: the vocabulary
look-up baseline). Per case (the report shows their
means): ``validity_final`` and ``validity_first_try``; ``iterations_per_annotation`` and
``model_calls_per_annotation``; ``tag_precision`` / ``tag_recall`` / ``tag_f1`` against the
gold string after normalising both to short form (groups count as items, so grouping is
scored); ``annotation_exact_match`` (equal up to tag order, case and long form);
``seconds_per_annotation``. Faithfulness is the harness's judge (``--judge-model``) with the
rubric below: ``judge_pass_rate`` / ``judge_score_mean``. A routing case scores
``routing_correct`` (and the harness's field match on ``next``) whatever the strategy: every
strategy runs the same graph routers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.apps.hed.dataset import DATA_DIR
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.metrics import hed_metrics, short_form_for
from casework.apps.hed.models import DEFAULT_SCHEMA, HedAnnotationState, HedInput
from casework.apps.hed.service import STRATEGIES, next_node
from casework.config import Settings
from casework.errors import InputError
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite
from casework.runtime import Decision, EndReason, RunInfo
from casework.runtime.runconfig import RunConfig

__all__ = [
    "FAITHFULNESS_RUBRIC",
    "GOLD",
    "ROUTING",
    "TARGETS",
    "RoutingProbe",
    "by_category",
    "case_input",
    "eval_suite",
    "hed_case_metrics",
    "hed_correct",
    "plot_by_category",
    "route",
]

GOLD = DATA_DIR / "eval" / "cases.jsonl"
ROUTING = DATA_DIR / "eval" / "routing_cases.jsonl"

# Ours (the spec gives none): the loop must end valid nearly always, the annotator's first
# answer should mostly validate, and it must find more of the gold than the no-model
# baseline does (``rules``: tag F1 0.61 on the gold cases).
TARGETS = {"validity_final": 0.9, "validity_first_try": 0.6, "tag_f1": 0.65}

FAITHFULNESS_RUBRIC = """\
Faithfulness of a HED annotation to an event description. The output's `annotation` is a HED
string (short-form tags, parentheses group the tags of one thing); `expected.hed` is a gold
annotation for reference, not the only right answer.
- 1.0: every tag says something the description says (event type, what was presented or done,
  its properties and who acted) and nothing false; grouping ties properties to the right thing.
- 0.5: right in the main (event type and main object) but with a wrong or missing property,
  a wrong grouping, or an unneeded tag.
- 0.0: says something the description does not (another object, colour, modality or actor),
  misses the main event, or is empty.
Do not judge HED syntax (a validator checks it); judge what the tags mean."""


@dataclass(frozen=True)
class RoutingProbe:
    """A routing case: the state after ``after`` (validate or evaluate)."""

    after: str
    state: dict[str, Any] = field(default_factory=dict)


class RoutingDecision(Decision):
    """Where the graph goes next from a probe's state (the verdict is that node's name)."""

    next: str


def route(probe: RoutingProbe) -> RoutingDecision:
    """The graph's own router for the probe's node, on the probe's state."""
    state: HedAnnotationState = probe.state  # type: ignore[assignment]
    target = next_node(probe.after, state)
    return RoutingDecision(
        verdict=target,
        confidence=100,
        reasoning=f"after {probe.after}: {target}",
        next=target,
        run=RunInfo(ended_by=EndReason.RULES, strategy="routing"),
    )


def case_input(case: EvalCase) -> HedInput | RoutingProbe:
    """A case's strategy input: a description to annotate, or a routing probe."""
    if "after" in case.inputs:
        return RoutingProbe(
            after=str(case.inputs["after"]), state=dict(case.inputs.get("state") or {})
        )
    description = case.inputs.get("description")
    if not isinstance(description, str):
        raise InputError(
            f"Case {case.id!r} has no inputs.description; each line needs "
            '{"id", "inputs": {"description"}, "expected": {"hed"}}.'
        )
    return HedInput(
        description=description,
        schema_version=str(case.inputs.get("schema_version") or DEFAULT_SCHEMA),
    )


def _routes_too(strategy: Callable[..., Decision]) -> Callable[[Any, Any, RunConfig], Decision]:
    """The strategy, answering routing probes with the graph's routers."""

    def run(input: HedInput | RoutingProbe, deps: HedDeps, config: RunConfig) -> Decision:
        if isinstance(input, RoutingProbe):
            return route(input)
        return strategy(input, deps, config)

    run.__name__ = getattr(strategy, "__name__", "strategy")
    run.__doc__ = strategy.__doc__
    if hasattr(strategy, "exploring"):  # a cascade: --all-layers runs every layer
        run.exploring = lambda: _routes_too(strategy.exploring())  # type: ignore[attr-defined]
    return run


USABLE_F1 = 0.5
"""An annotation is right (for accuracy and a cascade's fit) when it is valid and finds at
least half of the gold string's tags and groups (tag F1 ≥ 0.5)."""


def hed_correct(case: EvalCase, out: CaseOutput) -> bool | None:
    """A routing case: the right next node; an annotation: valid with tag F1 ≥ ``USABLE_F1``."""
    if "next" in case.expected:
        return out.output.get("next") == case.expected["next"]
    if "hed" not in case.expected:
        return None
    schema = str(case.inputs.get("schema_version") or DEFAULT_SCHEMA)
    scores = hed_metrics(case.expected, out.output, short_form_for(schema))
    return bool(scores["valid"]) and float(scores["tag_f1"]) >= USABLE_F1


def hed_case_metrics(case: EvalCase, out: CaseOutput) -> dict[str, float | int | str | None]:
    """Per-case figures (see the module's docstring)."""
    output = out.output
    if "next" in case.expected:
        return {"routing_correct": float(output.get("next") == case.expected["next"])}
    schema = str(case.inputs.get("schema_version") or DEFAULT_SCHEMA)
    scores = hed_metrics(case.expected, output, short_form_for(schema))
    usage = out.usage
    return {
        "validity_final": scores["valid"],
        "validity_first_try": scores["first_try_valid"],
        "annotation_exact_match": scores["exact_match"],
        "tag_precision": scores["tag_precision"],
        "tag_recall": scores["tag_recall"],
        "tag_f1": scores["tag_f1"],
        "iterations_per_annotation": float(output.get("total_iterations", 0)),
        "model_calls_per_annotation": float(usage.model_calls if usage else 0),
        "seconds_per_annotation": float(usage.wall_seconds if usage else 0.0),
    }


CATEGORY_METRICS = ("validity_first_try", "validity_final", "tag_precision", "tag_recall", "tag_f1")


def by_category(cases: list[Any]) -> dict[str, dict[str, float]]:
    """The mean of ``CATEGORY_METRICS`` per case category (``metadata.category``), over the
    cases that ran (scored ``CaseResult``-like objects with ``metadata`` and ``domain``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in cases:
        if c.error is None and "tag_f1" in c.domain:
            groups.setdefault(str(c.metadata.get("category", "all")), []).append(c.domain)
    return {
        cat: {"cases": float(len(rows))}
        | {k: sum(float(r[k]) for r in rows) / len(rows) for k in CATEGORY_METRICS}
        for cat, rows in sorted(groups.items())
    }


def plot_by_category(run: Any, folder: Path) -> Path | None:
    """Validity (first try, final) and tag precision / recall / F1 per category (PNG)."""
    table = by_category(run.cases)
    if not table:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.8), dpi=110)
    ax = fig.subplots()
    width = 0.8 / len(CATEGORY_METRICS)
    for n, metric in enumerate(CATEGORY_METRICS):
        xs = [i + (n - len(CATEGORY_METRICS) / 2 + 0.5) * width for i in range(len(table))]
        ax.bar(xs, [row[metric] for row in table.values()], width, label=metric)
    ax.set_xticks(range(len(table)), [f"{cat} ({row['cases']:.0f})" for cat, row in table.items()])
    ax.set_ylim(0, 1.25)  # room for the legend above the bars
    ax.set_title(f"hed / {run.strategy}: by category")
    ax.legend(fontsize=7, ncols=len(CATEGORY_METRICS), loc="upper center")
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "by_category.png"
    fig.savefig(path)
    return path


def _deps(settings: Settings) -> HedDeps:
    # No repository: an evaluation's runs live in the evaluation store, not in hed history.
    # Model errors propagate, so the harness retries transient ones and records the rest.
    return HedDeps(settings=settings, validator="auto", raise_errors=True)


def eval_suite() -> EvalSuite:
    return EvalSuite(
        app="hed",
        dataset=GOLD,
        datasets={"gold": GOLD, "routing": ROUTING},
        strategies={name: _routes_too(fn) for name, fn in STRATEGIES.items()},
        default_strategy="cascade",
        labels=["VALID", "INVALID", "NEEDS_REVIEW"],
        input_model=case_input,
        deps=_deps,
        verdict_field="verdict",
        confidence_field="confidence",
        evaluators=[hed_case_metrics],
        correct=hed_correct,
        plots=[plot_by_category],
        targets=dict(TARGETS),
        judge_rubric=FAITHFULNESS_RUBRIC,
        learning_metric="tag_f1",  # `eval hed --learn`: the curve of tag F1 against the gold
        headline=[
            "validity_first_try",
            "validity_final",
            "tag_precision",
            "tag_recall",
            "tag_f1",
            "iterations_per_annotation",
            "model_calls_per_annotation",
            "seconds_per_annotation",
        ],
    )
