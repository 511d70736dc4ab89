"""Efficiency: model calls, tool calls, tokens, wall time and cost, per case and per 1,000 cases."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from casework.runtime.usage import Usage

__all__ = ["EFFICIENCY_FIELDS", "case_efficiency", "efficiency_summary", "percentile"]

EFFICIENCY_FIELDS = (
    "model_calls",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "wall_seconds",
    "cost_usd",
)


def case_efficiency(
    usage: Usage | Mapping[str, Any] | None, *, wall_seconds: float | None = None
) -> dict[str, Any]:
    """One case's usage as plain numbers. ``cost_usd`` stays None when a price is unknown;
    ``wall_seconds`` (the runner's clock) wins over the usage's own when given."""
    if usage is None:
        data: dict[str, Any] = {}
    elif isinstance(usage, Usage):
        data = usage.to_dict()
    else:
        data = dict(usage)
    out: dict[str, Any] = {
        "model_calls": int(data.get("model_calls") or 0),
        "tool_calls": int(data.get("tool_calls") or 0),
        "input_tokens": int(data.get("input_tokens") or 0),
        "output_tokens": int(data.get("output_tokens") or 0),
        "cost_usd": data.get("cost_usd") if usage is not None else None,
        "wall_seconds": float(
            wall_seconds if wall_seconds is not None else data.get("wall_seconds") or 0.0
        ),
    }
    out["total_tokens"] = out["input_tokens"] + out["output_tokens"]
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (``q`` in 0..100), None for no values."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def efficiency_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means, p50 / p95 wall time, totals, and cost per case and per 1,000 cases.

    Cost is averaged over the cases whose cost is known (``cost_known`` says how many); it is
    None when no case has a known price.
    """
    n = len(rows)
    out: dict[str, Any] = {"cases": n}
    for f in ("model_calls", "tool_calls", "input_tokens", "output_tokens", "total_tokens"):
        vals = [float(r.get(f) or 0) for r in rows]
        out[f"{f}_mean"] = _mean(vals)
        out[f"{f}_total"] = sum(vals)
    walls = [float(r.get("wall_seconds") or 0.0) for r in rows]
    out["wall_seconds_mean"] = _mean(walls)
    out["wall_seconds_p50"] = percentile(walls, 50)
    out["wall_seconds_p95"] = percentile(walls, 95)
    out["wall_seconds_max"] = max(walls) if walls else None
    costs = [float(r["cost_usd"]) for r in rows if r.get("cost_usd") is not None]
    out["cost_known"] = len(costs)
    out["cost_total"] = sum(costs) if costs else None
    out["cost_per_case"] = _mean(costs)
    out["cost_per_1k"] = out["cost_per_case"] * 1000 if costs else None
    return out
