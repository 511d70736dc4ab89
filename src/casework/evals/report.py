"""Reports of a run: ``report.json`` and a self-contained ``report.html``, plus one HTML page per
case (``traces/<case>.html``: inputs, output, scores, trajectory graph, trace timeline).

The HTML has inline CSS, plots as base64 PNG and graphs as inline SVG: no external assets, no
JavaScript, so it can be mailed, archived or opened from a CI artifact as it is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casework.evals.casepages import case_href as _case_href
from casework.evals.casepages import render_case_html
from casework.evals.formatting import HEADLINE, format_metric, metric_label
from casework.evals.html import e as _e
from casework.evals.html import page as _page
from casework.evals.html import table as _table
from casework.evals.learning_curve import learning_section
from casework.evals.results import EvalRun
from casework.evals.sections import (
    CASE_HEAD,
    app_plots,
    calibration_fit_table,
    calibration_panel,
    cascade_section,
    case_rows,
    confusion_table,
    efficiency_plots,
    failed_table,
    groups_table,
    headline_table,
    judge_section,
    meta_table,
    targets_table,
    trajectory_section,
)
from casework.evals.suite import Plot
from casework.redact import scrub

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


def render_html(run: EvalRun, folder: Path | None = None) -> str:
    """The run's report page (self-contained: app figures from ``folder`` are inlined)."""
    failed = run.failed_cases
    img, cal_text = calibration_panel(run.details)
    other = sorted(k for k in run.metrics if k not in HEADLINE)
    body = [
        f"<h1>Evaluation · {_e(run.app)}</h1><div class='sub'>run <code>{_e(run.run_id)}</code></div>",
        meta_table(run),
        "<h2>Targets</h2>",
        targets_table(run),
        "<h2>Headline metrics</h2>",
        headline_table(run),
        "<h2>Decisions</h2><div class='grid2'>",
        f"<div class='panel'><h3>Confusion matrix</h3>{confusion_table(run.details)}</div>",
        f"<div class='panel'><h3>Calibration · reliability diagram</h3>{img}{cal_text if not img else ''}</div></div>",
    ]
    if img:
        body.append(
            f"<div class='panel' style='margin-top:14px'>{cal_text}{calibration_fit_table(run)}</div>"
        )
    body.append(cascade_section(run, folder))
    body.append(learning_section(run, folder))
    body.append(app_plots(run, folder))
    body += [
        "<h2>Latency and cost</h2>",
        efficiency_plots(run),
        "<h2>Trajectories and tool choice</h2>",
        trajectory_section(run),
        groups_table(run.details),
        judge_section(run),
        f"<h2>Failed cases <span class='note'>({len(failed)} of {len(run.cases)}; errors first, then the most "
        "confident mistakes)</span></h2>",
        failed_table(failed),
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
        + _table(CASE_HEAD, case_rows(run.cases), numeric=(4,))
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
    # A secret a case's input or a model's answer carried is not written down (casework.redact).
    (folder / "report.json").write_text(
        scrub(json.dumps(report_json(run), indent=2, default=str, ensure_ascii=False)),
        encoding="utf-8",
    )
    for case in run.cases:
        (folder / _case_href(case)).write_text(
            scrub(render_case_html(run, case, submit_tool=submit_tool)), encoding="utf-8"
        )
    html_path = folder / "report.html"
    html_path.write_text(scrub(render_html(run, folder)), encoding="utf-8")
    return html_path
