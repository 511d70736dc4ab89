"""The sections of the run report (meta, targets, headline, confusion, calibration, latency
and cost, trajectories, groups, judge, failed cases, the app's figures), each a function of
the run returning an HTML fragment."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from casework.evals.casepages import case_href as _case_href
from casework.evals.formatting import HEADLINE, format_metric, metric_label
from casework.evals.html import e as _e
from casework.evals.html import percent as _percent
from casework.evals.html import pill as _pill
from casework.evals.html import table as _table
from casework.evals.results import CaseResult, EvalRun

__all__ = [
    "CASE_HEAD",
    "FAILED_SHOWN",
    "app_plots",
    "calibration_fit_table",
    "calibration_panel",
    "cascade_section",
    "case_rows",
    "confusion_table",
    "efficiency_plots",
    "failed_table",
    "groups_table",
    "headline_table",
    "judge_section",
    "meta_table",
    "path_text",
    "targets_table",
    "trajectory_section",
]


def path_text(case: CaseResult) -> str:
    names = [c["name"] for c in case.tool_calls]
    return " → ".join(names) if names else "(no tool calls)"


# --------------------------------------------------------------------------- sections
def meta_table(run: EvalRun) -> str:
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


def targets_table(run: EvalRun) -> str:
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


def headline_table(run: EvalRun) -> str:
    targeted = {t.metric for t in run.target_results}
    cards = [
        f"<div class='card'><div class='name'>{_e(metric_label(k))}</div>"
        f"<div class='value'>{_e(format_metric(k, run.metrics[k]))}</div></div>"
        for k in HEADLINE
        if run.metrics.get(k) is not None and k not in targeted
    ]
    return "<div class='cards'>" + "".join(cards) + "</div>" if cards else ""


def confusion_table(details: Mapping[str, Any]) -> str:
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


def calibration_panel(details: Mapping[str, Any]) -> tuple[str, str]:
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


def efficiency_plots(run: EvalRun) -> str:
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


def trajectory_section(run: EvalRun) -> str:
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
    return f"<div class='grid2'><div class='panel'>{img}{TYPES_NOTE}</div><div class='panel'>{table}</div></div>"


TYPES_NOTE = (
    "<table style='margin-top:12px'><tbody>"
    "<tr><td><b>optimal</b></td><td>exactly the reference tools (order aside)</td></tr>"
    "<tr><td><b>exploratory</b></td><td>the reference tools plus extra calls</td></tr>"
    "<tr><td><b>recovery</b></td><td>a call failed, then a retry of the tool succeeded</td></tr>"
    "<tr><td><b>circular</b></td><td>repeated an identical call with no new information in between</td></tr>"
    "<tr><td><b>dead_end</b></td><td>a limit or budget ended the run before a decision</td></tr>"
    "<tr><td><b>incomplete</b></td><td>a reference tool was never called</td></tr>"
    "</tbody></table>"
)


def groups_table(details: Mapping[str, Any]) -> str:
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


def judge_section(run: EvalRun) -> str:
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


def case_rows(cases: Sequence[CaseResult]) -> list[list[str]]:
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
                f"<span class='path'>{_e(path_text(c))}</span><br><span class='note'>{_e(traj)}</span>",
                f"<span class='id'><a href='{href}'>page</a> · <a href='{_e(c.trace)}'>jsonl</a></span>"
                if c.trace
                else f"<a href='{href}'>page</a>",
            ]
        )
    return rows


CASE_HEAD = ["case", "scenario", "expected", "got", "conf.", "outcome", "tool path", "trace"]
FAILED_SHOWN = 40


def failed_table(failed: Sequence[CaseResult]) -> str:
    if not failed:
        return "<p class='note'>No case failed.</p>"
    ranked = sorted(failed, key=lambda c: (c.error is None, -(c.confidence or 0.0), c.index))
    head = (
        "<div class='panel'>"
        + _table(CASE_HEAD, case_rows(ranked[:FAILED_SHOWN]), numeric=(4,))
        + "</div>"
    )
    if len(ranked) <= FAILED_SHOWN:
        return head
    rest = _table(CASE_HEAD, case_rows(ranked[FAILED_SHOWN:]), numeric=(4,))
    return (
        head
        + f"<details><summary>{len(ranked) - FAILED_SHOWN} more failed cases</summary><div class='panel'>{rest}</div></details>"
    )


def app_plots(run: EvalRun, folder: Path | None) -> str:
    images = []
    for rel in run.details.get("plots") or []:
        path = (folder or Path(run.run_dir or ".")) / rel
        if path.is_file():
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            images.append(
                f"<div class='panel'><img alt='{_e(path.stem)}' src='data:image/png;base64,{data}'></div>"
            )
    return "<h2>App figures</h2>" + "".join(images) if images else ""


def calibration_fit_table(run: EvalRun) -> str:
    fit = run.details.get("calibration_fit")
    if not fit:
        return ""
    rows = [
        [
            "before calibration",
            format_metric("ece", run.metrics.get("ece_before_calibration")),
            f"{fit['pairs']} decisions",
        ]
    ]
    if "stored" in fit:
        rows.append(
            [
                "after the stored calibration",
                format_metric("ece", fit["stored"]["ece"]),
                f"fitted on {_e(fit['stored']['source'])}",
            ]
        )
    if "cross_fit" in fit:
        rows.append(
            [
                "after calibration fitted on this run",
                format_metric("ece", fit["cross_fit"]["ece"]),
                f"{fit['cross_fit']['folds']}-fold cross-fit",
            ]
        )
    return "<h3 style='margin-top:14px'>Expected calibration error</h3>" + _table(
        ["", "ECE", "note"], rows, numeric=(1,)
    )


def cascade_section(run: EvalRun, folder: Path | None) -> str:
    """Who decided (share and accuracy per layer) and, when every layer ran on every case,
    the accuracy–cost curve (also written as ``cascade_curve.svg`` in the run folder)."""
    cascade = run.details.get("cascade")
    if not cascade:
        return ""
    rows = []
    for name in cascade["layers"]:
        layer = cascade["per_layer"][name]
        rows.append(
            [
                _e(name),
                _percent(run.metrics.get(f"layer_share.{name}")),
                format_metric("accuracy", layer["decided_accuracy"]),
                f"{layer['ran']}",
                f"{layer['seconds_mean']:.2f}" if layer["seconds_mean"] is not None else "–",
            ]
        )
    rows.append(["<i>nobody sure</i>", _percent(run.metrics.get("undecided_share")), "", "", ""])
    html = "<h2>Cascade</h2>" + _table(
        [
            "layer",
            "share decided",
            "accuracy of its decisions",
            "cases it ran on",
            "s / case it ran",
        ],
        rows,
        numeric=(1, 2, 3, 4),
    )
    curve = cascade.get("curve")
    if curve:
        from casework.evals._plots import cascade_curve_svg

        svg = cascade_curve_svg(curve)
        if folder is not None:
            (folder / "cascade_curve.svg").write_text(svg, encoding="utf-8")
        svg_body = svg[svg.find("<svg") :]
        html += (
            "<div class='panel'><h3>Accuracy–cost curve (thresholds swept on this run)</h3>"
            + svg_body
            + "<p class='note'>Each point is the cascade fitted for one target accuracy on this "
            "run's cases (in-sample); orange dots are each layer answering every case alone. "
            "Fit and store one with <code>casework eval calibrate RUN --target T</code>.</p></div>"
        )
    return html
