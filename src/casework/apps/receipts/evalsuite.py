"""The receipts evaluation: dataset, strategies, the spec's success metrics, its figure.

``eval_suite()`` is what ``casework eval receipts`` runs: the strategies of ``strategies.py``
(the functions the CLI and the API call) on ``LabelInput`` built from each case. The dataset
(``data/eval/cases.jsonl``, built by ``dataset.py``) asks for one word and suggested label
whether the suggestion is right (expected VALID) or wrong (expected INVALID).

Runs use a private, pristine store (``<home>/evals/receipts-<data hash>.db`` and a Chroma
collection of the same name) seeded from the bundled receipts, so working-store edits made by
``harmonize`` or ``review`` never change a score, and every case runs *blind*: the tools hide
the word's own stored labels, otherwise the answer would leak from the label history.

Metrics, as the spec defines them (note that its false positive / negative are named from
the label's side, the reverse of the usual naming):

* validation_success_rate — share of right suggestions that get validated (VALID);
* needs_review_rate — share of all decisions that are NEEDS_REVIEW;
* false_positive_rate — share of right suggestions marked INVALID ("valid labels marked INVALID");
* false_negative_rate — share of wrong suggestions marked VALID ("invalid labels marked VALID");
* confidence distribution (plot), tool calls and seconds per decision.

``--receipts SLUG`` (repeatable; ``--receipts all``) evaluates on the user's own imported
receipts instead: cases are built from their labels, and the run reads the working store.

Targets: the spec only gives directions (success up, review down, FP low, FN down); the
numbers below are ours.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from casework.apps.receipts.dataset import CASES_PATH, build_cases
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.models import DECISION_THRESHOLD, LabelInput
from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite, SuiteOption

__all__ = [
    "TARGETS",
    "eval_deps",
    "eval_suite",
    "label_input",
    "plot_confidence",
    "receipts_metrics",
    "setup",
    "user_cases",
]

TARGETS = {
    "verdict_accuracy": 0.90,
    "validation_success_rate": 0.85,
    "false_negative_rate_max": 0.05,
    "false_positive_rate_max": 0.10,
    "needs_review_rate_max": 0.20,
}


def _data_hash() -> str:
    from casework.apps.receipts.service import bundled_receipt_files

    h = hashlib.sha256()
    for p in bundled_receipt_files():
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:10]


def eval_deps(
    settings: Settings | None = None,
    *,
    with_vectors: bool = True,
) -> ReceiptsDeps:
    """Deps on the private evaluation store (not seeded: call ``setup`` first)."""
    settings = settings or get_settings()
    tag = f"receipts-{_data_hash()}"
    folder = settings.home / "evals"
    folder.mkdir(parents=True, exist_ok=True)
    return build_deps(
        settings,
        db_url=f"sqlite:///{(folder / f'{tag}.db').as_posix()}",
        collection=f"eval_{tag}".replace("-", "_"),
        with_vectors=with_vectors,
    )


def setup(settings: Settings | None = None) -> None:
    """Seed the evaluation store from the bundled receipts (idempotent, ~30 s the first time)."""
    from casework.apps.receipts.service import seed

    report = seed(eval_deps(settings))
    if report.vector_error:
        raise InputError(f"The evaluation store could not be indexed: {report.vector_error}.")


def label_input(case: EvalCase) -> LabelInput:
    """A case's input, run blind: the tools hide the word's own stored labels."""
    return LabelInput.model_validate({**case.inputs, "blind": True})


class _Store:
    """Which store a run of this suite reads: the pristine evaluation store, or the user's
    working store when ``--receipts`` built the cases from it. One suite object per run."""

    def __init__(self) -> None:
        self.working: Settings | None = None
        """The settings whose working store ``--receipts`` read the cases from."""

    def cases(self, settings: Settings, options: dict[str, list[str]]) -> list[EvalCase]:
        names = options.get("receipts")
        if not names:
            return []
        slugs = None if names == ["all"] else list(dict.fromkeys(names))
        deps = build_deps(settings, with_vectors=False)
        if not deps.repo.list_receipts():
            raise InputError(
                "No receipts are imported yet: `casework receipts import FILE...` first."
            )
        self.working = settings
        return [
            EvalCase(
                id=c["id"],
                inputs=c["inputs"],
                expected=c["expected"],
                metadata=c.get("metadata", {}),
            )
            for c in build_cases(deps.repo, slugs)
        ]

    def setup(self, settings: Settings) -> None:
        if self.working is None:
            setup(settings)

    def deps(self, settings: Settings) -> ReceiptsDeps:
        """Deps on the store the cases came from; ``settings`` stay the deps' own, since a
        ``--learn`` run gives a store of its own for its examples (``memory.label_memory``)."""
        if self.working is not None:
            source = self.working
            return build_deps(
                settings, db_url=source.db_url, vectors_dir=source.vectors_dir
            ).with_cache()
        return eval_deps(settings).with_cache()


def user_cases(settings: Settings, slugs: list[str] | None) -> list[EvalCase]:
    """Cases from the user's imported receipts (all of them when ``slugs`` is None)."""
    return _Store().cases(settings, {"receipts": slugs or ["all"]})


