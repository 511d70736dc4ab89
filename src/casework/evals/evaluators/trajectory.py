"""Tool choice and trajectory evaluators.

A trajectory is the ordered list of a run's tool calls (``ToolCallRecord``: name, args, ok,
output); the reference is the list of tool names a good run calls (``expected["tools"]``).
The terminal submit tool is left out of path comparisons unless the reference names it.

Definitions (each has a direct test on a hand-built trajectory):

* **strict** match: the same tool names in the same order.
* **unordered** match: the same names with the same counts, in any order.
* **subset**: every call is matched by a distinct reference call (nothing extra; some may be
  missing). **superset**: every reference call is matched by a distinct call (nothing
  missing; extras allowed). Both count repeats (multisets), as agentevals does.
* **path length**: calls on the path; **optimal length**: the reference's length;
  **path ratio** = length / optimal; **path efficiency** = min(1, optimal / length).
* **redundant** call: repeats the tool *and* arguments of an earlier call that succeeded.
* **circular** call: repeats the tool and arguments of an earlier call (the latest such, ``i``)
  while no call strictly between ``i`` and it brought new information, where a call brings
  new information when it succeeds and its output was not seen before in the run. A retry
  that succeeds after the earlier identical call failed is not circular (it is a
  self-correction). A trajectory is circular when it has a circular call.
* **self-correction**: a failed call followed later by a successful call of the same tool.
* **hallucinated parameter**: an argument value that contradicts the expected value
  (``expected["tool_args"]``), or an identifier-like value (one token with a digit, such as
  ``E-101``) that appears neither in the case inputs nor in any earlier tool output.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from casework.evals.evaluators.classification import values_match

__all__ = [
    "MATCH_MODES",
    "Call",
    "MatchMode",
    "ToolChoice",
    "TrajectoryScores",
    "as_calls",
    "circular_calls",
    "classify_trajectory",
    "edit_distance",
    "evaluate_trajectory",
    "match_trajectory",
    "redundant_calls",
    "self_corrections",
    "tool_choice",
    "tool_path",
]

MatchMode = Literal["strict", "unordered", "subset", "superset"]
MATCH_MODES: tuple[MatchMode, ...] = ("strict", "unordered", "subset", "superset")
DEFAULT_SUBMIT = "submit_decision"


@dataclass(frozen=True)
class Call:
    """A tool call as the evaluators see it (``ToolCallRecord`` or a dict converts to it)."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    ok: bool = True
    output: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.name, json.dumps(dict(self.args), sort_keys=True, default=str)


def as_calls(calls: Iterable[Any]) -> list[Call]:
    """Normalise ``ToolCallRecord``s, dicts (``name``/``args``/``ok``/``output``) or bare names."""
    out: list[Call] = []
    for c in calls:
        if isinstance(c, Call):
            out.append(c)
        elif isinstance(c, str):
            out.append(Call(c))
        elif isinstance(c, Mapping):
            out.append(
                Call(
                    str(c["name"]),
                    dict(c.get("args") or {}),
                    bool(c.get("ok", True)),
                    str(c.get("output") or ""),
                )
            )
        else:
            out.append(
                Call(
                    c.name,
                    dict(getattr(c, "args", {}) or {}),
                    bool(getattr(c, "ok", True)),
                    str(getattr(c, "output", "") or ""),
                )
            )
    return out


def tool_path(
    calls: Iterable[Any], *, submit_tool: str = DEFAULT_SUBMIT, keep_submit: bool = False
) -> list[str]:
    """Tool names in call order, without the submit tool unless ``keep_submit``."""
    return [c.name for c in as_calls(calls) if keep_submit or c.name != submit_tool]


def match_trajectory(actual: Sequence[str], reference: Sequence[str], mode: MatchMode) -> bool:
    """Whether the actual tool path matches the reference in the given mode (see module doc)."""
    if mode == "strict":
        return list(actual) == list(reference)
    a, r = Counter(actual), Counter(reference)
    if mode == "unordered":
        return a == r
    if mode == "subset":
        return all(a[k] <= r[k] for k in a)
    if mode == "superset":
        return all(a[k] >= r[k] for k in r)
    raise ValueError(f"unknown match mode {mode!r}; use one of {', '.join(MATCH_MODES)}")


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two tool paths (insert, delete, substitute a call)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        cur = [i]
        for j, y in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def redundant_calls(calls: Iterable[Any]) -> list[int]:
    """Indices of calls that repeat the tool and arguments of an earlier successful call."""
    answered: set[tuple[str, str]] = set()
    out = []
    for j, c in enumerate(as_calls(calls)):
        if c.key in answered:
            out.append(j)
        if c.ok:
            answered.add(c.key)
    return out


