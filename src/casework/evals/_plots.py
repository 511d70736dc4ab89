"""Plots for the reports, as base64 PNG data URIs (matplotlib's object API, no pyplot state)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "bar_chart",
    "cascade_curve_svg",
    "histogram",
    "learning_curve_svg",
    "reliability_diagram",
]

INK = "#1f2933"
GRID = "#d9e2ec"
BLUE = "#2f6fb2"
ORANGE = "#d9822b"
GREEN = "#2f9e6b"
RED = "#c93c3c"


def _figure(width: float, height: float) -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    fig.patch.set_facecolor("white")
    return fig


def _style(ax: Any) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.spines[["left", "bottom"]].set_color("#9aa5b1")
    ax.tick_params(colors=INK, labelsize=9)
    ax.grid(axis="y", color=GRID, linewidth=0.8)
    ax.set_axisbelow(True)


def _uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def reliability_diagram(bins: Sequence[Mapping[str, Any]], ece: float | None) -> str:
    """Accuracy against mean confidence per bin (bars), the diagonal of perfect calibration,
    the gap shaded, and the number of decisions per bin underneath."""
    fig = _figure(5.2, 4.6)
    top, bottom = fig.subplots(
        2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1], "hspace": 0.08}
    )
    width = 1.0 / max(1, len(bins))
    centers = [(b["lower"] + b["upper"]) / 2 for b in bins]
    accs = [b["accuracy"] if b["accuracy"] is not None else 0.0 for b in bins]
    confs = [b["mean_confidence"] for b in bins]
    top.plot(
        [0, 1], [0, 1], linestyle="--", color="#7b8794", linewidth=1, label="perfectly calibrated"
    )
    top.bar(centers, accs, width=width * 0.92, color=BLUE, alpha=0.85, label="accuracy")
    labelled = False
    for c, a, m, b in zip(centers, accs, confs, bins, strict=True):
        if b["count"] and m is not None:
            top.bar(
                c,
                m - a,
                bottom=a,
                width=width * 0.92,
                fill=False,
                hatch="///",
                edgecolor=RED,
                linewidth=0.8,
                label=None if labelled else "gap to confidence",
            )
            labelled = True
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.02)
    top.set_ylabel("accuracy", color=INK)
    title = "Reliability" + (f" — ECE {ece:.3f}" if ece is not None else "")
    top.set_title(title, color=INK, fontsize=11, loc="left")
    top.legend(loc="upper left", fontsize=8, frameon=False)
    _style(top)
    bottom.bar(centers, [b["count"] for b in bins], width=width * 0.92, color="#9fb3c8")
    bottom.set_ylabel("cases", color=INK)
    bottom.set_xlabel("confidence", color=INK)
    _style(bottom)
    return _uri(fig)


def histogram(
    values: Sequence[float], *, title: str, xlabel: str, color: str = BLUE, bins: int = 20
) -> str:
    """A histogram with the median and p95 marked."""
    fig = _figure(5.2, 3.0)
    ax = fig.subplots()
    xs = sorted(values)
    discrete = bool(xs) and all(float(x).is_integer() for x in xs) and xs[-1] - xs[0] <= 25
    if discrete:  # counts per whole value (tool calls, model calls): one bar each
        keys = sorted(set(xs))
        ax.bar(keys, [xs.count(k) for k in keys], width=0.8, color=color, alpha=0.85)
        ax.set_xticks(keys if len(keys) <= 12 else keys[:: max(1, len(keys) // 12)])
    if xs:
        if not discrete:
            ax.hist(
                xs, bins=min(bins, max(1, len(set(xs)))), color=color, alpha=0.85, edgecolor="white"
            )
        p50 = xs[len(xs) // 2]
        p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
        ax.axvline(p50, color=INK, linewidth=1, linestyle="--", label=f"median {p50:.3g}")
        ax.axvline(p95, color=ORANGE, linewidth=1, linestyle=":", label=f"p95 {p95:.3g}")
        ax.legend(fontsize=8, frameon=False)
    else:
        ax.text(
            0.5, 0.5, "no data", ha="center", va="center", color="#7b8794", transform=ax.transAxes
        )
    ax.set_title(title, color=INK, fontsize=11, loc="left")
    ax.set_xlabel(xlabel, color=INK)
    ax.set_ylabel("cases", color=INK)
    _style(ax)
    return _uri(fig)


def bar_chart(
    counts: Mapping[str, float], *, title: str, colors: Mapping[str, str] | None = None
) -> str:
    """Horizontal bars, one per key, labelled with their value."""
    fig = _figure(5.2, 0.5 + 0.38 * max(1, len(counts)))
    ax = fig.subplots()
    keys = list(counts)
    vals = [counts[k] for k in keys]
    ax.barh(keys, vals, color=[(colors or {}).get(k, BLUE) for k in keys])
    for y, v in enumerate(vals):
        ax.text(v, y, f" {v:g}", va="center", fontsize=9, color=INK)
    ax.invert_yaxis()
    ax.set_title(title, color=INK, fontsize=11, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(colors=INK, labelsize=9)
    ax.set_xlim(0, max(vals or [1]) * 1.15 or 1)
    return _uri(fig)


def cascade_curve_svg(curve: Mapping[str, Any]) -> str:
    """The accuracy–cost curve of a cascade as SVG text: accuracy against seconds per case
    for each target accuracy of the fit (a line), each layer alone (labelled dots)."""
    fig = _figure(6.0, 4.2)
    ax = fig.subplots()
    _style(ax)
    # one dot per distinct outcome (targets that fit the same thresholds share it), and the
    # line through those no cheaper point beats: the budgets worth choosing
    groups: dict[tuple[float, float], list[float]] = {}
    for p in curve.get("points", []):
        if p.get("accuracy") is not None:
            key = (round(p["seconds_per_case"], 4), round(p["accuracy"], 4))
            groups.setdefault(key, []).append(p["target"])
    dots = sorted(groups.items())
    frontier, best = [], -1.0
    for (x, y), _ in dots:
        if y > best:
            frontier.append((x, y))
            best = y
    if frontier:
        ax.plot(
            [x for x, _ in frontier],
            [y for _, y in frontier],
            color=BLUE,
            linewidth=1.6,
            label="cascade: the best accuracy for the cost",
        )
    for (x, y), targets in dots:
        ax.scatter([x], [y], color=BLUE, zorder=3, s=22)
        label = (
            f"{min(targets):.2f}" if len(targets) == 1 else f"{min(targets):.2f}–{max(targets):.2f}"
        )
        ax.annotate(
            f"target {label}",
            (x, y),
            textcoords="offset points",
            xytext=(4, -11),
            fontsize=7,
            color="#52606d",
        )
    for name, alone in (curve.get("alone") or {}).items():
        if alone.get("accuracy") is None:
            continue
        ax.scatter([alone["seconds_per_case"]], [alone["accuracy"]], color=ORANGE, zorder=3)
        ax.annotate(
            f"{name} alone",
            (alone["seconds_per_case"], alone["accuracy"]),
            textcoords="offset points",
            xytext=(5, 4),
            fontsize=8,
            color=INK,
        )
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlabel("seconds per case", color=INK, fontsize=9)
    ax.set_ylabel("accuracy (undecided counts as wrong)", color=INK, fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    return _svg(fig)


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    return buf.getvalue()


def learning_curve_svg(rows: Sequence[Mapping[str, Any]], metric: str) -> str:
    """The learning curve of a ``--learn`` run as SVG text: per tenth of the stream, the
    accuracy (blue) and the model share (orange) with memory (solid) and without (dashed)."""
    fig = _figure(6.4, 4.0)
    ax = fig.subplots()
    _style(ax)
    xs = [r["part"] for r in rows]
    for key, color, what in (("accuracy", BLUE, metric), ("model_share", ORANGE, "model share")):
        for run, style, said in (("memory", "-", "memory"), ("none", "--", "no memory")):
            ys = [r[run][key] for r in rows]
            ax.plot(
                [x for x, y in zip(xs, ys, strict=True) if y is not None],
                [y for y in ys if y is not None],
                linestyle=style,
                marker="o",
                markersize=3.5,
                color=color,
                linewidth=1.6,
                label=f"{what}, {said}",
            )
    ax.set_xticks(xs)
    ax.set_xlabel("tenth of the stream (cases in order)", color=INK, fontsize=9)
    ax.set_ylabel("share of the tenth's cases", color=INK, fontsize=9)
    ax.set_ylim(-0.02, 1.05)
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _svg(fig)
