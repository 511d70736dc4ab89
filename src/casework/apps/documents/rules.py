"""Deterministic domain functions: JSON paths, extraction validation, confidences.

Pure functions over plain values, tested directly; the tools and the repository call them.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from casework.errors import InputError

__all__ = [
    "CUSTOM_NULL_MAX_CONFIDENCE",
    "MAX_PATH_DEPTH",
    "PathSegment",
    "check_path",
    "mean_confidence",
    "nest_dotted",
    "parse_json_path",
    "parse_path",
    "spread_confidence",
    "sqlite_json_path",
    "tidy_extraction_args",
    "validate_extraction",
]

MAX_PATH_DEPTH = 8
MAX_PATH_LENGTH = 200
MAX_INDEX = 9999
CUSTOM_NULL_MAX_CONFIDENCE = 0.2
"""Custom mode: a requested field the document lacks is null with at most this confidence."""

PathSegment = str | int
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\- ]{0,79}")
_TOKEN = re.compile(r"(?P<key>[^.\[\]]+)|\[(?P<index>[^\]]*)\]|(?P<dot>\.)")


def parse_path(path: str) -> list[PathSegment]:
    """``"items[2].price"`` -> ``["items", 2, "price"]``; a bad path raises one sentence."""
    if not isinstance(path, str) or not path.strip():
        raise InputError(
            "The JSON path is empty; name a field such as 'total' or 'items[0].price'."
        )
    if len(path) > MAX_PATH_LENGTH:
        raise InputError(f"The JSON path is longer than {MAX_PATH_LENGTH} characters.")
    if path.count("[") > path.count("]"):
        raise InputError(f"The JSON path {path!r} has an unclosed '['.")
    segments: list[PathSegment] = []
    pos = 0
    expect_key = True  # at the start and after a dot a key must follow
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None:  # a stray ']'
            raise InputError(f"The JSON path {path!r} has an unmatched ']' at position {pos + 1}.")
        if m.group("dot") is not None:
            if expect_key:
                raise InputError(
                    f"The JSON path {path!r} has an empty field name; remove the extra '.'."
                )
            expect_key = True
        elif m.group("key") is not None:
            key = m.group("key")
            if not expect_key:
                raise InputError(f"The JSON path {path!r} needs a '.' before {key!r}.")
            if not _KEY.fullmatch(key):
                raise InputError(
                    f"The field name {key!r} in {path!r} is not allowed; use letters, digits, "
                    "'_', '-' or spaces, starting with a letter or '_'."
                )
            segments.append(key)
            expect_key = False
        else:
            raw = m.group("index")
            if expect_key:
                raise InputError(f"The JSON path {path!r} has an index with no field before it.")
            if not raw.isdigit():
                raise InputError(
                    f"The index [{raw}] in {path!r} is not allowed; use a whole number such as [0]."
                )
            if int(raw) > MAX_INDEX:
                raise InputError(f"The index [{raw}] in {path!r} is larger than {MAX_INDEX}.")
            segments.append(int(raw))
        pos = m.end()
    if expect_key:
        raise InputError(f"The JSON path {path!r} ends with '.'; name the field after it.")
    if len(segments) > MAX_PATH_DEPTH:
        raise InputError(f"The JSON path {path!r} is deeper than {MAX_PATH_DEPTH} levels.")
    return segments


def parse_json_path(path: str) -> list[str]:
    """The spec's PostgreSQL form: ``"items[2].price"`` -> ``["items", "2", "price"]``."""
    return [str(s) for s in parse_path(path)]


def sqlite_json_path(segments: list[PathSegment]) -> str:
    """SQLite's JSON path for parsed segments: ``$."items"[2]."price"`` (keys quoted)."""
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f'."{s}"' for s in segments)


def _show(segments: list[PathSegment]) -> str:
    out = ""
    for s in segments:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else s)
    return out


