"""Fitting a cascade's policy, replaying it and its accuracy–cost curve, on cases where every
layer ran (``Cascade.exploring()``): one evaluation run gives the fit (``fit_policy``, or
``fit_policy_for_budget`` for a cap on the share of cases a model sees) and the curve
(``sweep``). Pure functions over ``LayerOutcome`` lists; no app knowledge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from casework.runtime.calibration import Calibration, fit_calibration
from casework.runtime.cascade import NEVER, CascadePolicy, LayerOutcome, LayerPolicy

__all__ = [
    "fit_policy",
    "fit_policy_for_budget",
    "model_layers",
    "simulate",
    "sweep",
]


def _sure(o: LayerOutcome, policy: LayerPolicy, undecided: frozenset[str]) -> bool:
    if o.error is not None or o.verdict in undecided or o.confidence is None:
        return False
    rule = policy.for_verdict(o.verdict)
    return rule.calibrated(o.confidence) >= rule.threshold


def simulate(
    cases: Sequence[Sequence[LayerOutcome]],
    policy: CascadePolicy,
    layer_names: Sequence[str],
    *,
    undecided: frozenset[str] = frozenset({"NEEDS_REVIEW"}),
) -> dict[str, Any]:
    """What ``policy`` would have done on these cases (each with every layer's outcome and
    ``right`` filled): accuracy over all cases (an undecided case is not right), accuracy of
    the decided ones, the share each layer decided, the needs-review share, and the cost per
    case of the layers it would have run."""
    n = len(cases)
    decided_by = dict.fromkeys(layer_names, 0)
    right = decided = 0
    cost = {"seconds": 0.0, "model_calls": 0.0, "tokens": 0.0}
    model_cases = 0
    for outcomes in cases:
        by_name = {o.layer: o for o in outcomes}
        used_model = False
        for name in layer_names:
            o = by_name.get(name)
            if o is None:
                continue
            cost["seconds"] += o.seconds
            cost["model_calls"] += o.model_calls
            cost["tokens"] += o.input_tokens + o.output_tokens
            used_model = used_model or o.model_calls > 0
            rule = policy.layers.get(name) or LayerPolicy(NEVER)
            if _sure(o, rule, undecided):
                decided_by[name] += 1
                decided += 1
                right += bool(o.right)
                break
        model_cases += used_model
    return {
        "cases": n,
        "accuracy": right / n if n else None,
        "decided_accuracy": right / decided if decided else None,
        "needs_review_share": (n - decided) / n if n else None,
        "share": {k: v / n if n else 0.0 for k, v in decided_by.items()},
        "model_share": model_cases / n if n else None,
        "seconds_per_case": cost["seconds"] / n if n else None,
        "model_calls_per_case": cost["model_calls"] / n if n else None,
        "tokens_per_case": cost["tokens"] / n if n else None,
    }


def _layer_calibration(pairs: list[tuple[float, bool]], min_pairs: int) -> Calibration | None:
    if len(pairs) < min_pairs or len({ok for _, ok in pairs}) < 2:
        return None  # too few, or all right / all wrong: nothing to map
    return fit_calibration(pairs, min_pairs=min_pairs)


def _threshold(scored: list[tuple[float, bool]], target: float, min_support: int) -> float:
    """The lowest value at which the decisions kept (value >= it, at least ``min_support`` of
    them) are right at ``target`` or better; NEVER when there is none."""
    threshold = NEVER
    scored = sorted(scored, key=lambda s: -s[0])  # highest first: the kept set grows as t falls
    good = 0
    for k, (value, ok) in enumerate(scored):
        good += ok
        kept = k + 1
        last_of_tie = k + 1 == len(scored) or scored[k + 1][0] < value
        if last_of_tie and kept >= min_support and good / kept >= target:
            threshold = value
    return threshold


def fit_policy(
    cases: Sequence[Sequence[LayerOutcome]],
    layer_names: Sequence[str],
    *,
    target: float,
    min_support: int = 5,
    min_pairs: int = 10,
    by_verdict: bool = True,
    undecided: frozenset[str] = frozenset({"NEEDS_REVIEW"}),
    source: str = "",
    layer_targets: Mapping[str, float] | None = None,
) -> CascadePolicy:
    """Thresholds for a target accuracy of what each layer decides (``layer_targets`` sets
    another for the layers it names).

    In layer order, among the cases no earlier layer took: each verdict a layer gives gets its
    own calibration (fitted on that layer's pairs of the verdict, over every case) and its own
    threshold, the lowest calibrated confidence at which the decisions it would keep (at least
    ``min_support`` of them) are right at ``target`` or better. A verdict that never gets
    there gets a threshold it cannot reach, so those cases go on. ``by_verdict=False`` fits
    one calibration and threshold per layer."""

    def usable(o: LayerOutcome | None) -> bool:
        return (
            o is not None
            and o.error is None
            and o.verdict not in undecided
            and o.confidence is not None
            and o.right is not None
        )

    remaining = list(range(len(cases)))
    layers: dict[str, LayerPolicy] = {}
    for name in layer_names:
        at_layer = [
            (i, next((x for x in cases[i] if x.layer == name), None)) for i in range(len(cases))
        ]
        groups: dict[str | None, list[tuple[int, LayerOutcome]]] = {}
        for i, o in at_layer:
            if o is not None and usable(o):
                key = o.verdict if by_verdict else None
                groups.setdefault(key, []).append((i, o))
        rules: dict[str | None, LayerPolicy] = {}
        taken: set[int] = set()
        open_cases = set(remaining)
        for key, members in groups.items():
            cal = _layer_calibration(
                [(float(o.confidence or 0), bool(o.right)) for _, o in members], min_pairs
            )
            scored = [
                (cal.apply(o.confidence or 0) if cal else float(o.confidence or 0), i, o)
                for i, o in members
                if i in open_cases
            ]
            wanted = (layer_targets or {}).get(name, target)
            threshold = _threshold([(v, bool(o.right)) for v, _, o in scored], wanted, min_support)
            taken |= {i for v, i, _ in scored if v >= threshold}
            rules[key] = LayerPolicy(round(threshold, 4), cal)
        remaining = [i for i in remaining if i not in taken]
        if by_verdict:
            layers[name] = LayerPolicy(NEVER, None, {str(k): v for k, v in rules.items()})
        else:
            layers[name] = rules.get(None) or LayerPolicy(NEVER)
    policy = CascadePolicy(layers, target, source)
    fitted = simulate(cases, policy, layer_names, undecided=undecided)
    return CascadePolicy(layers, target, source, fitted)


def model_layers(cases: Sequence[Sequence[LayerOutcome]], layer_names: Sequence[str]) -> list[str]:
    """The layers that called a model on any of these cases, and every layer after the first
    of them (a later layer is at least as dear)."""
    paid = {o.layer for outcomes in cases for o in outcomes if o.model_calls > 0}
    first = next((i for i, name in enumerate(layer_names) if name in paid), len(layer_names))
    return list(layer_names[first:])


BUDGET_STEP = 0.005
"""How finely the budget fit lowers the cheap layers' target accuracy."""
BUDGET_FLOOR = 0.5
"""The lowest target accuracy the budget fit lets a cheap layer keep its answers at."""


def fit_policy_for_budget(
    cases: Sequence[Sequence[LayerOutcome]],
    layer_names: Sequence[str],
    *,
    target: float,
    max_model_share: float,
    min_support: int = 5,
    min_pairs: int = 10,
    undecided: frozenset[str] = frozenset({"NEEDS_REVIEW"}),
    source: str = "",
) -> CascadePolicy:
    """Thresholds for a budget: at most ``max_model_share`` of the cases reach a model layer.

    The model layers keep what they decide at ``target`` accuracy; the layers before them
    (rules, baselines) keep theirs at the highest accuracy, from ``target`` down in steps of
    ``BUDGET_STEP`` to ``BUDGET_FLOOR``, at which the model is asked on no more than the
    budget's share of these cases. ``fitted["cheap_target"]`` is that accuracy and
    ``fitted["budget_met"]`` says whether the floor was enough (when not, the policy is the
    floor's: the cheapest these layers can be made)."""
    paid = model_layers(cases, layer_names)
    cheap = [name for name in layer_names if name not in paid]
    steps = max(round((target - BUDGET_FLOOR) / BUDGET_STEP), 0)
    for k in range(steps + 1):
        cheap_target = round(target - k * BUDGET_STEP, 4)
        policy = fit_policy(
            cases,
            layer_names,
            target=target,
            min_support=min_support,
            min_pairs=min_pairs,
            undecided=undecided,
            source=source,
            layer_targets=dict.fromkeys(cheap, cheap_target),
        )
        met = (policy.fitted.get("model_share") or 0.0) <= max_model_share + 1e-9
        if met:
            break
    fitted = {**policy.fitted, "cheap_target": cheap_target, "budget_met": met}
    return CascadePolicy(policy.layers, target, source, fitted, max_model_share)


def sweep(
    cases: Sequence[Sequence[LayerOutcome]],
    layer_names: Sequence[str],
    *,
    targets: Sequence[float] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.99, 1.0),
    min_support: int = 5,
    undecided: frozenset[str] = frozenset({"NEEDS_REVIEW"}),
) -> dict[str, Any]:
    """The accuracy–cost curve: for each target accuracy, the fitted policy's accuracy,
    needs-review share and cost per case; and each layer alone, answering every case."""
    points = []
    for target in targets:
        policy = fit_policy(
            cases, layer_names, target=target, min_support=min_support, undecided=undecided
        )
        points.append({"target": target, **policy.fitted})
    alone = {}
    for name in layer_names:
        outs = [next((o for o in c if o.layer == name), None) for c in cases]
        n = len(outs)
        ok = sum(
            1
            for o in outs
            if o is not None and o.right and o.verdict not in undecided and not o.error
        )
        alone[name] = {
            "accuracy": ok / n if n else None,
            "seconds_per_case": sum(o.seconds for o in outs if o) / n if n else None,
            "model_calls_per_case": sum(o.model_calls for o in outs if o) / n if n else None,
        }
    return {"points": points, "alone": alone}
