"""One HTML page per case (``traces/<case>.html``): outcome, inputs / expected / output,
scores, the trajectory graph and the trace timeline."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from casework.evals._svg import trajectory_svg
from casework.evals.cassettes import case_filename
from casework.evals.formatting import format_metric
from casework.evals.html import e as _e
from casework.evals.html import json_block as _json_block
from casework.evals.html import page as _page
from casework.evals.html import percent as _percent
from casework.evals.html import pill as _pill
from casework.evals.html import table as _table
from casework.evals.results import CaseResult, EvalRun

__all__ = ["case_href", "render_case_html"]


def case_href(case: CaseResult) -> str:
    """The case page's path relative to the run directory."""
    return f"traces/{case_filename(case.case_id)}.html"


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


def _score_rows(case: CaseResult) -> list[list[str]]:
    """The scores table's rows: fields, trajectory, tool choice, usage, domain, judge."""
    traj = case.trajectory or {}
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
    return score_rows


def render_case_html(run: EvalRun, case: CaseResult, *, submit_tool: str | None = None) -> str:
    """One case's page: outcome, inputs / expected / output, scores, trajectory graph, trace."""
    submit_tool = submit_tool or run.config.get("submit_tool") or "submit_decision"
    outcome = (
        f"<span class='pill bad'>error</span> {_e(case.error)}"
        if case.error
        else _pill(case.correct, "correct", "wrong", "not scored")
    )
    reference = case.expected.get("tools")
    svg = trajectory_svg(
        case.tool_calls,
        reference,
        submit_tool=submit_tool,
        ended_by=case.ended_by or ("error" if case.error else None),
        verdict=case.verdict,
    )
    score_rows = _score_rows(case)
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