def receipts_metrics(case: EvalCase, out: CaseOutput) -> dict[str, float | int | str | None]:
    """Per-case values whose averages are the spec's rates (None where a rate does not apply)."""
    expected = case.expected.get("verdict")
    verdict = out.output.get("verdict")
    right = expected == "VALID"
    usage = out.usage
    return {
        "validation_success_rate": (1.0 if verdict == "VALID" else 0.0) if right else None,
        "needs_review_rate": 1.0 if verdict == "NEEDS_REVIEW" else 0.0,
        "false_positive_rate": (1.0 if verdict == "INVALID" else 0.0) if right else None,
        "false_negative_rate": (1.0 if verdict == "VALID" else 0.0) if not right else None,
        "decided_accuracy": (1.0 if verdict == expected else 0.0)
        if verdict != "NEEDS_REVIEW"
        else None,
        "tool_calls_per_decision": len(out.run.tool_calls) if out.run is not None else 0,
        "seconds_per_decision": round(usage.wall_seconds, 4) if usage is not None else None,
    }


def plot_confidence(run: Any, folder: Path) -> Path | None:
    """Confidence histogram of the run's decisions (PNG), by outcome, with the decision
    threshold marked."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    right = [100 * c.confidence for c in run.cases if c.confidence is not None and c.correct]
    wrong = [
        100 * c.confidence for c in run.cases if c.confidence is not None and c.correct is False
    ]
    if not right and not wrong:
        return None
    fig = Figure(figsize=(7, 3.6), dpi=110)
    ax = fig.subplots()
    bins = list(range(0, 105, 5))
    ax.hist(
        [right, wrong],
        bins=bins,
        stacked=True,
        label=[f"right (n={len(right)})", f"wrong (n={len(wrong)})"],
        color=["#2f9e6b", "#c93c3c"],
    )
    ax.axvline(DECISION_THRESHOLD, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("stated confidence")
    ax.set_ylabel("decisions")
    ax.set_title(
        f"receipts / {run.strategy}: confidence distribution (VALID/INVALID above {DECISION_THRESHOLD:.0f})"
    )
    ax.legend()
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "confidence.png"
    fig.savefig(path)
    return path


def eval_suite() -> EvalSuite:
    from casework.apps.receipts.service import STRATEGIES

    store = _Store()
    return EvalSuite(
        app="receipts",
        dataset=CASES_PATH,
        strategies=dict(STRATEGIES),
        default_strategy="cascade",
        labels=["VALID", "INVALID", "NEEDS_REVIEW"],
        input_model=label_input,
        deps=store.deps,
        verdict_field="verdict",
        confidence_field="confidence",
        evaluators=[receipts_metrics],
        plots=[plot_confidence],
        targets=dict(TARGETS),
        judge_rubric=None,
        setup=store.setup,
        options=[
            SuiteOption(
                "receipts",
                "Evaluate on your imported receipts: a slug (repeatable) or 'all'.",
                metavar="SLUG",
            )
        ],
        cases=store.cases,
        raw_verdict_field="raw_verdict",
    )
