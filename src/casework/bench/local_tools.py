"""Tool-selection benchmark for the bundled local model (``casework bench local-tools``).

Twenty single-turn cases (``local_tools_cases.json``): each binds 3–5 tools, sends one user
prompt and compares the model's call with the expected tool and argument values. A separate
multi-step run measures llama.cpp's prefix cache: after step 1, each step should evaluate only
the tokens appended since the previous prompt + output.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from importlib import resources
from types import TracebackType
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from casework.errors import CaseworkError
from casework.llm.roles import model_name

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["load_cases", "print_local_tools_report", "run_local_tools_bench"]

FINAL_ANSWER = "final_answer"
_WARM_SLACK = 3  # tokens beyond the new ones a warm step may evaluate (see _prefix_cache_run)


def load_cases() -> dict[str, Any]:
    """The benchmark data: ``tools`` (name -> description, parameters), ``cases``, ``multi_step``."""
    text = resources.files("casework.bench").joinpath("local_tools_cases.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def _tool_dicts(data: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": name, **data["tools"][name]}} for name in names
    ]


def _norm(value: Any) -> Any:
    """Compare values the way a person would: case, spacing and number spelling do not matter."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = re.sub(r"\s+", " ", value).strip().casefold()
        try:
            return float(text)
        except ValueError:
            return text
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def _outcome(message: AIMessage) -> tuple[str, dict[str, Any]]:
    if message.tool_calls:
        call = message.tool_calls[0]
        return call["name"], dict(call["args"])
    return FINAL_ANSWER, {"text": message.content}


def _metrics(message: AIMessage) -> dict[str, Any]:
    usage: dict[str, Any] = dict(message.usage_metadata or {})
    meta = message.response_metadata or {}
    return {
        "prompt_tokens": usage.get("input_tokens"),
        "completion_tokens": usage.get("output_tokens"),
        "prompt_tokens_evaluated": meta.get("prompt_tokens_evaluated"),
    }


