"""Reports of a run: ``report.json`` and a self-contained ``report.html``, plus one HTML page per
case (``traces/<case>.html``: inputs, output, scores, trajectory graph, trace timeline).

The HTML has inline CSS, plots as base64 PNG and graphs as inline SVG: no external assets, no
JavaScript, so it can be mailed, archived or opened from a CI artifact as it is.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from casework.evals.casepages import case_href as _case_href
from casework.evals.casepages import render_case_html
from casework.evals.formatting import HEADLINE, format_metric, metric_label
from casework.evals.html import e as _e
from casework.evals.html import page as _page
from casework.evals.html import percent as _percent
from casework.evals.html import pill as _pill
from casework.evals.html import table as _table
from casework.evals.results import CaseResult, EvalRun
from casework.evals.suite import Plot

__all__ = [
    "REPORT_SCHEMA",
    "draw_plots",
    "format_metric",
    "metric_label",
    "render_case_html",
    "render_html",
    "report_json",
    "write_report",
]

REPORT_SCHEMA = "casework.eval.report/1"


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


def _app_plots(run: EvalRun, folder: Path | None) -> str:
    images = []
    for rel in run.details.get("plots") or []:
        path = (folder or Path(run.run_dir or ".")) / rel
        if path.is_file():
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            images.append(
                f"<div class='panel'><img alt='{_e(path.stem)}' src='data:image/png;base64,{data}'></div>"
            )
    return "<h2>App figures</h2>" + "".join(images) if images else ""


def _calibration_fit(run: EvalRun) -> str:
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


def render_html(run: EvalRun, folder: Path | None = None) -> str:
    """The run's report page (self-contained: app figures from ``folder`` are inlined)."""
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
        body.append(
            f"<div class='panel' style='margin-top:14px'>{cal_text}{_calibration_fit(run)}</div>"
        )
    body.append(_app_plots(run, folder))
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


def draw_plots(run: EvalRun, folder: Path, plots: Sequence[Plot]) -> list[str]:
    """Draw the suite's plots into ``folder/plots``; their paths relative to ``folder``. A
    plot that fails is noted in the run's details, not raised: the report still gets written."""
    drawn = []
    for plot in plots:
        try:
            path = plot(run, folder / "plots")
        except Exception as exc:
            name = getattr(plot, "__name__", "plot")
            run.details.setdefault("plot_errors", {})[name] = f"{type(exc).__name__}: {exc}"
            continue
        if path is not None:
            drawn.append(Path(path).relative_to(folder).as_posix())
    return drawn


def write_report(
    run: EvalRun,
    out_dir: str | Path | None = None,
    *,
    submit_tool: str | None = None,
    plots: Sequence[Plot] = (),
) -> Path:
    """Write ``report.json``, ``report.html``, the suite's ``plots`` and ``traces/<case>.html``
    into the run directory (or ``out_dir``); returns the HTML report's path."""
    folder = Path(out_dir or run.run_dir or ".")
    (folder / "traces").mkdir(parents=True, exist_ok=True)
    if plots:
        run.details["plots"] = draw_plots(run, folder, plots)
    (folder / "report.json").write_text(
        json.dumps(report_json(run), indent=2, default=str, ensure_ascii=False), encoding="utf-8"
    )
    for case in run.cases:
        (folder / _case_href(case)).write_text(
            render_case_html(run, case, submit_tool=submit_tool), encoding="utf-8"
        )
    html_path = folder / "report.html"
    html_path.write_text(render_html(run, folder), encoding="utf-8")
    return html_path
