"""Running a strategy over an evaluation set and summarising it (until ``casework eval`` wires it).

A case is one JSONL line ``{"id", "inputs": {"file", "fields"?}, "expected": {"gold"}, "metadata"}``
(``file`` relative to the JSONL). Each case adds its file for the evaluating user (OCR
included, timed), runs the strategy, and scores the extraction against the gold fields with
``normalize.field_scores``. The summary has micro precision / recall / F1, exact match per
field, completion rate, tool calls and seconds per document, and the confidences' calibration.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ExtractionInput
from casework.apps.documents.normalize import _lookup, calibration, field_scores
from casework.apps.documents.service import add_files
from casework.errors import InputError

__all__ = ["DATASET", "load_cases", "run_case", "summarize"]

DATASET = Path(__file__).parent / "data" / "eval" / "documents.jsonl"


def load_cases(path: Path = DATASET, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Cases of a JSONL file; a malformed line is one sentence naming the line."""
    if not path.is_file():
        raise InputError(f"No dataset {str(path)!r}; pass a JSONL file with one case per line.")
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path.name} line {number} is not JSON ({exc.msg}).") from None
        if (
            "inputs" not in case and "file" in case
        ):  # the short form: {id, file, fields, gold}
            case = {
                "id": case.get("id", str(number)),
                "inputs": {"file": case["file"], "fields": case.get("fields")},
                "expected": {"gold": case.get("gold", {})},
                "metadata": {},
            }
        if not isinstance(case.get("inputs", {}).get("file"), str):
            raise InputError(f"{path.name} line {number} has no inputs.file (a PDF or image path).")
        case["_base"] = str(path.parent)
        cases.append(case)
    return cases[:limit] if limit else cases


def run_case(
    case: dict[str, Any],
    strategy: Callable[[ExtractionInput, DocumentsDeps], Any],
    deps: DocumentsDeps,
    user_id: int,
) -> dict[str, Any]:
    """One case end to end: add the file, run, score. Errors become a failed output, not a crash."""
    started = time.perf_counter()
    path = Path(case["_base"]) / case["inputs"]["file"]
    output: dict[str, Any] = {"id": case["id"], "fields": {}, "confidences": {}, "status": "failed"}
    try:
        doc = add_files(deps, user_id, [path])[0]
        output["read_seconds"] = doc.read_seconds if doc.ocr_pages else 0.0
        decision = strategy(
            ExtractionInput(
                document_id=doc.id, user_id=user_id, fields=case["inputs"].get("fields")
            ),
            deps,
        )
        output |= {
            "fields": decision.fields,
            "confidences": decision.confidence_scores,
            "status": decision.verdict,
            "method": decision.method,
            "tool_calls": len(decision.run.tool_calls) if decision.run else 0,
        }
    except InputError as exc:
        output["error"] = str(exc)
    output["seconds"] = time.perf_counter() - started
    output["scores"] = field_scores(case["expected"], output)
    return output


def summarize(cases: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> dict[str, Any]:
    tp = sum(o["scores"]["tp"] for o in outputs)
    fp = sum(o["scores"]["fp"] for o in outputs)
    fn = sum(o["scores"]["fn"] for o in outputs)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    per_field: dict[str, list[bool]] = {}
    pairs: list[tuple[float, bool]] = []
    for case, out in zip(cases, outputs, strict=True):
        for name, ok in out["scores"]["exact"].items():
            per_field.setdefault(name, []).append(ok)
            found, conf = _lookup(out.get("confidences") or {}, name)
            if (
                found
                and isinstance(conf, int | float)
                and case["expected"]["gold"].get(name) is not None
            ):
                pairs.append((float(conf), ok))
    n = len(outputs) or 1
    return {
        "cases": len(outputs),
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "exact_match_per_field": {k: sum(v) / len(v) for k, v in sorted(per_field.items())},
        "completion_rate": sum(o["status"] == "completed" for o in outputs) / n,
        "tool_calls_per_document": sum(o.get("tool_calls", 0) for o in outputs) / n,
        "seconds_per_document": sum(o["seconds"] for o in outputs) / n,
        "calibration": calibration(pairs),
    }
