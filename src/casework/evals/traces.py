"""Each case's trace in the run directory: the agent's own JSONL trace, or one written here."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from casework.evals.cassettes import case_filename
from casework.evals.suite import CaseOutput, EvalCase
from casework.redact import scrub

__all__ = ["keep_trace"]


def keep_trace(
    run_dir: Path, trace_root: Path, case: EvalCase, out: CaseOutput | None, error: str | None
) -> str:
    """Move the agent's trace to ``traces/<case>.jsonl`` (or write one from what the case
    returned) and return its path relative to the run directory."""
    rel = Path("traces") / f"{case_filename(case.id)}.jsonl"
    dest = run_dir / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    run = out.run if out is not None else None
    source = Path(run.trace_path) if run is not None and run.trace_path is not None else None
    if source is not None and source.is_file():
        if source.parent == trace_root:
            os.replace(source, dest)
        else:
            shutil.copyfile(source, dest)
        return rel.as_posix()
    records: list[dict[str, Any]] = [
        {"type": "case_start", "case_id": case.id, "inputs": case.inputs}
    ]
    if run is not None:
        for call in run.tool_calls:
            records.append({"type": "tool", "tool": call.name, "input": call.args, "id": call.id})
            records.append(
                {
                    "type": "tool_result",
                    "tool": call.name,
                    "output": call.output,
                    "ok": call.ok,
                    "id": call.id,
                }
            )
    if out is not None:
        usage = out.usage.to_dict() if out.usage is not None else None
        ended_by = run.ended_by.value if run is not None else None
        records.append(
            {"type": "run_end", "ended_by": ended_by, "result": out.output, "usage": usage}
        )
    if error is not None:
        records.append({"type": "error", "error": error})
    with dest.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(scrub(json.dumps(r, default=str)) + "\n")
    return rel.as_posix()
