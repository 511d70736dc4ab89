"""The cascade: each case goes to the cheapest layer that is sure of it.

A cascade is an ordered list of layers (e.g. rules → baseline → the bundled model → a
configured remote model), each a strategy ``run(input, deps, config) -> Decision``. A layer's
answer is kept when it decided (its verdict is not an "undecided" one such as NEEDS_REVIEW) and its
*calibrated* confidence reaches the layer's threshold; otherwise the case goes to the next
layer. When no layer is sure, the last answer goes to a person (``mark_for_review``, or the
app's ``review``). A remote layer runs only when the cascade's role runs a remote model. Every
decision records which layer decided and what each layer before it said (``RunInfo.layers``).
The glue (remote-layer check, stored policy, nobody-sure ending) is here; an app passes its
layers and what differs.

The thresholds and each layer's calibration are a ``CascadePolicy``, fitted on development
cases for a target accuracy and stored like the confidence calibration
(``<home>/calibration/<app>/cascade--<model>.json``); ``cascade_fit`` fits, replays and
sweeps them on cases where every layer ran (``Cascade.exploring()``). No app knowledge.

References: FrugalGPT (Chen et al. 2023), AutoMix (Madaan et al. 2023).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, Field

from casework.errors import CaseworkError, InputError, ReplayDriftError
from casework.llm.local import is_local_model
from casework.runtime.calibration import Calibration
from casework.runtime.decision import Decision, EndReason, RunInfo
from casework.runtime.runconfig import RunConfig
from casework.runtime.usage import Usage

__all__ = [
    "Cascade",
    "CascadePolicy",
    "Layer",
    "LayerOutcome",
    "LayerPolicy",
    "cascade_path",
    "describe_outcomes",
    "load_policy",
    "mark_for_review",
    "save_policy",
    "stored_policy",
]

DecisionT = TypeVar("DecisionT", bound=Decision)

NEVER = 101.0
"""A threshold no calibrated confidence (0-100) reaches: the layer never decides alone."""


@dataclass(frozen=True)
class Layer:
    """One layer of a cascade: a strategy and what its answer costs."""

    name: str
    run: Callable[[Any, Any, RunConfig], Decision]
    default_threshold: float = 80.0
    """The threshold (0-100) used until a policy is fitted."""
    remote: bool = False
    """The layer runs a configured remote model: it sits out when the cascade's role runs the
    bundled model, and the stored policy is per remote model."""


class LayerOutcome(BaseModel):
    """What one layer said about a case, and whether its answer stood."""

    layer: str
    model: str | None = None
    """The model the layer ran (its ``RunInfo.model``); None for rules."""
    remote: bool = False
    verdict: str | None = None
    confidence: float | None = None
    """The layer's stated confidence, 0-100."""
    calibrated: float | None = None
    """The confidence after the layer's calibration (what the threshold acts on)."""
    threshold: float | None = None
    kept: bool = False
    error: str | None = None
    """``Type: message`` when the layer failed; the case then went on."""
    seconds: float = 0.0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    output: dict[str, Any] = Field(default_factory=dict)
    """The layer's decision as plain data (so an evaluation can score every layer)."""
    right: bool | None = None
    """Filled by an evaluation that knows the answer; None otherwise."""

    def brief(self) -> dict[str, Any]:
        """What a user reads of the layer (its whole answer, ``output``, left out)."""
        return self.model_dump(mode="json", exclude={"output", "right"}, exclude_none=True)


