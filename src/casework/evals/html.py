"""The HTML pieces every report page is built from (page shell, tables, pills, JSON blocks).

The stylesheet is the package resource ``report.css``: pages inline it, so a report stays a
single self-contained file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

__all__ = ["css", "e", "json_block", "page", "percent", "pill", "table"]


@cache
def css() -> str:
    return files("casework.evals").joinpath("report.css").read_text(encoding="utf-8")


def e(value: Any) -> str:
    return escape("" if value is None else str(value))


def page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(title)}</title><style>{css()}</style></head><body><main>{body}</main></body></html>"
    )


def table(
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


def json_block(value: Any) -> str:
    return f"<pre>{e(json.dumps(value, indent=2, ensure_ascii=False, default=str))}</pre>"


def pill(ok: bool | None, yes: str = "met", no: str = "missed", none: str = "no data") -> str:
    if ok is None:
        return f"<span class='pill none'>{none}</span>"
    return f"<span class='pill {'met' if ok else 'missed'}'>{yes if ok else no}</span>"


def percent(p: float | None) -> str:
    return "–" if p is None else f"{100 * p:.0f}%"