def _call(model: Any, messages: list[BaseMessage]) -> tuple[AIMessage | None, str | None, float]:
    start = time.perf_counter()
    try:
        reply = model.invoke(messages)
    except CaseworkError as exc:  # an unusable reply counts as invalid output
        return None, str(exc), time.perf_counter() - start
    return reply, None, time.perf_counter() - start


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "p50": None, "max": None}
    return {
        "mean": round(statistics.fmean(values), 3),
        "p50": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def _resolve(model: BaseChatModel | None) -> BaseChatModel:
    if model is not None:
        return model
    from casework.config import get_settings
    from casework.llm.roles import LOCAL_ROLE, RoleModels

    return RoleModels(get_settings())(LOCAL_ROLE)


def run_local_tools_bench(
    model: BaseChatModel | None = None, *, limit: int | None = None, progress: bool = True
) -> dict[str, Any]:
    """Run the tool-selection cases and the prefix-cache run; return every figure as a dict.

    ``model``: any chat model with ``bind_tools`` (default: the bundled local model).
    ``limit``: run only the first N cases. ``progress``: a Rich progress bar on stderr.
    Keys: ``model``, ``cases``, ``valid_output_rate``, ``tool_accuracy``,
    ``argument_accuracy``, ``seconds_per_call`` (mean/p50/max),
    ``prompt_tokens_evaluated_per_call`` (mean/p50/max), ``rows`` (one per case) and
    ``prefix_cache`` (per-step token figures of the multi-step run).
    """
    data = load_cases()
    cases = data["cases"][: limit if limit is not None else None]
    chat = _resolve(model)
    name = model_name(chat)
    # Load before timing so the first case's seconds are generation, not model load.
    loader = getattr(chat, "load", None)
    load_seconds = loader() if callable(loader) else None

    rows: list[dict[str, Any]] = []
    with _progress(progress, len(cases) + 1) as advance:
        for case in cases:
            bound = chat.bind_tools(_tool_dicts(data, case["tools"]))
            reply, error, seconds = _call(bound, [HumanMessage(case["prompt"])])
            expected = case["expected"]
            row: dict[str, Any] = {
                "id": case["id"],
                "expected_tool": expected["tool"],
                "seconds": round(seconds, 3),
                "valid": reply is not None,
                "error": error,
                "tool": None,
                "args": None,
                "tool_ok": False,
                "args_ok": False,
            }
            if reply is not None:
                tool, args = _outcome(reply)
                row.update(tool=tool, args=args, **_metrics(reply))
                row["tool_ok"] = tool == expected["tool"]
                row["args_ok"] = row["tool_ok"] and all(
                    k in args and _norm(args[k]) == _norm(v) for k, v in expected["args"].items()
                )
            rows.append(row)
            advance()
        prefix = _prefix_cache_run(chat, data)
        advance()

    n = len(rows) or 1
    evaluated = [r["prompt_tokens_evaluated"] for r in rows if r.get("prompt_tokens_evaluated")]
    return {
        "model": name,
        "load_seconds": round(load_seconds, 3) if load_seconds is not None else None,
        "cases": len(rows),
        "valid_output_rate": round(sum(r["valid"] for r in rows) / n, 3),
        "tool_accuracy": round(sum(r["tool_ok"] for r in rows) / n, 3),
        "argument_accuracy": round(sum(r["args_ok"] for r in rows) / n, 3),
        "seconds_per_call": _stats([r["seconds"] for r in rows]),
        "prompt_tokens_evaluated_per_call": _stats([float(v) for v in evaluated]),
        "rows": rows,
        "prefix_cache": prefix,
    }


def _prefix_cache_run(chat: BaseChatModel, data: dict[str, Any], steps: int = 3) -> dict[str, Any]:
    """A tool loop of up to ``steps`` model calls with canned tool results appended in between.

    For each step: total prompt tokens, tokens evaluated, and ``new_tokens`` = tokens appended
    since the previous prompt + output. A warm cache evaluates ``new_tokens`` plus a little:
    +1 because llama.cpp never decodes the last sampled token (the end of turn), and up to +2
    more when the model split the JSON's tail differently from how the tokenizer re-splits the
    same text (e.g. ``"}`` + ``}`` generated vs ``"}}`` re-tokenized), which ends the reusable
    prefix a token or two early. ``warm`` allows that slack; a cold cache would evaluate the
    whole prompt.
    """
    spec = data["multi_step"]
    bound = chat.bind_tools(_tool_dicts(data, spec["tools"]))
    messages: list[BaseMessage] = [SystemMessage(spec["system"]), HumanMessage(spec["prompt"])]
    rows: list[dict[str, Any]] = []
    previous: dict[str, Any] | None = None
    for step in range(1, steps + 1):
        reply, error, seconds = _call(bound, messages)
        if reply is None:
            rows.append({"step": step, "error": error, "seconds": round(seconds, 3)})
            break
        tool, args = _outcome(reply)
        metrics = _metrics(reply)
        row: dict[str, Any] = {
            "step": step,
            "tool": tool,
            "args": args,
            "seconds": round(seconds, 3),
            **metrics,
        }
        if previous is not None and metrics["prompt_tokens"] is not None:
            row["new_tokens"] = metrics["prompt_tokens"] - (
                previous["prompt_tokens"] + previous["completion_tokens"]
            )
            if metrics["prompt_tokens_evaluated"] is not None:
                row["extra_evaluated"] = metrics["prompt_tokens_evaluated"] - row["new_tokens"]
                row["only_new_evaluated"] = row["extra_evaluated"] <= _WARM_SLACK
        rows.append(row)
        previous = metrics
        if not reply.tool_calls:
            break
        call = reply.tool_calls[0]
        result = spec["results"].get(call["name"], "Done.")
        messages += [reply, ToolMessage(result, tool_call_id=call["id"], name=call["name"])]
    later = [r for r in rows[1:] if "only_new_evaluated" in r]
    return {
        "steps": rows,
        "warm": bool(later) and all(r["only_new_evaluated"] for r in later),
    }


class _progress:
    """A Rich progress bar over calls, or nothing; yields an ``advance()`` callable."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled, self.total = enabled, total
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[], None]:
        if not self.enabled:
            return lambda: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        bar = self.bar = Progress(
            TextColumn("local-tools"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        bar.__enter__()
        task = bar.add_task("calls", total=self.total)
        return lambda: bar.advance(task)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(exc_type, exc, tb)


def print_local_tools_report(result: dict[str, Any], console: Any = None) -> None:
    """Print a benchmark result (from ``run_local_tools_bench``) as Rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    spc = result["seconds_per_call"]
    tpc = result["prompt_tokens_evaluated_per_call"]
    summary = Table(title=f"local-tools benchmark — {result['model']}", show_header=False)
    summary.add_column("metric")
    summary.add_column("value", justify="right")
    summary.add_row("model load (s)", str(result.get("load_seconds") or "—"))
    summary.add_row("cases", str(result["cases"]))
    summary.add_row("valid output", f"{result['valid_output_rate']:.0%}")
    summary.add_row("correct tool", f"{result['tool_accuracy']:.0%}")
    summary.add_row("correct arguments", f"{result['argument_accuracy']:.0%}")
    summary.add_row("s/call (mean · p50 · max)", f"{spc['mean']} · {spc['p50']} · {spc['max']}")
    summary.add_row("prompt tokens evaluated/call (mean · p50 · max)",
                    f"{tpc['mean']} · {tpc['p50']} · {tpc['max']}")  # fmt: skip
    console.print(summary)

    rows = Table(title="cases (ok = tool, arguments)")
    for col in ("case", "tool (expected if wrong)", "ok", "s", "eval"):
        rows.add_column(col, no_wrap=True, overflow="ellipsis", max_width=36)
    rows.add_column("arguments / error", ratio=1, min_width=30, overflow="fold")
    for r in result["rows"]:
        detail = r["error"] or json.dumps(r["args"], ensure_ascii=False)
        got = r["tool"] or "—"
        rows.add_row(
            r["id"],
            got if r["tool_ok"] else f"{got} ≠ {r['expected_tool']}",
            ("✓" if r["tool_ok"] else "✗") + ("✓" if r["args_ok"] else "✗"),
            f"{r['seconds']:.1f}",
            str(r.get("prompt_tokens_evaluated") or "—"),
            detail[:160],
        )
    console.print(rows)

    prefix = result["prefix_cache"]
    steps = Table(title=f"prefix cache (warm: {'yes' if prefix['warm'] else 'no'})")
    for col in ("step", "tool", "prompt tokens", "evaluated", "new since previous", "extra", "s"):
        steps.add_column(col, justify="right")
    for s in prefix["steps"]:
        steps.add_row(
            str(s["step"]),
            s.get("tool") or s.get("error", "—")[:40],
            str(s.get("prompt_tokens", "—")),
            str(s.get("prompt_tokens_evaluated", "—")),
            str(s.get("new_tokens", "—")),
            str(s.get("extra_evaluated", "—")),
            f"{s['seconds']:.1f}",
        )
    console.print(steps)
