"""Deterministic synthetic rows for any loaded schema, so every schema can be queried.

Values respect the declared types and look plausible from the field's name and description:
timestamps in the 90 days before the anchor, enums from "One of: a, b, c" in the
description, IPs, hostnames, emails, ports, hashes, CVE ids, and ``*_id`` references into
the referenced table's id range ("References users.id" in the description, or the name).
The same schema, row count, seed and anchor give the same rows.
"""

from __future__ import annotations

import hashlib
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from casework.apps.sql.models import ColumnSpec, DatabaseSchema, TableSpec
from casework.apps.sql.schemas import _split_type, base_type

__all__ = ["WINDOW_DAYS", "enum_values", "generate_rows", "reference_of"]

WINDOW_DAYS = 90
"""Timestamps fall in the last this many days before the anchor."""
NULL_END_SHARE = 0.3
"""Share of "end" timestamps (ended_at, resolved_at, ...) left NULL: still open."""
_END_NAMES = re.compile(r"(ended|resolved|unblocked|patched|closed|expires|finished)_(at|on)$")

_FIRST = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "victor",
    "wendy",
]
_LAST = [
    "smith",
    "jones",
    "garcia",
    "chen",
    "patel",
    "kim",
    "nguyen",
    "muller",
    "rossi",
    "silva",
    "novak",
    "haddad",
    "okafor",
    "larsen",
    "tanaka",
]
_WORDS = [
    "suspicious",
    "outbound",
    "connection",
    "privilege",
    "escalation",
    "scan",
    "beacon",
    "credential",
    "access",
    "policy",
    "update",
    "anomalous",
    "login",
    "transfer",
    "alert",
    "remote",
    "service",
    "failed",
    "unusual",
    "traffic",
]
_COUNTRIES = ["US", "GB", "DE", "FR", "NL", "IN", "BR", "CN", "RU", "JP", "CA", "AU"]
_PORTS = [22, 53, 80, 123, 443, 445, 3389, 3306, 5432, 8080, 8443, 25]
_DOMAINS = [
    "corp.example",
    "example.com",
    "cdn.example.net",
    "login-verify.example.org",
    "update.example.io",
    "files.example.co",
]
_HOST_ROLES = ["web", "db", "mail", "dc", "app", "vpn", "build", "ws", "fs", "proxy"]


def enum_values(description: str) -> list[str]:
    """Values named by "One of: a, b, c" (or "one of a, b or c") in a description."""
    m = re.search(r"one of[:\s]+([^.;\n]+)", description, flags=re.IGNORECASE)
    if not m:
        return []
    parts = re.split(r",|\bor\b|\|", m.group(1))
    values = [p.strip().strip("'\"` ") for p in parts]
    return [v for v in values if v and len(v) <= 40]


def reference_of(column: ColumnSpec, schema: DatabaseSchema) -> str | None:
    """The table a ``*_id`` field points at: "References t.id" first, then the name."""
    m = re.search(r"references\s+([A-Za-z_][A-Za-z0-9_]*)\.", column.description, re.IGNORECASE)
    if m and schema.table(m.group(1)):
        return schema.table(m.group(1)).name  # type: ignore[union-attr]
    if not column.name.lower().endswith("_id") or column.name.lower() == "id":
        return None
    stem = column.name[:-3].lower()
    for candidate in (
        stem + "s",
        stem,
        stem + "es",
        stem[:-1] + "ies" if stem.endswith("y") else "",
    ):
        if candidate and schema.table(candidate):
            return schema.table(candidate).name  # type: ignore[union-attr]
    return None