def circular_calls(calls: Iterable[Any]) -> list[int]:
    """Indices of calls that repeat an earlier identical call with no progress in between."""
    cs = as_calls(calls)
    seen_outputs: set[str] = set()
    new_info: list[bool] = []
    last: dict[tuple[str, str], int] = {}
    out = []
    for j, c in enumerate(cs):
        i = last.get(c.key)
        if i is not None:
            productive_retry = not cs[i].ok and c.ok
            progress = any(new_info[i + 1 : j])
            if not productive_retry and not progress:
                out.append(j)
        new_info.append(c.ok and c.output not in seen_outputs)
        if c.ok:
            seen_outputs.add(c.output)
        last[c.key] = j
    return out


def self_corrections(calls: Iterable[Any]) -> tuple[int, int]:
    """(failed calls, failed calls followed later by a successful call of the same tool)."""
    cs = as_calls(calls)
    errors = corrected = 0
    for i, c in enumerate(cs):
        if not c.ok:
            errors += 1
            if any(d.ok and d.name == c.name for d in cs[i + 1 :]):
                corrected += 1
    return errors, corrected


@dataclass
class ToolChoice:
    expected: list[str]
    called: list[str]
    missing: list[str]
    """Reference tools never called."""
    unnecessary: list[str]
    """Tools called that the reference does not name."""
    correct: bool
    """Nothing missing and nothing unnecessary (order and repeats aside)."""
    precision: float
    recall: float
    params_checked: int = 0
    params_correct: int = 0
    params_total: int = 0
    """Argument values passed in all calls on the path."""
    hallucinated: list[dict[str, Any]] = field(default_factory=list)
    """``{"tool", "arg", "value", "why"}`` per hallucinated argument."""

    @property
    def param_accuracy(self) -> float | None:
        return self.params_correct / self.params_checked if self.params_checked else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["param_accuracy"] = self.param_accuracy
        return data


def _identifier_like(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 1 < len(value) <= 64
        and not any(ch.isspace() for ch in value)
        and any(ch.isdigit() for ch in value)
    )


