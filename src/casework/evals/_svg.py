"""The trajectory graph of one case as inline SVG (no Graphviz, no JavaScript).

Two lanes: the reference path on top, the actual calls below, start to end. Colours tell a
call's fate (on the reference, unnecessary, failed, redundant, the submit); arcs under the
actual lane mark circular repeats, arcs above it mark self-corrections (error, then retry).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

__all__ = ["trajectory_svg"]

W, H, GAP, PAD = 150, 46, 34, 20
STYLES = {
    "match": ("#e3f4ea", "#2f9e6b"),
    "ok": ("#eef2f7", "#7b8794"),
    "extra": ("#fdf0dc", "#d9822b"),
    "error": ("#fbe4e4", "#c93c3c"),
    "repeat": ("#efe6fa", "#7e57c2"),
    "submit": ("#e1ecf8", "#2f6fb2"),
    "ref": ("#ffffff", "#9aa5b1"),
    "end": ("#1f2933", "#1f2933"),
}


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _args(args: Mapping[str, Any]) -> str:
    parts = [f"{k}={json.dumps(v, default=str)}" for k, v in args.items()]
    return ", ".join(parts)


def _node(
    x: float, y: float, title: str, sub: str, kind: str, *, tooltip: str = "", dashed: bool = False
) -> str:
    fill, stroke = STYLES[kind]
    text_color = "#ffffff" if kind == "end" else "#1f2933"
    dash = ' stroke-dasharray="5 3"' if dashed else ""
    tip = f"<title>{escape(tooltip)}</title>" if tooltip else ""
    return (
        f'<g>{tip}<rect x="{x}" y="{y}" width="{W}" height="{H}" rx="8" fill="{fill}" stroke="{stroke}" stroke-width="1.6"{dash}/>'
        f'<text x="{x + W / 2}" y="{y + 19}" text-anchor="middle" font-size="12.5" font-weight="600" fill="{text_color}">{escape(_short(title, 20))}</text>'
        f'<text x="{x + W / 2}" y="{y + 35}" text-anchor="middle" font-size="10.5" fill="{text_color}" opacity="0.8">{escape(_short(sub, 26))}</text></g>'
    )


def _arrow(x1: float, y1: float, x2: float, y2: float, color: str = "#52606d") -> str:
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}" stroke-width="1.5" marker-end="url(#arrow)"/>'


def _x(i: int) -> float:
    return PAD + (i + 1) * (W + GAP)  # slot 0 is "start"


@dataclass
class _Fates:
    """What each call is (a STYLES kind), the reference slot each matched call fills, and the
    circular repeats (earlier call, repeating call)."""

    kinds: list[str] = field(default_factory=list)
    matched_ref: dict[int, int] = field(default_factory=dict)
    repeats: list[tuple[int, int]] = field(default_factory=list)


def _fates(
    calls: list[dict[str, Any]], ref: list[str] | None, submit_tool: str, keep_submit: bool
) -> _Fates:
    fates = _Fates()
    ref_left = list(ref or [])
    answered: set[str] = set()
    last_key: dict[str, int] = {}
    for k, c in enumerate(calls):
        key = c["name"] + json.dumps(c.get("args") or {}, sort_keys=True, default=str)
        on_path = keep_submit or c["name"] != submit_tool
        if not c.get("ok", True):
            kind = "error"
        elif c["name"] == submit_tool and not keep_submit:
            kind = "submit"
        elif on_path and key in answered:
            kind = "repeat"
        elif ref is None:
            kind = "ok"
        elif c["name"] in ref_left:
            kind = "match"
        else:
            kind = "extra"
        if ref is not None and on_path and c.get("ok", True) and c["name"] in ref_left:
            slot = next(
                j
                for j, name in enumerate(ref)
                if name == c["name"] and j not in fates.matched_ref.values()
            )
            fates.matched_ref[k] = slot
            ref_left.remove(c["name"])
        if on_path and key in last_key:
            fates.repeats.append((last_key[key], k))
        if c.get("ok", True):
            answered.add(key)
        last_key[key] = k
        fates.kinds.append(kind)
    return fates


def _reference_lane(
    ref: list[str], matched_ref: dict[int, int], ref_y: float, act_y: float
) -> list[str]:
    parts = [
        f'<text x="{PAD}" y="{ref_y - 8}" font-size="11" fill="#52606d">reference path ({len(ref)} calls)</text>'
    ]
    for j, name in enumerate(ref):
        x = _x(j)
        parts.append(_node(x, ref_y, name, f"step {j + 1}", "ref"))
        if j:
            parts.append(_arrow(x - GAP, ref_y + H / 2, x - 2, ref_y + H / 2, "#9aa5b1"))
    for k, j in matched_ref.items():
        parts.append(
            f'<line x1="{_x(j) + W / 2}" y1="{ref_y + H}" x2="{_x(k) + W / 2}" y2="{act_y}" '
            'stroke="#2f9e6b" stroke-width="1.2" stroke-dasharray="3 3" opacity="0.8"/>'
        )
    return parts


def _actual_lane(
    calls: list[dict[str, Any]], kinds: list[str], act_y: float, end_title: str, end_sub: str
) -> list[str]:
    n = len(calls)
    parts = [
        f'<text x="{PAD}" y="{act_y - 8}" font-size="11" fill="#52606d">actual path ({n} calls)</text>',
        _node(PAD, act_y, "start", "case inputs", "ok"),
    ]
    for k, c in enumerate(calls):
        x = _x(k)
        parts.append(_arrow(x - GAP, act_y + H / 2, x - 2, act_y + H / 2))
        sub = ("error: " if not c.get("ok", True) else "") + _args(c.get("args") or {})
        tip = f"{k + 1}. {c['name']}({_args(c.get('args') or {})})\n→ {str(c.get('output') or '')[:300]}"
        parts.append(
            _node(
                x,
                act_y,
                f"{k + 1}. {c['name']}",
                sub or "()",
                kinds[k],
                tooltip=tip,
                dashed=kinds[k] == "repeat",
            )
        )
    end_x = _x(n)
    parts.append(_arrow(end_x - GAP, act_y + H / 2, end_x - 2, act_y + H / 2))
    parts.append(_node(end_x, act_y, end_title, end_sub, "end"))
    return parts


def _arcs(calls: list[dict[str, Any]], repeats: list[tuple[int, int]], act_y: float) -> list[str]:
    """Circular repeats (below the actual lane) and self-corrections (above it)."""
    parts = []
    for i, j in repeats:
        x1, x2 = _x(i) + W / 2, _x(j) + W / 2
        y = act_y + H
        depth = 26 + 10 * min(4, j - i)
        parts.append(
            f'<path d="M {x2} {y} C {x2} {y + depth}, {x1} {y + depth}, {x1} {y + 2}" fill="none" stroke="#7e57c2" '
            f'stroke-width="1.5" stroke-dasharray="4 3" marker-end="url(#arrow)"/>'
            f'<text x="{(x1 + x2) / 2}" y="{y + depth * 0.75 + 13}" text-anchor="middle" font-size="10" fill="#7e57c2">repeats call {i + 1}</text>'
        )
    for i, c in enumerate(calls):
        if c.get("ok", True):
            continue
        retry = next(
            (
                m
                for m in range(i + 1, len(calls))
                if calls[m]["name"] == c["name"] and calls[m].get("ok", True)
            ),
            None,
        )
        if retry is None:
            continue
        x1, x2 = _x(i) + W / 2, _x(retry) + W / 2
        y = act_y
        parts.append(
            f'<path d="M {x1} {y} C {x1} {y - 26}, {x2} {y - 26}, {x2} {y - 2}" fill="none" stroke="#2f9e6b" '
            f'stroke-width="1.5" marker-end="url(#arrow)"/>'
            f'<text x="{(x1 + x2) / 2}" y="{y - 22}" text-anchor="middle" font-size="10" fill="#2f9e6b">self-correction</text>'
        )
    return parts


def _legend(height: float) -> list[str]:
    parts = []
    ly = height - 22
    lx = PAD
    for kind, label in (
        ("match", "on reference"),
        ("extra", "unnecessary"),
        ("error", "failed"),
        ("repeat", "repeated call"),
        ("submit", "submit"),
        ("ok", "call (no reference)"),
    ):
        fill, stroke = STYLES[kind]
        parts.append(
            f'<rect x="{lx}" y="{ly - 10}" width="14" height="12" rx="3" fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{lx + 19}" y="{ly}" font-size="11" fill="#52606d">{label}</text>'
        )
        lx += 34 + 7 * len(label)
    return parts


def trajectory_svg(
    tool_calls: Sequence[Mapping[str, Any]],
    reference: Sequence[str] | None,
    *,
    submit_tool: str = "submit_decision",
    ended_by: str | None = None,
    verdict: str | None = None,
) -> str:
    """SVG markup of a case's trajectory against its reference."""
    calls = [dict(c) for c in tool_calls]
    ref = list(reference) if reference is not None else None
    keep_submit = ref is not None and submit_tool in ref
    n = len(calls)
    top = PAD + 18
    ref_y = top
    act_y = top + (H + 70 if ref is not None else 0) + 30
    width = PAD * 2 + (n + 2) * (W + GAP)
    if ref is not None:
        width = max(width, PAD * 2 + (len(ref) + 2) * (W + GAP))
    height = act_y + H + 70 + 30
    fates = _fates(calls, ref, submit_tool, keep_submit)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 {width} {height}" '
        f'style="max-width:{width}px;min-width:{min(width, 860)}px;height:auto" '
        'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" role="img" aria-label="trajectory graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#52606d"/></marker></defs>',
    ]
    if ref is not None:
        parts += _reference_lane(ref, fates.matched_ref, ref_y, act_y)
    end_sub = verdict if verdict is not None else ""
    parts += _actual_lane(calls, fates.kinds, act_y, f"end: {ended_by or 'done'}", end_sub)
    parts += _arcs(calls, fates.repeats, act_y)
    parts += _legend(height)
    parts.append("</svg>")
    return "".join(parts)
