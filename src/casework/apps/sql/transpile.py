"""A parsed query written in the target database's dialect.

PostgreSQL is the default input dialect. sqlglot writes PostgreSQL date arithmetic for SQLite
as ``CURRENT_TIMESTAMP - INTERVAL '7' DAYS``, which SQLite cannot run, so interval
arithmetic, ``DATE_TRUNC`` and ``EXTRACT`` are rewritten here into SQLite's ``DATETIME``
modifiers and ``STRFTIME``.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

__all__ = ["to_dialect"]

_UNIT_RE = re.compile(r"(-?\d+(?:\.\d+)?)\s*([a-z]+)")
_SQLITE_UNITS = {
    "second": "seconds", "sec": "seconds", "minute": "minutes", "min": "minutes",
    "hour": "hours", "day": "days", "week": "weeks", "month": "months", "mon": "months",
    "year": "years",
}  # fmt: skip


def _interval_modifiers(interval: exp.Interval, sign: int) -> list[str] | None:
    """``INTERVAL '1 day 2 hours'`` -> ``['+1 days', '+2 hours']`` (weeks become days)."""
    value = interval.this.name if interval.this is not None else ""
    unit_node = interval.args.get("unit")
    unit = unit_node.name if unit_node is not None else ""
    text = f"{value} {unit}".strip().lower()
    parts = _UNIT_RE.findall(text)
    if not parts:
        return None
    modifiers = []
    for number, raw_unit in parts:
        unit_name = _SQLITE_UNITS.get(raw_unit.rstrip("s"))
        if unit_name is None:
            return None
        amount = float(number) * sign
        if unit_name == "weeks":
            amount, unit_name = amount * 7, "days"
        amount_text = f"{amount:+g}"
        modifiers.append(f"{amount_text} {unit_name}")
    return modifiers


def _is_date_only(node: exp.Expr) -> bool:
    return isinstance(node, exp.CurrentDate) or (
        isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DATE
    )


_TRUNC_FORMATS = {
    "second": "%Y-%m-%d %H:%M:%S", "minute": "%Y-%m-%d %H:%M:00", "hour": "%Y-%m-%d %H:00:00",
    "day": "%Y-%m-%d 00:00:00", "month": "%Y-%m-01 00:00:00", "year": "%Y-01-01 00:00:00",
}  # fmt: skip
_EXTRACT_FORMATS = {
    "year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M", "second": "%S",
    "dow": "%w", "doy": "%j", "epoch": "%s", "week": "%W",
}  # fmt: skip


def _unit_name(node: Any) -> str:
    if node is None:
        return ""
    name = node.name if isinstance(node, exp.Expr) else str(node)
    return name.lower().strip("'\"").rstrip("s") if name.lower() != "dow" else "dow"


def _sqlite_rewrite(node: exp.Expr) -> exp.Expr:
    """One node of PostgreSQL date arithmetic as SQLite can run it."""
    if isinstance(node, exp.Sub | exp.Add) and isinstance(node.expression, exp.Interval):
        sign = -1 if isinstance(node, exp.Sub) else 1
        modifiers = _interval_modifiers(node.expression, sign)
        if modifiers is not None:
            func = "DATE" if _is_date_only(node.this) else "DATETIME"
            return exp.Anonymous(
                this=func, expressions=[node.this, *[exp.Literal.string(m) for m in modifiers]]
            )
    if isinstance(node, exp.Add) and isinstance(node.this, exp.Interval):
        modifiers = _interval_modifiers(node.this, 1)
        if modifiers is not None:
            return exp.Anonymous(
                this="DATETIME",
                expressions=[node.expression, *[exp.Literal.string(m) for m in modifiers]],
            )
    if isinstance(node, exp.DateAdd | exp.DateSub | exp.TsOrDsAdd) and isinstance(
        node.expression, exp.Literal
    ):
        sign = -1 if isinstance(node, exp.DateSub) else 1
        unit = _unit_name(node.args.get("unit")) or "day"
        interval = exp.Interval(this=node.expression, unit=exp.var(unit))
        modifiers = _interval_modifiers(interval, sign)
        if modifiers is not None:
            return exp.Anonymous(
                this="DATETIME",
                expressions=[node.this, *[exp.Literal.string(m) for m in modifiers]],
            )
    if isinstance(node, exp.TimestampTrunc | exp.DateTrunc):
        unit = _unit_name(node.args.get("unit"))
        if unit == "week":  # Monday of that week
            return exp.Anonymous(
                this="DATETIME",
                expressions=[
                    node.this,
                    exp.Literal.string("weekday 0"),
                    exp.Literal.string("-6 days"),
                    exp.Literal.string("start of day"),
                ],
            )
        fmt = _TRUNC_FORMATS.get(unit)
        if fmt:
            return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), node.this])
    if isinstance(node, exp.Extract):
        fmt = _EXTRACT_FORMATS.get(_unit_name(node.this))
        if fmt:
            return exp.cast(
                exp.Anonymous(
                    this="STRFTIME", expressions=[exp.Literal.string(fmt), node.expression]
                ),
                exp.DataType.Type.INT,
            )
    return node


def to_dialect(tree: exp.Expr, dialect: str) -> str:
    """The query as ``dialect`` writes it, with SQLite's date arithmetic where needed."""
    if dialect == "sqlite":
        tree = tree.copy().transform(_sqlite_rewrite)
    return tree.sql(dialect=dialect)