def check_path(doc: Any, segments: list[PathSegment], *, must_exist: bool) -> None:
    """Raise one sentence unless ``segments`` addresses ``doc`` the way both databases agree on.

    Every parent must exist with the right kind (object for a name, list for an index). The
    last segment must exist for a removal; for an update it may be a new key, or the index
    just past a list's end (an append). PostgreSQL's ``jsonb_set`` silently ignores missing
    parents and SQLite's ``json_set`` creates them, so we refuse both cases up front.
    """
    node = doc
    for depth, seg in enumerate(segments):
        last = depth == len(segments) - 1
        where = _show(segments[:depth]) or "the extraction"
        if isinstance(seg, int):
            if not isinstance(node, list):
                raise InputError(f"'{where}' is not a list, so [{seg}] cannot address it.")
            if seg < len(node) or (last and not must_exist and seg == len(node)):
                if last:
                    return
                node = node[seg]
                continue
            raise InputError(f"'{where}' has {len(node)} entries; index [{seg}] is out of range.")
        if not isinstance(node, dict):
            raise InputError(f"'{where}' is not an object, so it has no field '{seg}'.")
        if seg not in node:
            if last and not must_exist:
                return
            raise InputError(
                f"There is no field '{_show(segments[: depth + 1])}'; see the current extraction."
            )
        node = node[seg]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _confidence_errors(name: str, conf: Any, value: Any) -> list[str]:
    if _is_number(conf):
        return (
            [] if 0.0 <= conf <= 1.0 else [f"confidence for '{name}' must be 0.0-1.0, got {conf}"]
        )
    if isinstance(conf, dict) and isinstance(value, dict):
        errors = []
        for key, sub in conf.items():
            if key not in value:
                errors.append(f"confidence given for '{name}.{key}', which is not a field")
            else:
                errors += _confidence_errors(f"{name}.{key}", sub, value[key])
        return errors
    return [f"confidence for '{name}' must be a number 0.0-1.0, got {conf!r}"]


CONFIDENCE_KEYS = ("confidences", "confidence")


def tidy_extraction_args(fields: Any, confidences: Any) -> tuple[Any, Any]:
    """``extract_fields``' arguments as the model meant them: the scores a small model put
    inside ``fields`` (``"confidences": {...}``, or a null ``"confidence"``) move out, and
    dotted names become nested fields (``nest_dotted``). Anything else is left for
    ``validate_extraction`` to judge."""
    if isinstance(fields, dict) and any(k in fields for k in CONFIDENCE_KEYS):
        stray = {k: fields[k] for k in CONFIDENCE_KEYS if k in fields}
        if all(v is None or isinstance(v, dict) for v in stray.values()):
            fields = {k: v for k, v in fields.items() if k not in stray}
            inner = stray.get("confidences")
            if isinstance(inner, dict) and not confidences:
                confidences = inner
    return nest_dotted(fields), nest_dotted(confidences)


def nest_dotted(names: Any) -> Any:
    """``{"vendor.name": "A", "vendor.city": "B"}`` -> ``{"vendor": {"name": "A", "city": "B"}}``.

    Small models write a nested field as one dotted name, the way ``update_field`` takes a
    path; reading it as that path saves a refused call. Anything that is not an object of
    dotted names, or whose dotted name collides with a plain one (``vendor`` beside
    ``vendor.name``), comes back as given, for ``validate_extraction`` to judge.
    """
    if not isinstance(names, dict) or not any(isinstance(k, str) and "." in k for k in names):
        return names
    out: dict[str, Any] = {}
    for key, value in names.items():
        if not isinstance(key, str) or "." not in key:
            if key in out:
                return names
            out[key] = value
            continue
        parts = key.split(".")
        if any(not p for p in parts):
            return names
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                return names
            node = child
        if parts[-1] in node:
            return names
        node[parts[-1]] = value
    return out