def _scalars(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _scalars(v)
    else:
        yield value


def _arg_matches(expected: Any, actual: Any) -> bool:
    """An argument as expected; a list of plain values (ids, check names) in any order, since
    the tools read those as sets."""
    if (
        isinstance(expected, list)
        and isinstance(actual, list)
        and all(isinstance(v, str | int | float) for v in [*expected, *actual])
    ):
        return sorted(map(str, expected)) == sorted(map(str, actual))
    return values_match(expected, actual)


def tool_choice(
    calls: Iterable[Any],
    expected_tools: Sequence[str] | None,
    *,
    expected_args: Mapping[str, Mapping[str, Any]] | None = None,
    inputs: Mapping[str, Any] | None = None,
    submit_tool: str = DEFAULT_SUBMIT,
) -> ToolChoice:
    """Right tools called, missing, unnecessary, parameter accuracy and hallucinated parameters.

    ``inputs`` (the case inputs) turns on the grounding check for identifier-like values.
    """
    expected = list(expected_tools or [])
    keep_submit = submit_tool in expected
    cs = [c for c in as_calls(calls) if keep_submit or c.name != submit_tool]
    called = [c.name for c in cs]
    exp_set, called_set = set(expected), set(called)
    missing = sorted(exp_set - called_set)
    unnecessary = sorted(called_set - exp_set)
    hits = len(exp_set & called_set)
    precision = hits / len(called_set) if called_set else (1.0 if not exp_set else 0.0)
    recall = hits / len(exp_set) if exp_set else 1.0
    result = ToolChoice(
        expected=expected,
        called=called,
        missing=missing,
        unnecessary=unnecessary,
        correct=not missing and not unnecessary,
        precision=precision,
        recall=recall,
    )
    grounding = json.dumps(inputs, default=str).lower() if inputs is not None else None
    outputs_so_far: list[str] = []
    for c in cs:
        want = (expected_args or {}).get(c.name) or {}
        for arg, value in c.args.items():
            result.params_total += 1
            flagged = False
            if arg in want:
                result.params_checked += 1
                if _arg_matches(want[arg], value):
                    result.params_correct += 1
                else:
                    result.hallucinated.append(
                        {
                            "tool": c.name,
                            "arg": arg,
                            "value": value,
                            "why": f"expected {want[arg]!r}",
                        }
                    )
                    flagged = True
            if grounding is not None and not flagged:
                seen = grounding + "\n" + "\n".join(outputs_so_far).lower()
                for scalar in _scalars(value):
                    if _identifier_like(scalar) and scalar.lower() not in seen:
                        result.hallucinated.append(
                            {
                                "tool": c.name,
                                "arg": arg,
                                "value": value,
                                "why": f"{scalar!r} appears in no input or earlier tool output",
                            }
                        )
                        break
        outputs_so_far.append(c.output)
    return result


@dataclass
class TrajectoryScores:
    path: list[str]
    path_length: int
    redundant: list[int]
    """Indices (on the path) of redundant calls."""
    circular: list[int]
    """Indices (on the path) of circular calls."""
    errors: int
    corrected: int
    type: str
    """optimal, exploratory, recovery, circular, dead_end, incomplete, interrupted or unscored."""
    reference: list[str] | None = None
    optimal_length: int | None = None
    path_ratio: float | None = None
    path_efficiency: float | None = None
    edit_distance: int | None = None
    matches: dict[str, bool] = field(default_factory=dict)
    """Mode -> match, for strict, unordered, subset and superset (empty without a reference)."""

    @property
    def is_circular(self) -> bool:
        return bool(self.circular)

    @property
    def optimal(self) -> bool | None:
        """Exactly the reference tools, nothing missing or extra (order aside)."""
        return self.matches.get("unordered") if self.reference is not None else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["is_circular"] = self.is_circular
        data["optimal"] = self.optimal
        return data


def classify_trajectory(
    *,
    ended_by: str | None,
    circular: bool,
    corrected: int,
    matches: Mapping[str, bool],
) -> str:
    """The trajectory type of the evaluation plan: dead_end (a limit or budget ended the run, or
    no decision), circular, recovery (an error then a successful retry), optimal (the reference
    tools exactly), exploratory (the reference tools plus extras), incomplete (a reference tool
    missing), interrupted (paused for approval), unscored (no reference)."""
    if ended_by == "interrupted":
        return "interrupted"
    if ended_by not in (None, "submit"):
        return "dead_end"
    if circular:
        return "circular"
    if corrected:
        return "recovery"
    if not matches:
        return "unscored"
    if matches.get("unordered"):
        return "optimal"
    if matches.get("superset"):
        return "exploratory"
    return "incomplete"


def evaluate_trajectory(
    calls: Iterable[Any],
    reference: Sequence[str] | None = None,
    *,
    submit_tool: str = DEFAULT_SUBMIT,
    ended_by: str | None = None,
) -> TrajectoryScores:
    """Every trajectory metric of one run; the reference ones only when a reference is given."""
    all_calls = as_calls(calls)
    keep_submit = reference is not None and submit_tool in reference
    on_path = [c for c in all_calls if keep_submit or c.name != submit_tool]
    path = [c.name for c in on_path]
    circular = circular_calls(on_path)
    errors, corrected = self_corrections(all_calls)
    scores = TrajectoryScores(
        path=path,
        path_length=len(path),
        redundant=redundant_calls(on_path),
        circular=circular,
        errors=errors,
        corrected=corrected,
        type="unscored",
    )
    if reference is not None:
        ref = list(reference)
        scores.reference = ref
        scores.optimal_length = len(ref)
        scores.matches = {m: match_trajectory(path, ref, m) for m in MATCH_MODES}
        scores.edit_distance = edit_distance(path, ref)
        if ref:
            scores.path_ratio = len(path) / len(ref)
        elif not path:
            scores.path_ratio = 1.0
        scores.path_efficiency = 1.0 if not path else min(1.0, len(ref) / len(path))
    scores.type = classify_trajectory(
        ended_by=ended_by, circular=bool(circular), corrected=corrected, matches=scores.matches
    )
    return scores
