"""Reports of a run: ``report.json`` and a self-contained ``report.html``, plus one HTML page per
case (``traces/<case>.html``: inputs, output, scores, trajectory graph, trace timeline).

The HTML has inline CSS, plots as base64 PNG and graphs as inline SVG: no external assets, no
JavaScript, so it can be mailed, archived or opened from a CI artifact as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from casework.evals._svg import trajectory_svg
from casework.evals.results import CaseResult, EvalRun
from casework.evals.runner import case_filename

__all__ = [
    "REPORT_SCHEMA",
    "format_metric",
    "metric_label",
    "render_case_html",
    "render_html",
    "report_json",
    "write_report",
]

REPORT_SCHEMA = "casework.eval.report/1"

CSS = """
:root { --ink:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f5f7fa; --ok:#2f9e6b; --bad:#c93c3c;
        --warn:#d9822b; --blue:#2f6fb2; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink); font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; }
main { max-width:1180px; margin:0 auto; padding:28px 28px 60px; }
h1 { font-size:26px; margin:0 0 2px; }
h2 { font-size:19px; margin:34px 0 12px; padding-bottom:6px; border-bottom:2px solid var(--line); }
h3 { font-size:15px; margin:0 0 10px; color:var(--muted); font-weight:600; }
a { color:var(--blue); }
.sub { color:var(--muted); margin-bottom:18px; font-size:14px; }
.meta { display:grid; grid-template-columns:repeat(auto-fill,minmax(210px,1fr)); gap:6px 18px; background:#fff;
        border:1px solid var(--line); border-radius:10px; padding:14px 18px; font-size:14px; }
.meta b { display:block; color:var(--muted); font-weight:600; font-size:12px; text-transform:uppercase; letter-spacing:.03em; }
.meta span { overflow-wrap:anywhere; }
.id { white-space:nowrap; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(205px,1fr)); gap:12px; }
.card { background:#fff; border:1px solid var(--line); border-radius:10px; padding:12px 14px; border-left:5px solid var(--line); }
.card.met { border-left-color:var(--ok); } .card.missed { border-left-color:var(--bad); }
.card .name { color:var(--muted); font-size:13px; }
.card .value { font-size:26px; font-weight:700; margin:2px 0; }
.card .target { font-size:13px; color:var(--muted); }
.pill { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; }
.pill.met, .pill.ok { background:#e3f4ea; color:#1d6b47; } .pill.missed, .pill.bad { background:#fbe4e4; color:#8f2424; }
.pill.none { background:#eef2f7; color:var(--muted); } .pill.warn { background:#fdf0dc; color:#8a5217; }
.grid2 { display:grid; grid-template-columns:1fr 1fr; gap:18px; }
@media (max-width: 900px) { .grid2 { grid-template-columns:1fr; } }
.panel { background:#fff; border:1px solid var(--line); border-radius:10px; padding:14px 16px; overflow-x:auto; }
.panel img { max-width:100%; height:auto; display:block; }
table { border-collapse:collapse; width:100%; font-size:14px; }
th, td { text-align:left; padding:6px 9px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f0f4f8; font-weight:600; font-size:13px; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
tr:nth-child(even) td { background:#fafbfc; }
table.confusion td, table.confusion th { text-align:center; min-width:64px; }
table.confusion td.cell { font-weight:600; font-size:15px; }
code, pre { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:12.5px; }
pre { background:#f0f4f8; border-radius:8px; padding:10px 12px; overflow-x:auto; white-space:pre-wrap; word-break:break-word; margin:0; }
.path { font-family:ui-monospace,Menlo,monospace; font-size:12px; color:#3e4c59; }
details { margin-top:12px; } summary { cursor:pointer; font-weight:600; color:var(--blue); }
.note { color:var(--muted); font-size:13px; }
.timeline { list-style:none; padding:0; margin:0; }
.timeline li { background:#fff; border:1px solid var(--line); border-left:4px solid #9aa5b1; border-radius:8px; padding:8px 12px; margin:8px 0; }
.timeline li.tool { border-left-color:var(--blue); } .timeline li.result { border-left-color:var(--ok); }
.timeline li.result.err, .timeline li.error { border-left-color:var(--bad); } .timeline li.text { border-left-color:#7e57c2; }
.timeline .kind { font-size:12px; font-weight:700; text-transform:uppercase; color:var(--muted); letter-spacing:.04em; }
"""

_PERCENT_HINTS = (
    "accuracy",
    "_rate",
    "match",
    "optimality",
    "f1",
    "precision",
    "recall",
    "agreement",
    "success",
    "efficiency",
)
_LABELS = {
    "verdict_accuracy": "Verdict accuracy",
    "accuracy": "Accuracy (verdict or exact match)",
    "macro_f1": "Macro F1",
    "exact_match": "Exact match",
    "error_rate": "Error rate",
    "ece": "Expected calibration error",
    "mce": "Max calibration error",
    "brier": "Brier score",
    "mean_confidence": "Mean confidence",
    "overconfidence": "Overconfidence",
    "tool_choice_accuracy": "Tool choice accuracy",
    "tool_precision": "Tool precision",
    "tool_recall": "Tool recall",
    "missing_tool_rate": "Cases missing a tool",
    "unnecessary_tool_rate": "Cases with an unnecessary tool",
    "param_accuracy": "Parameter accuracy",
    "hallucinated_param_rate": "Hallucinated parameter rate",
    "trajectory_optimality": "Trajectory optimality",
    "trajectory_strict_match": "Trajectory strict match",
    "trajectory_unordered_match": "Trajectory unordered match",
    "trajectory_subset_match": "Trajectory subset match",
    "trajectory_superset_match": "Trajectory superset match",
    "path_length_mean": "Avg path length",
    "optimal_length_mean": "Avg optimal length",
    "path_ratio_mean": "Path / optimal ratio",
    "path_efficiency": "Path efficiency",
    "edit_distance_mean": "Avg edit distance to reference",
    "redundant_call_rate": "Redundant call rate",
    "circular_rate": "Circular trajectory rate",
    "self_correction_success": "Self-correction success",
    "dead_end_rate": "Dead-end rate",
    "tool_errors": "Failed tool calls",
    "model_calls_mean": "Model calls / case",
    "tool_calls_mean": "Tool calls / case",
    "total_tokens_mean": "Tokens / case",
    "wall_seconds_mean": "Latency (mean)",
    "wall_seconds_p50": "Latency p50",
    "wall_seconds_p95": "Latency p95",
    "cost_per_case": "Cost / case",
    "cost_per_1k": "Cost / 1,000 cases",
    "cost_total": "Cost (run)",
    "judge_score_mean": "Judge score (mean)",
    "judge_pass_rate": "Judge pass rate",
    "judge_agreement": "Judge ↔ deterministic agreement",
    "judge_kappa": "Judge ↔ deterministic kappa",
    "judged": "Cases judged",
    "judge_errors": "Judge errors",
    "cases": "Cases",
    "errors": "Errors",
}
HEADLINE = (
    "verdict_accuracy",
    "exact_match",
    "macro_f1",
    "ece",
    "tool_choice_accuracy",
    "trajectory_optimality",
    "redundant_call_rate",
    "circular_rate",
    "wall_seconds_p95",
    "cost_per_1k",
    "judge_score_mean",
    "judge_kappa",
)


def metric_label(name: str) -> str:
    if name in _LABELS:
        return _LABELS[name]
    if name.startswith("f1."):
        return f"F1 of {name[3:]}"
    if name.startswith("field_match."):
        return f"Field match: {name[12:]}"
    return name.replace("_", " ").capitalize()


def format_metric(name: str, value: Any) -> str:
    """A metric as a person reads it: rates in percent, seconds, dollars."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, int | float):
        return str(value)
    if name.startswith("cost"):
        return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"
    if name.startswith("wall_seconds") or name.endswith("_seconds"):
        return f"{value:.2f} s" if value < 100 else f"{value:,.0f} s"
    if name in (
        "ece",
        "mce",
        "brier",
        "judge_kappa",
        "overconfidence",
        "judge_score_mean",
        "mean_confidence",
    ):
        return f"{value:.3f}"
    if name.startswith(("f1.", "field_match.")) or any(h in name for h in _PERCENT_HINTS):
        return f"{100 * value:.1f}%"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


# --------------------------------------------------------------------------- JSON
def report_json(run: EvalRun) -> dict[str, Any]:
    """The machine-readable report: run facts, metrics, targets, details and every case."""
    data = run.to_dict(with_cases=False)
    meta = {
        k: data[k]
        for k in (
            "run_id",
            "app",
            "strategy",
            "model",
            "judge_model",
            "dataset",
            "dataset_sha256",
            "created_at",
            "concurrency",
            "wall_seconds",
            "status",
            "labels",
            "config",
            "run_dir",
        )
    }
    return {
        "schema": REPORT_SCHEMA,
        "run": meta,
        "metrics": run.metrics,
        "targets": [t.to_dict() for t in run.target_results],
        "targets_met": run.targets_met,
        "details": run.details,
        "cases": [c.to_dict() for c in run.cases],
    }


# --------------------------------------------------------------------------- HTML helpers
def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>{body}</main></body></html>"
    )


def _table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    numeric: Sequence[int] = (),
    cls: str = "",
) -> str:
    head = "".join(
        f"<th class='{'num' if i in numeric else ''}'>{h}</th>" for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='{'num' if i in numeric else ''}'>{cell}</td>" for i, cell in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _json_block(value: Any) -> str:
    return f"<pre>{_e(json.dumps(value, indent=2, ensure_ascii=False, default=str))}</pre>"


def _pill(ok: bool | None, yes: str = "met", no: str = "missed", none: str = "no data") -> str:
    if ok is None:
        return f"<span class='pill none'>{none}</span>"
    return f"<span class='pill {'met' if ok else 'missed'}'>{yes if ok else no}</span>"


def _percent(p: float | None) -> str:
    return "–" if p is None else f"{100 * p:.0f}%"


def _case_href(case: CaseResult) -> str:
    return f"traces/{case_filename(case.case_id)}.html"


def _path_text(case: CaseResult) -> str:
    names = [c["name"] for c in case.tool_calls]
    return " → ".join(names) if names else "(no tool calls)"


# --------------------------------------------------------------------------- sections
def _meta(run: EvalRun) -> str:
    items = [
        ("Strategy", run.strategy),
        ("Model", run.model or "settings default"),
        ("Judge", run.judge_model or "off"),
        ("Dataset", f"{Path(run.dataset).name} · sha {run.dataset_sha256[:10]}"),
        ("Cases", f"{len(run.cases)} ({run.metrics.get('errors', 0)} errors)"),
        ("Created", run.created_at),
        ("Wall time", f"{run.wall_seconds:.2f} s at concurrency {run.concurrency}"),
        ("Status", run.status),
    ]
    if run.config.get("record"):
        items.append(("Recorded", "cassettes/ (replay with --replay " + run.run_id + ")"))
    if run.config.get("replay"):
        items.append(("Replayed from", run.config["replay"]))
    return (
        "<div class='meta'>"
        + "".join(f"<div><b>{_e(k)}</b><span>{_e(v)}</span></div>" for k, v in items)
        + "</div>"
    )


def _targets(run: EvalRun) -> str:
    if not run.target_results:
        return "<p class='note'>This app declares no targets.</p>"
    cards = []
    for t in run.target_results:
        state = "none" if t.met is None else ("met" if t.met else "missed")
        cards.append(
            f"<div class='card {state}'><div class='name'>{_e(metric_label(t.metric))}</div>"
            f"<div class='value'>{_e(format_metric(t.metric, t.value))}</div>"
            f"<div class='target'>target {_e(t.op)} {_e(format_metric(t.metric, t.target))} {_pill(t.met)}</div></div>"
        )
    verdict = run.targets_met
    head = (
        f"<p>{_pill(verdict, 'all targets met', 'targets missed', 'no target measurable')} "
        f"<span class='note'>{sum(1 for t in run.target_results if t.met)} of {len(run.target_results)} met</span></p>"
    )
    return head + "<div class='cards'>" + "".join(cards) + "</div>"


def _headline(run: EvalRun) -> str:
    targeted = {t.metric for t in run.target_results}
    cards = [
        f"<div class='card'><div class='name'>{_e(metric_label(k))}</div>"
        f"<div class='value'>{_e(format_metric(k, run.metrics[k]))}</div></div>"
        for k in HEADLINE
        if run.metrics.get(k) is not None and k not in targeted
    ]
    return "<div class='cards'>" + "".join(cards) + "</div>" if cards else ""


def _confusion(details: Mapping[str, Any]) -> str:
    cls = details.get("classification")
    if not cls:
        return "<p class='note'>No expected verdicts in this dataset.</p>"
    labels, matrix = cls["labels"], cls["confusion"]
    peak = max([v for row in matrix for v in row] + [1])
    head = (
        "<tr><th>true ↓ / predicted →</th>"
        + "".join(f"<th>{_e(lab)}</th>" for lab in labels)
        + "<th>total</th></tr>"
    )
    rows = []
    for i, lab in enumerate(labels):
        if not sum(matrix[i]) and lab == "(none)":
            continue
        cells = []
        for j, v in enumerate(matrix[i]):
            alpha = 0.12 + 0.78 * v / peak if v else 0
            color = "47,158,107" if i == j else "201,60,60"
            style = (
                f"background: rgba({color},{alpha:.2f}); color: {'#fff' if alpha > 0.55 else 'inherit'}"
                if v
                else ""
            )
            cells.append(f"<td class='cell' style='{style}'>{v}</td>")
        rows.append(f"<tr><th>{_e(lab)}</th>{''.join(cells)}<td>{sum(matrix[i])}</td></tr>")
    per = _table(
        ["class", "precision", "recall", "F1", "support", "predicted"],
        [
            [
                _e(c["label"]),
                format_metric("precision", c["precision"]),
                format_metric("recall", c["recall"]),
                format_metric("f1", c["f1"]),
                str(c["support"]),
                str(c["predicted"]),
            ]
            for c in cls["per_class"]
        ],
        numeric=(1, 2, 3, 4, 5),
    )
    return (
        f"<table class='confusion'>{head}{''.join(rows)}</table>"
        f"<p class='note'>Accuracy {format_metric('accuracy', cls['accuracy'])} · macro F1 "
        f"{format_metric('f1', cls['macro_f1'])} over {cls['n']} cases.</p>{per}"
    )


def _calibration(details: Mapping[str, Any]) -> tuple[str, str]:
    from casework.evals._plots import reliability_diagram

    cal = details.get("calibration")
    if not cal:
        return "<p class='note'>No decision carried a confidence.</p>", ""
    img = f"<img alt='reliability diagram' src='{reliability_diagram(cal['bins'], cal['ece'])}'>"
    rows = [
        [metric_label(k), format_metric(k, cal[k])]
        for k in ("ece", "mce", "brier", "mean_confidence", "accuracy", "overconfidence")
    ]
    bins = [
        [
            f"{b['lower']:.1f}–{b['upper']:.1f}",
            str(b["count"]),
            format_metric("mean_confidence", b["mean_confidence"]),
            format_metric("accuracy", b["accuracy"]),
            format_metric("ece", b["gap"]),
        ]
        for b in cal["bins"]
        if b["count"]
    ]
    text = (
        _table(["calibration", "value"], rows, numeric=(1,))
        + "<h3 style='margin-top:14px'>Non-empty bins</h3>"
        + _table(
            ["confidence", "cases", "mean conf.", "accuracy", "gap"], bins, numeric=(1, 2, 3, 4)
        )
    )
    return img, text


def _efficiency_plots(run: EvalRun) -> str:
    from casework.evals._plots import GREEN, ORANGE, histogram

    walls = [float(c.efficiency.get("wall_seconds") or 0.0) for c in run.cases]
    costs = [
        float(c.efficiency["cost_usd"])
        for c in run.cases
        if c.efficiency.get("cost_usd") is not None
    ]
    lat = f"<img alt='latency histogram' src='{histogram(walls, title='Latency per case', xlabel='seconds')}'>"
    tokens = [float(c.efficiency.get("total_tokens") or 0) for c in run.cases]
    tools = [float(c.efficiency.get("tool_calls") or 0) for c in run.cases]
    if costs and any(costs):
        right = f"<img alt='cost histogram' src='{histogram(costs, title='Cost per case', xlabel='USD', color=ORANGE)}'>"
    else:
        note = (
            "no case had a priced model"
            if not costs
            else "nothing was charged (local, scripted or replayed models, or none)"
        )
        if any(tokens):
            plot, what = (
                histogram(tokens, title="Tokens per case", xlabel="tokens", color=GREEN),
                "tokens",
            )
        else:
            plot, what = (
                histogram(tools, title="Tool calls per case", xlabel="tool calls", color=GREEN),
                "tool calls (no model was called)",
            )
        right = f"<img alt='{what} histogram' src='{plot}'><p class='note'>Cost: {note}; {what} shown instead.</p>"
    eff = run.details.get("efficiency", {})
    rows = [
        [metric_label(k), format_metric(k, run.metrics.get(k))]
        for k in (
            "model_calls_mean",
            "tool_calls_mean",
            "total_tokens_mean",
            "wall_seconds_mean",
            "wall_seconds_p50",
            "wall_seconds_p95",
            "cost_per_case",
            "cost_per_1k",
            "cost_total",
        )
    ]
    rows.append(["Cases with a known price", f"{eff.get('cost_known', 0)} of {len(run.cases)}"])
    return (
        f"<div class='grid2'><div class='panel'>{lat}</div><div class='panel'>{right}</div></div>"
        f"<div class='panel' style='margin-top:14px'>{_table(['efficiency', 'value'], rows, numeric=(1,))}</div>"
    )


def _trajectory(run: EvalRun) -> str:
    from casework.evals._plots import bar_chart

    types = run.details.get("trajectory_types")
    if not types:
        return "<p class='note'>No agent runs with tool calls in this run.</p>"
    colors = {
        "optimal": "#2f9e6b",
        "exploratory": "#d9822b",
        "recovery": "#2f6fb2",
        "circular": "#7e57c2",
        "dead_end": "#c93c3c",
        "incomplete": "#b35c5c",
        "unscored": "#9aa5b1",
        "interrupted": "#9aa5b1",
    }
    img = f"<img alt='trajectory types' src='{bar_chart(types, title='Trajectory types', colors=colors)}'>"
    keys = [
        k
        for k in (
            "trajectory_optimality",
            "trajectory_strict_match",
            "trajectory_unordered_match",
            "trajectory_subset_match",
            "trajectory_superset_match",
            "tool_choice_accuracy",
            "tool_precision",
            "tool_recall",
            "missing_tool_rate",
            "unnecessary_tool_rate",
            "param_accuracy",
            "hallucinated_param_rate",
            "path_length_mean",
            "optimal_length_mean",
            "path_ratio_mean",
            "path_efficiency",
            "edit_distance_mean",
            "redundant_call_rate",
            "circular_rate",
            "tool_errors",
            "self_correction_success",
            "dead_end_rate",
        )
        if k in run.metrics
    ]
    table = _table(
        ["trajectory & tool choice", "value"],
        [[metric_label(k), format_metric(k, run.metrics[k])] for k in keys],
        numeric=(1,),
    )
    return f"<div class='grid2'><div class='panel'>{img}{_TYPES_NOTE}</div><div class='panel'>{table}</div></div>"


_TYPES_NOTE = (
    "<table style='margin-top:12px'><tbody>"
    "<tr><td><b>optimal</b></td><td>exactly the reference tools (order aside)</td></tr>"
    "<tr><td><b>exploratory</b></td><td>the reference tools plus extra calls</td></tr>"
    "<tr><td><b>recovery</b></td><td>a call failed, then a retry of the tool succeeded</td></tr>"
    "<tr><td><b>circular</b></td><td>repeated an identical call with no new information in between</td></tr>"
    "<tr><td><b>dead_end</b></td><td>a limit or budget ended the run before a decision</td></tr>"
    "<tr><td><b>incomplete</b></td><td>a reference tool was never called</td></tr>"
    "</tbody></table>"
)


def _groups(details: Mapping[str, Any]) -> str:
    groups = details.get("groups") or {}
    if not groups:
        return ""
    rows = [
        [_e(key), _e(value), str(g["n"]), format_metric("accuracy", g["accuracy"])]
        for key, values in groups.items()
        for value, g in values.items()
    ]
    return (
        "<h2>Accuracy by scenario</h2><div class='panel'>"
        + _table(["metadata", "value", "cases", "accuracy"], rows, numeric=(2, 3))
        + "</div>"
    )


def _judge(run: EvalRun) -> str:
    j = run.details.get("judge")
    if not j:
        return ""
    rows = [
        [metric_label(k), format_metric(k, run.metrics.get(k))]
        for k in (
            "judged",
            "judge_errors",
            "judge_score_mean",
            "judge_pass_rate",
            "judge_agreement",
            "judge_kappa",
        )
    ]
    table2 = _table(
        ["", "deterministic pass", "deterministic fail"],
        [
            ["judge pass", str(j["both_pass"]), str(j["judge_only"])],
            ["judge fail", str(j["deterministic_only"]), str(j["both_fail"])],
        ],
        numeric=(1, 2),
    )
    return (
        f"<h2>LLM judge <span class='note'>({_e(run.judge_model)}, pass at score ≥ {j['threshold']}; never gates the "
        f"deterministic metrics)</span></h2><div class='grid2'><div class='panel'>{_table(['judge', 'value'], rows, numeric=(1,))}"
        f"</div><div class='panel'>{table2}</div></div>"
    )


def _case_rows(cases: Sequence[CaseResult]) -> list[list[str]]:
    rows = []
    for c in cases:
        href = _case_href(c)
        outcome = (
            f"<span class='pill bad'>error</span> {_e(c.error)}"
            if c.error
            else _pill(c.correct, "correct", "wrong", "n/a")
        )
        if c.ended_by and c.ended_by != "submit":
            outcome += f" <span class='pill warn'>{_e(c.ended_by)}</span>"
        traj = (c.trajectory or {}).get("type", "")
        rows.append(
            [
                f"<a class='id' href='{href}'>{_e(c.case_id)}</a>",
                _e(c.metadata.get("scenario_type", c.metadata.get("kind", ""))),
                _e(c.expected_verdict),
                _e(c.verdict),
                _percent(c.confidence),
                outcome,
                f"<span class='path'>{_e(_path_text(c))}</span><br><span class='note'>{_e(traj)}</span>",
                f"<span class='id'><a href='{href}'>page</a> · <a href='{_e(c.trace)}'>jsonl</a></span>"
                if c.trace
                else f"<a href='{href}'>page</a>",
            ]
        )
    return rows


_CASE_HEAD = ["case", "scenario", "expected", "got", "conf.", "outcome", "tool path", "trace"]
FAILED_SHOWN = 40


def _failed_table(failed: Sequence[CaseResult]) -> str:
    if not failed:
        return "<p class='note'>No case failed.</p>"
    ranked = sorted(failed, key=lambda c: (c.error is None, -(c.confidence or 0.0), c.index))
    head = (
        "<div class='panel'>"
        + _table(_CASE_HEAD, _case_rows(ranked[:FAILED_SHOWN]), numeric=(4,))
        + "</div>"
    )
    if len(ranked) <= FAILED_SHOWN:
        return head
    rest = _table(_CASE_HEAD, _case_rows(ranked[FAILED_SHOWN:]), numeric=(4,))
    return (
        head
        + f"<details><summary>{len(ranked) - FAILED_SHOWN} more failed cases</summary><div class='panel'>{rest}</div></details>"
    )


def render_html(run: EvalRun) -> str:
    """The run's report page (self-contained)."""
    failed = run.failed_cases
    img, cal_text = _calibration(run.details)
    other = sorted(k for k in run.metrics if k not in HEADLINE)
    body = [
        f"<h1>Evaluation · {_e(run.app)}</h1><div class='sub'>run <code>{_e(run.run_id)}</code></div>",
        _meta(run),
        "<h2>Targets</h2>",
        _targets(run),
        "<h2>Headline metrics</h2>",
        _headline(run),
        "<h2>Decisions</h2><div class='grid2'>",
        f"<div class='panel'><h3>Confusion matrix</h3>{_confusion(run.details)}</div>",
        f"<div class='panel'><h3>Calibration · reliability diagram</h3>{img}{cal_text if not img else ''}</div></div>",
    ]
    if img:
        body.append(f"<div class='panel' style='margin-top:14px'>{cal_text}</div>")
    body += [
        "<h2>Latency and cost</h2>",
        _efficiency_plots(run),
        "<h2>Trajectories and tool choice</h2>",
        _trajectory(run),
        _groups(run.details),
        _judge(run),
        f"<h2>Failed cases <span class='note'>({len(failed)} of {len(run.cases)}; errors first, then the most "
        "confident mistakes)</span></h2>",
        _failed_table(failed),
        "<details><summary>All metrics</summary><div class='panel'>"
        + _table(
            ["metric", "name", "value"],
            [
                [_e(metric_label(k)), f"<code>{_e(k)}</code>", format_metric(k, run.metrics[k])]
                for k in HEADLINE + tuple(other)
                if k in run.metrics
            ],
            numeric=(2,),
        )
        + "</div></details>",
        f"<details><summary>All {len(run.cases)} cases (each links to its trace and trajectory graph)</summary><div class='panel'>"
        + _table(_CASE_HEAD, _case_rows(run.cases), numeric=(4,))
        + "</div></details>",
        f"<p class='note' style='margin-top:30px'>report.json beside this page holds every number shown here. "
        f"Compare with another run: <code>casework eval compare {_e(run.run_id)} OTHER_RUN</code>.</p>",
    ]
    return _page(f"{run.app} evaluation {run.run_id}", "".join(body))


# --------------------------------------------------------------------------- case pages
def _timeline(records: Sequence[Mapping[str, Any]]) -> str:
    items = []
    for r in records:
        kind = r.get("type")
        if kind == "run_start":
            items.append(
                f"<li><div class='kind'>run start</div>agent <b>{_e(r.get('agent'))}</b> · model <code>{_e(r.get('model'))}</code></li>"
            )
        elif kind == "case_start":
            items.append(f"<li><div class='kind'>case</div>{_json_block(r.get('inputs'))}</li>")
        elif kind == "text":
            items.append(
                f"<li class='text'><div class='kind'>model says</div>{_e(r.get('text'))}</li>"
            )
        elif kind == "tool":
            items.append(
                f"<li class='tool'><div class='kind'>calls {_e(r.get('tool'))}</div>{_json_block(r.get('input'))}</li>"
            )
        elif kind == "tool_result":
            ok = r.get("ok", True)
            items.append(
                f"<li class='result {'' if ok else 'err'}'><div class='kind'>{_e(r.get('tool'))} {'returned' if ok else 'failed'}</div>"
                f"<pre>{_e(str(r.get('output'))[:3000])}</pre></li>"
            )
        elif kind == "interrupt":
            items.append(
                f"<li><div class='kind'>paused for approval</div>{_json_block(r.get('interrupts'))}</li>"
            )
        elif kind in ("run_end", "complete"):
            usage = r.get("usage") or {}
            items.append(
                f"<li><div class='kind'>end · {_e(r.get('ended_by', ''))}</div>{_json_block(r.get('result'))}"
                f"<p class='note'>{_e(usage.get('model_calls', 0))} model calls · {_e(usage.get('tool_calls', 0))} tool calls · "
                f"{_e(usage.get('total_tokens', 0))} tokens</p></li>"
            )
        elif kind == "error":
            items.append(
                f"<li class='error'><div class='kind'>error</div>{_e(r.get('error'))}</li>"
            )
    return (
        "<ol class='timeline'>" + "".join(items) + "</ol>"
        if items
        else "<p class='note'>The trace is empty.</p>"
    )


def _read_trace(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def render_case_html(run: EvalRun, case: CaseResult, *, submit_tool: str | None = None) -> str:
    """One case's page: outcome, inputs / expected / output, scores, trajectory graph, trace."""
    submit_tool = submit_tool or run.config.get("submit_tool") or "submit_decision"
    outcome = (
        f"<span class='pill bad'>error</span> {_e(case.error)}"
        if case.error
        else _pill(case.correct, "correct", "wrong", "not scored")
    )
    traj = case.trajectory or {}
    reference = case.expected.get("tools")
    svg = trajectory_svg(
        case.tool_calls,
        reference,
        submit_tool=submit_tool,
        ended_by=case.ended_by or ("error" if case.error else None),
        verdict=case.verdict,
    )
    score_rows: list[list[str]] = []
    for f, ok in case.fields.items():
        score_rows.append([f"field {_e(f)}", _pill(ok, "match", "differs")])
    if traj:
        score_rows += [
            ["trajectory type", _e(traj.get("type"))],
            [
                "path",
                f"<span class='path'>{_e(' → '.join(traj.get('path') or []) or '(empty)')}</span>",
            ],
            [
                "path length / optimal",
                f"{traj.get('path_length')} / {_e(traj.get('optimal_length') if traj.get('optimal_length') is not None else '–')}",
            ],
            [
                "matches (strict / unordered / subset / superset)",
                " ".join(
                    _pill(traj["matches"].get(m), f"✓ {m}", f"✗ {m}")
                    for m in ("strict", "unordered", "subset", "superset")
                )
                if traj.get("matches")
                else "no reference",
            ],
            ["redundant calls", _e(len(traj.get("redundant") or []))],
            ["circular", _pill(not traj.get("is_circular"), "no", "yes")],
            ["errors / self-corrected", f"{traj.get('errors', 0)} / {traj.get('corrected', 0)}"],
        ]
    if case.tool_choice:
        tc = case.tool_choice
        score_rows += [
            ["tool choice", _pill(tc["correct"], "right tools", "wrong tools")],
            ["missing tools", _e(", ".join(tc["missing"]) or "none")],
            ["unnecessary tools", _e(", ".join(tc["unnecessary"]) or "none")],
            [
                "hallucinated parameters",
                _e(
                    "; ".join(
                        f"{h['tool']}.{h['arg']}={h['value']!r} ({h['why']})"
                        for h in tc["hallucinated"]
                    )
                    or "none"
                ),
            ],
        ]
    eff = case.efficiency
    score_rows.append(
        [
            "usage",
            _e(
                f"{eff.get('model_calls', 0)} model calls · {eff.get('tool_calls', 0)} tool calls · "
                f"{eff.get('total_tokens', 0)} tokens · {format_metric('wall_seconds', eff.get('wall_seconds'))} · "
                f"{format_metric('cost_usd', eff.get('cost_usd'))} · {case.attempts} attempt(s)"
            ),
        ]
    )
    for k, v in case.domain.items():
        score_rows.append([_e(k), _e(format_metric(k, v))])
    if case.judge:
        if "error" in case.judge:
            score_rows.append(
                ["judge", f"<span class='pill bad'>error</span> {_e(case.judge['error'])}"]
            )
        else:
            score_rows.append(
                [
                    "judge",
                    f"{case.judge['score']:.2f} {_pill(case.judge.get('passed'), 'pass', 'fail')} — {_e(case.judge.get('rationale'))}",
                ]
            )
    records = _read_trace(Path(run.run_dir or ".") / case.trace) if case.trace else []
    body = [
        "<p><a href='../report.html'>← report</a></p>",
        f"<h1>Case {_e(case.case_id)}</h1><div class='sub'>run <code>{_e(run.run_id)}</code> · {_e(run.app)}/{_e(run.strategy)}</div>",
        f"<p>expected <b>{_e(case.expected_verdict) or '–'}</b> · got <b>{_e(case.verdict) or '–'}</b> · "
        f"confidence {_percent(case.confidence)} · {outcome}</p>",
        "<h2>Trajectory graph</h2>",
        f"<div class='panel'>{svg}</div>",
        "<h2>Scores</h2>",
        f"<div class='panel'>{_table(['score', 'value'], score_rows)}</div>",
        "<div class='grid2' style='margin-top:18px'>",
        f"<div class='panel'><h3>Inputs</h3>{_json_block(case.inputs)}<h3 style='margin-top:12px'>Metadata</h3>{_json_block(case.metadata)}</div>",
        f"<div class='panel'><h3>Expected</h3>{_json_block(case.expected)}<h3 style='margin-top:12px'>Output</h3>{_json_block(case.output)}</div></div>",
        f"<h2>Trace <span class='note'>(<a href='{_e(Path(case.trace).name) if case.trace else ''}'>raw JSONL</a>)</span></h2>",
        _timeline(records),
    ]
    return _page(f"{case.case_id} · {run.run_id}", "".join(body))


def write_report(
    run: EvalRun, out_dir: str | Path | None = None, *, submit_tool: str | None = None
) -> Path:
    """Write ``report.json``, ``report.html`` and ``traces/<case>.html`` into the run directory
    (or ``out_dir``); returns the HTML report's path."""
    folder = Path(out_dir or run.run_dir or ".")
    (folder / "traces").mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(
        json.dumps(report_json(run), indent=2, default=str, ensure_ascii=False), encoding="utf-8"
    )
    for case in run.cases:
        (folder / _case_href(case)).write_text(
            render_case_html(run, case, submit_tool=submit_tool), encoding="utf-8"
        )
    html_path = folder / "report.html"
    html_path.write_text(render_html(run), encoding="utf-8")
    return html_path