def validate_extraction(
    fields: Any, confidences: Any, *, requested: list[str] | None = None
) -> list[str]:
    """Errors in an ``extract_fields`` call, one short line each; empty when it is valid.

    ``fields`` is a non-empty object of JSON values; every top-level field has a confidence
    (a number 0.0-1.0, or an object of them mirroring a nested field). Custom mode
    (``requested``): exactly those names, and a null value carries a confidence of at most
    ``CUSTOM_NULL_MAX_CONFIDENCE``.
    """
    if not isinstance(fields, dict):
        return [f"fields must be an object of name -> value, got {type(fields).__name__}"]
    if not isinstance(confidences, dict):
        return [
            f"confidences must be an object of name -> 0.0-1.0, got {type(confidences).__name__}"
        ]
    if not fields:
        return ["fields is empty; extract at least one field that is in the document"]
    errors: list[str] = []
    for name, value in fields.items():
        if not isinstance(name, str) or not _KEY.fullmatch(name):
            errors.append(f"field name {name!r} is not allowed (letters, digits, '_', '-', spaces)")
        if name not in confidences:
            errors.append(f"no confidence for '{name}'")
        else:
            errors += _confidence_errors(name, confidences[name], value)
        if isinstance(value, float) and not math.isfinite(value):
            errors.append(f"'{name}' is not a finite number")
    errors += [
        f"confidence given for '{k}', which is not a field" for k in confidences if k not in fields
    ]
    if requested is not None:
        missing = [n for n in requested if n not in fields]
        extra = [n for n in fields if n not in requested]
        if missing:
            errors.append(
                f"missing requested fields: {', '.join(missing)} (use null with confidence <= "
                f"{CUSTOM_NULL_MAX_CONFIDENCE} when the document lacks one)"
            )
        if extra:
            errors.append(
                f"fields not requested: {', '.join(extra)}; extract exactly: {', '.join(requested)}"
            )
        for name in requested:
            conf = confidences.get(name)
            if (
                name in fields
                and fields[name] is None
                and _is_number(conf)
                and float(conf) > CUSTOM_NULL_MAX_CONFIDENCE  # type: ignore[arg-type]
            ):
                errors.append(
                    f"'{name}' is null, so its confidence must be <= {CUSTOM_NULL_MAX_CONFIDENCE}, got {conf}"
                )
    return errors


def spread_confidence(
    fields: dict[str, Any], confidences: dict[str, Any], segments: list[PathSegment]
) -> dict[str, Any] | None:
    """Confidences reshaped so ``segments``' parent is a container, or None if it already is.

    A nested field scored as a whole (``{"vendor": 0.9}``) gets that score per child
    (``{"vendor": {"name": 0.9, "address": 0.9}}``) before ``update_field`` writes a
    confidence at ``vendor.name``: the score moves down, nothing is lost.
    """
    out: dict[str, Any] = copy.deepcopy(confidences)
    node: Any = out
    value: Any = fields
    changed = False
    for seg in segments[:-1]:
        value = value[seg]  # check_path has made sure the fields path exists
        child = _child(node, seg)
        if isinstance(child, dict | list):
            node = child
            continue
        score = child if _is_number(child) else None
        if isinstance(value, dict):
            new: Any = {k: score for k in value} if score is not None else {}
        elif isinstance(value, list):
            new = [score for _ in value]
        else:
            return None  # the fields path itself is not a container: check_path refuses it
        node[seg] = new
        node, changed = new, True
    return out if changed else None


def _child(node: Any, seg: PathSegment) -> Any:
    if isinstance(node, dict):
        return node.get(seg)
    if isinstance(node, list) and isinstance(seg, int) and seg < len(node):
        return node[seg]
    return None


def mean_confidence(confidences: Any) -> float:
    """Mean of every score in a (possibly nested) confidence structure; 0 when there are none."""
    scores: list[float] = []

    def walk(node: Any) -> None:
        if _is_number(node):
            scores.append(float(node))
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(confidences)
    return sum(scores) / len(scores) if scores else 0.0