@dataclass(frozen=True)
class LayerPolicy:
    """A layer's threshold on its calibrated confidence; ``by_verdict`` holds one per verdict
    where the fit made one (a layer's VALID and INVALID at the same stated confidence need
    not be right equally often: the bundled model's label choice is, its rejections not)."""

    threshold: float
    calibration: Calibration | None = None
    by_verdict: dict[str, LayerPolicy] = field(default_factory=dict)

    def for_verdict(self, verdict: str | None) -> LayerPolicy:
        return self.by_verdict.get(verdict or "", self)

    def calibrated(self, confidence: float) -> float:
        return self.calibration.apply(confidence) if self.calibration is not None else confidence

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "threshold": self.threshold,
            "calibration": self.calibration.to_dict() if self.calibration else None,
        }
        if self.by_verdict:
            data["by_verdict"] = {k: v.to_dict() for k, v in self.by_verdict.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LayerPolicy:
        cal = data.get("calibration")
        return cls(
            float(data["threshold"]),
            Calibration.from_dict(cal) if cal else None,
            {k: cls.from_dict(v) for k, v in (data.get("by_verdict") or {}).items()},
        )


@dataclass(frozen=True)
class CascadePolicy:
    """Per layer: the threshold on its calibrated confidence, and the calibration."""

    layers: dict[str, LayerPolicy] = field(default_factory=dict)
    target: float | None = None
    """The accuracy the thresholds were fitted for (0-1), when fitted."""
    source: str = ""
    """Where it was fitted (an evaluation run id)."""
    fitted: dict[str, Any] = field(default_factory=dict)
    """The fit's own figures on its cases (accuracy, share per layer, cost)."""
    max_model_share: float | None = None
    """The budget it was fitted for: at most this share of cases reaching a model layer."""

    def for_layer(self, layer: Layer) -> LayerPolicy:
        return self.layers.get(layer.name) or LayerPolicy(layer.default_threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "layers": {k: v.to_dict() for k, v in self.layers.items()},
            "target": self.target,
            "max_model_share": self.max_model_share,
            "source": self.source,
            "fitted": self.fitted,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CascadePolicy:
        return cls(
            {k: LayerPolicy.from_dict(v) for k, v in data.get("layers", {}).items()},
            data.get("target"),
            str(data.get("source", "")),
            dict(data.get("fitted") or {}),
            data.get("max_model_share"),
        )


def cascade_path(home: Path, app: str, remote_model: str | None) -> Path:
    """Where an app's cascade policy is stored, beside its calibrations: one per remote model
    its remote layer runs (the name its runs report), and one for the offline cascade (None
    or a ``local:`` model)."""
    if remote_model and remote_model.startswith("local:"):
        remote_model = None
    name = remote_model or "offline"
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)
    return home / "calibration" / app / f"cascade--{safe}.json"


def save_policy(policy: CascadePolicy, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(policy.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # never a half-written policy
    return path


def stored_policy(home: Path, app: str, remote_model: str | None) -> CascadePolicy:
    """The policy fitted for ``app`` and its remote model, else each layer's defaults."""
    return load_policy(cascade_path(home, app, remote_model)) or CascadePolicy()


def describe_outcomes(outcomes: Sequence[LayerOutcome]) -> str:
    """What each layer said and what it needed, for a needs-review decision's reasoning:
    ``rules INVALID at 40.0 (needs 80.0); choice VALID at 62.5 (needs 90.0)``."""
    return "; ".join(
        f"{o.layer} {o.error or o.verdict} at {o.calibrated if o.calibrated is not None else '-'}"
        f" (needs {o.threshold if o.threshold is not None else '-'})"
        for o in outcomes
    )


def load_policy(path: Path) -> CascadePolicy | None:
    """The policy stored at ``path``; None when there is none."""
    if not path.is_file():
        return None
    try:
        return CascadePolicy.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"The cascade policy {path} is damaged ({exc}); fit it again with `casework eval calibrate RUN`."
        ) from None


def _usage_of(decision: Decision | None) -> Usage:
    usage = decision.run.usage if decision is not None and decision.run is not None else None
    return usage if isinstance(usage, Usage) else Usage()


def mark_for_review(last: DecisionT, said: str, outcomes: list[LayerOutcome]) -> DecisionT:
    """The usual ending when no layer is sure: the last answer goes to a person."""
    return last.model_copy(
        update={"verdict": "NEEDS_REVIEW", "reasoning": f"No layer was sure: {said}."[:1200]}
    )


class Cascade(Generic[DecisionT]):
    """A strategy made of layers: ``Cascade(app, layers, ...)(input, deps, config) -> Decision``.

    What an app passes is what differs between apps; the glue is here:

    * the remote layers (``Layer(remote=True)``) run only when ``config.models(role)`` is not
      the bundled model, and the stored policy is the one of that remote model;
    * the thresholds and calibrations in force are the app's stored policy
      (``<home>/calibration/<app>/cascade--<model>.json``, ``deps.settings.home``), else
      ``shipped_policy`` for the offline cascade, else each layer's default;
    * when no layer is sure, ``review(last, said, outcomes)`` marks the last answer of the
      ``decision`` class for review (default ``mark_for_review``), and ``no_answer(said,
      outcomes)`` builds the answer when no layer gave one (default: a bare NEEDS_REVIEW
      ``decision``). ``said`` is ``describe_outcomes(outcomes)``.
    """

    def __init__(
        self,
        app: str,
        layers: Sequence[Layer],
        *,
        decision: type[DecisionT],
        role: str | None = None,
        review: Callable[[DecisionT, str, list[LayerOutcome]], DecisionT] = mark_for_review,
        no_answer: Callable[[str, list[LayerOutcome]], DecisionT] | None = None,
        shipped_policy: Path | None = None,
        undecided_verdicts: frozenset[str] = frozenset({"NEEDS_REVIEW"}),
        name: str = "cascade",
        explore: bool = False,
    ) -> None:
        if not layers:
            raise ValueError("a cascade needs at least one layer")
        if role is None and any(layer.remote for layer in layers):
            raise ValueError("a cascade with a remote layer needs the role its model runs")
        self.app = app
        self.name = name
        self.layers = list(layers)
        self.decision = decision
        self.role = role
        self.review = review
        self.no_answer = no_answer
        self.shipped_policy = shipped_policy
        self.undecided_verdicts = undecided_verdicts
        self.explore = explore
        self.__name__ = name  # reads like the plain strategy functions in reports

    def exploring(self) -> Cascade[DecisionT]:
        """The same cascade that runs every layer on every case (for fitting and the curve):
        the decision and its recorded cost are still those of the layers it would have run."""
        return Cascade(
            self.app,
            self.layers,
            decision=self.decision,
            role=self.role,
            review=self.review,
            no_answer=self.no_answer,
            shipped_policy=self.shipped_policy,
            undecided_verdicts=self.undecided_verdicts,
            name=self.name,
            explore=True,
        )

    def remote_model(self, config: RunConfig) -> str | None:
        """The remote model the run configures for the cascade's role; None when that role
        runs the bundled model (the remote layers then sit out) or no layer is remote."""
        if self.role is None or is_local_model(config.models(self.role)):
            return None
        return config.models.name(self.role)

    def policy(self, deps: Any, config: RunConfig) -> CascadePolicy:
        """The thresholds in force: the stored fit for the run's remote model (or the offline
        one), else the shipped offline fit, else each layer's default."""
        remote = self.remote_model(config)
        stored = load_policy(cascade_path(deps.settings.home, self.app, remote))
        if stored is not None:
            return stored
        shipped = self.shipped_policy if remote is None and self.shipped_policy else None
        return (load_policy(shipped) if shipped is not None else None) or CascadePolicy()

    def undecided(self, last: Decision | None, outcomes: list[LayerOutcome]) -> DecisionT:
        """No layer was sure: the app's review of the last answer, or its no-answer."""
        said = describe_outcomes(outcomes)
        if isinstance(last, self.decision):
            return self.review(last, said, outcomes)
        if self.no_answer is not None:
            return self.no_answer(said, outcomes)
        return self.decision.model_validate(
            {
                "verdict": "NEEDS_REVIEW",
                "confidence": 0,
                "reasoning": f"No layer was sure: {said}."[:1200],
            }
        )

    def _outcome(
        self, layer: Layer, rule: LayerPolicy, input: Any, deps: Any, config: RunConfig
    ) -> tuple[LayerOutcome, Decision | None]:
        started = time.perf_counter()
        try:
            decision = layer.run(input, deps, config)
        except (InputError, ReplayDriftError):
            raise  # the case itself is wrong (no later layer would do better), or a replay drifted
        except CaseworkError as exc:  # a layer that cannot answer (no model, bad source)
            seconds = time.perf_counter() - started
            return LayerOutcome(
                layer=layer.name,
                remote=layer.remote,
                error=f"{type(exc).__name__}: {exc}",
                seconds=seconds,
            ), None
        usage = _usage_of(decision)
        seconds = usage.wall_seconds or (time.perf_counter() - started)
        confidence = float(decision.confidence)
        outcome = LayerOutcome(
            layer=layer.name,
            model=decision.run.model if decision.run is not None else None,
            remote=layer.remote,
            verdict=str(decision.verdict),
            confidence=confidence,
            calibrated=round(rule.for_verdict(str(decision.verdict)).calibrated(confidence), 2),
            threshold=rule.for_verdict(str(decision.verdict)).threshold,
            seconds=round(seconds, 4),
            model_calls=usage.model_calls,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            output=decision.model_dump(mode="json"),
        )
        return outcome, decision

    def sure(self, outcome: LayerOutcome) -> bool:
        return (
            outcome.error is None
            and outcome.verdict not in self.undecided_verdicts
            and outcome.calibrated is not None
            and outcome.threshold is not None
            and outcome.calibrated >= outcome.threshold
        )

    def __call__(self, input: Any, deps: Any, config: RunConfig) -> DecisionT:
        policy = self.policy(deps, config)
        remote = self.remote_model(config)
        outcomes: list[LayerOutcome] = []
        chosen: Decision | None = None
        last: Decision | None = None
        for layer in self.layers:
            if layer.remote and remote is None:
                continue
            outcome, decision = self._outcome(layer, policy.for_layer(layer), input, deps, config)
            outcomes.append(outcome)
            if decision is not None:
                last = decision
            if chosen is None and self.sure(outcome):
                outcome.kept = True
                chosen = decision
                if not self.explore:
                    break
        paid = outcomes[: next((i + 1 for i, o in enumerate(outcomes) if o.kept), len(outcomes))]
        usage = Usage()
        for o in paid:
            usage.model_calls += o.model_calls
            usage.input_tokens += o.input_tokens
            usage.output_tokens += o.output_tokens
            usage.wall_seconds += o.seconds
        deciding = next((o.layer for o in outcomes if o.kept), None)
        final = cast(DecisionT, chosen) if chosen is not None else self.undecided(last, outcomes)
        source = final.run if final.run is not None else None
        final.run = RunInfo(
            ended_by=source.ended_by if source is not None else EndReason.NO_DECISION,
            detail=source.detail if source is not None else "",
            strategy=self.name,
            model=source.model if source is not None else None,
            run_id=source.run_id if source is not None else "",
            thread_id=source.thread_id if source is not None else "",
            tool_calls=list(source.tool_calls) if source is not None else [],
            usage=usage,
            trace_path=source.trace_path if source is not None else None,
            interrupts=list(source.interrupts) if source is not None else [],
            decided_by=deciding,
            layers=outcomes,
        )
        return final