def _ip(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"10.{rng.randint(0, 20)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return f"{rng.choice([45, 52, 91, 103, 185, 198, 203])}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def _hostname(rng: random.Random) -> str:
    return f"{rng.choice(_HOST_ROLES)}-{rng.randint(1, 40):02d}.{rng.choice(_DOMAINS[:2])}"


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize()


def _value(
    rng: random.Random,
    table: TableSpec,
    column: ColumnSpec,
    row: dict[str, Any],
    index: int,
    counts: dict[str, int],
    schema: DatabaseSchema,
    anchor: datetime,
) -> Any:
    name = column.name.lower()
    kind = base_type(column.type)
    length = None
    parts = _split_type(column.type)
    if parts and parts[1] and kind in ("VARCHAR", "CHAR", "CHARACTER VARYING"):
        length = int(parts[1][0])

    if name == "id":
        return index + 1
    ref = reference_of(column, schema)
    if ref is not None and kind in ("INTEGER", "INT", "BIGINT", "SMALLINT", "SERIAL", "BIGSERIAL"):
        return rng.randint(1, max(1, counts.get(ref, 1)))
    if ("failure" in name or "error" in name) and row.get("success") is True:
        return None  # a successful attempt has no failure reason
    choices = enum_values(column.description)
    if choices and kind not in ("BOOLEAN", "BOOL"):
        value: Any = rng.choice(choices)
        if kind in ("INTEGER", "INT", "SMALLINT", "BIGINT"):
            return int(value) if value.lstrip("-").isdigit() else rng.randint(0, 10)
        return value[:length] if length else value

    if kind in ("TIMESTAMP", "TIMESTAMPTZ", "DATETIME", "DATE"):
        if _END_NAMES.search(name):
            if rng.random() < NULL_END_SHARE:
                return None
            starts = [v for v in row.values() if isinstance(v, datetime)]
            if starts:
                moment = starts[0] + timedelta(minutes=rng.randint(5, 72 * 60))
                return moment.date() if kind == "DATE" else moment
        moment = anchor - timedelta(seconds=rng.randint(0, WINDOW_DAYS * 86400))
        return moment.date() if kind == "DATE" else moment
    if kind == "TIME":
        return (datetime(2000, 1, 1) + timedelta(seconds=rng.randint(0, 86399))).time()
    if kind in ("BOOLEAN", "BOOL"):
        share = 0.75 if name in ("success", "enabled", "active", "successful") else 0.35
        return rng.random() < share
    if kind in ("INTEGER", "INT", "SMALLINT", "BIGINT", "SERIAL", "BIGSERIAL"):
        if "port" in name:
            return rng.choice(_PORTS)
        if "bytes" in name or "size" in name:
            return rng.randint(200, 50_000_000)
        if "count" in name or "attempts" in name:
            return rng.randint(0, 50)
        return rng.randint(0, 1000)
    if kind in ("FLOAT", "REAL", "DOUBLE", "DOUBLE PRECISION", "NUMERIC", "DECIMAL"):
        if "cvss" in name or "score" in name:
            return round(rng.uniform(0, 10), 1)
        return round(rng.uniform(0, 1000), 2)
    if kind in ("JSON", "JSONB"):
        return {"source": rng.choice(["edr", "siem", "ids"]), "tags": rng.sample(_WORDS, 2)}
    if kind in ("BLOB", "BYTEA"):
        return hashlib.sha256(f"{table.name}{index}".encode()).digest()
    if kind == "UUID":
        return f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-a{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}"

    text = _string(rng, name, table, index, row)
    return text[:length] if length else text


def _string(
    rng: random.Random, name: str, table: TableSpec, index: int, row: dict[str, Any]
) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    kind = next((str(v) for k, v in row.items() if k.lower().endswith("type") and v), "")
    if name == "value" and kind in ("ip", "domain", "hash", "url"):
        # An indicator's value follows its declared type (threat-intel style tables).
        return {
            "ip": _ip(rng),
            "domain": rng.choice(_DOMAINS[2:]),
            "hash": hashlib.sha256(f"{table.name}:{index}".encode()).hexdigest(),
            "url": f"https://{rng.choice(_DOMAINS[2:])}/{rng.choice(_WORDS)}",
        }[kind]
    if (
        name in ("ip", "inet")
        or name.endswith("_ip")
        or name.startswith("ip_")
        or "ip_address" in name
    ):
        return _ip(rng)
    if "email" in name or (name.endswith("_address") and "sender" in name):
        return f"{first}.{last}@{rng.choice(_DOMAINS)}"
    if "host" in name:
        return _hostname(rng)
    if "domain" in name or name in ("query_name", "fqdn", "url"):
        return (
            rng.choice(_DOMAINS)
            if rng.random() < 0.6
            else f"{rng.choice(_WORDS)}-{rng.randint(1, 99)}.example.net"
        )
    if name == "username" or name.endswith("user_name") or name == "login":
        return f"{first}.{last}{index}"
    if name in ("full_name", "display_name") or (name.endswith("_name") and "person" in name):
        return f"{first.title()} {last.title()}"
    if "country" in name:
        return rng.choice(_COUNTRIES)
    if "hash" in name or name in ("sha256", "checksum"):
        return hashlib.sha256(f"{table.name}:{name}:{index}".encode()).hexdigest()
    if "cve" in name:
        return f"CVE-{rng.randint(2019, 2026)}-{rng.randint(1000, 49999)}"
    if "phone" in name:
        return f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    if "command" in name:
        return f"{rng.choice(['powershell', 'cmd.exe', 'bash', 'python'])} -c {rng.choice(_WORDS)}"
    if name.endswith("process_name") or name == "process" or name == "parent_process":
        return rng.choice(
            [
                "svchost.exe",
                "powershell.exe",
                "chrome.exe",
                "sshd",
                "python3",
                "cmd.exe",
                "rundll32.exe",
                "nginx",
            ]
        )
    if name in ("name", "title", "subject", "summary") or name.endswith("_name"):
        return f"{_text(rng, 3)} {index + 1}"
    if "description" in name or "message" in name or "note" in name:
        return _text(rng, 7)
    return f"{name}-{index + 1}"


def generate_rows(
    schema: DatabaseSchema,
    rows: int,
    *,
    seed: int = 0,
    anchor: datetime | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """``rows`` rows per table; deterministic for (schema, rows, seed, anchor).

    The anchor defaults to today's midnight (UTC, naive) so runs on one day agree.
    """
    if rows < 1:
        raise ValueError("rows must be at least 1")
    if anchor is None:
        today = datetime.now(UTC).date()
        anchor = datetime(today.year, today.month, today.day)
    counts = {name: rows for name in schema.tables}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, table in schema.tables.items():
        rng = random.Random(f"{seed}:{name}")
        table_rows = []
        for i in range(rows):
            row: dict[str, Any] = {}
            for column in table.fields:
                row[column.name] = _value(rng, table, column, row, i, counts, schema, anchor)
            table_rows.append(row)
        out[name] = table_rows
    return out
