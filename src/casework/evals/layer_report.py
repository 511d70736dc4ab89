"""Cascade figures of an evaluation run: the share each layer decided, how often a model
was asked, and (when every layer ran on every case) the accuracy–cost curve and a fit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from casework.evals.results import CaseResult
from casework.runtime.cascade import LayerOutcome
from casework.runtime.cascade_fit import sweep

__all__ = ["asked_model", "cascade_summary", "decided", "layer_names", "layer_outcomes"]


def layer_names(cases: Sequence[CaseResult]) -> list[str]:
    """The layers in cascade order (as the cases recorded them)."""
    names: list[str] = []
    for c in cases:
        for o in c.layers:
            if o["layer"] not in names:
                names.append(o["layer"])
    return names


def layer_outcomes(cases: Sequence[CaseResult]) -> list[list[LayerOutcome]]:
    return [[LayerOutcome.model_validate(o) for o in c.layers] for c in cases if c.layers]


def _paid(layers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The layers the cascade ran (up to the one whose answer stood)."""
    for i, o in enumerate(layers):
        if o.get("kept"):
            return layers[: i + 1]
    return layers


def asked_model(case: CaseResult) -> bool:
    """Whether a model answered for the case: in a cascade, a layer it paid for (up to the one
    whose answer stood) called one; otherwise the strategy made a model call."""
    if case.layers:
        return any(o.get("model_calls", 0) > 0 for o in _paid(case.layers))
    return bool(case.efficiency.get("model_calls"))


def decided(case: CaseResult) -> bool:
    """Whether the case got an answer rather than going to a person: no error, and in a
    cascade some layer was sure (``decided_by``), otherwise a verdict that is not
    NEEDS_REVIEW."""
    if case.error is not None:
        return False
    if case.layers:
        return case.decided_by is not None
    return case.verdict not in (None, "NEEDS_REVIEW")


def cascade_summary(cases: Sequence[CaseResult]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metrics, details) of the cases a cascade decided."""
    layered = [c for c in cases if c.layers]
    if not layered:
        return {}, {}
    names = layer_names(layered)
    n = len(layered)
    m: dict[str, Any] = {}
    for name in names:
        m[f"layer_share.{name}"] = sum(c.decided_by == name for c in layered) / n
    m["undecided_share"] = sum(c.decided_by is None for c in layered) / n
    m["model_share"] = sum(asked_model(c) for c in layered) / n
    d: dict[str, Any] = {"layers": names}
    # per layer: its own accuracy where it ran, and where its answer stood
    per_layer = {}
    for name in names:
        ran = [o for c in layered for o in c.layers if o["layer"] == name]
        kept = [o for o in ran if o.get("kept")]
        judged = [o for o in kept if o.get("right") is not None]
        per_layer[name] = {
            "ran": len(ran),
            "decided": len(kept),
            "decided_accuracy": sum(bool(o["right"]) for o in judged) / len(judged)
            if judged
            else None,
            "seconds_mean": sum(o.get("seconds", 0.0) for o in ran) / len(ran) if ran else None,
        }
    d["per_layer"] = per_layer
    complete = all({o["layer"] for o in c.layers} >= set(names) for c in layered)
    judged_all = all(
        o.get("right") is not None or o.get("error") for c in layered for o in c.layers
    )
    if complete and judged_all:
        d["curve"] = sweep(layer_outcomes(layered), names)
    return m, d
