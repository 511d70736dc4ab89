"""A stack's table as CSV."""

from __future__ import annotations

import csv
import io
import json
from typing import Any


def table_csv(table: Any) -> str:
    """A stack table as CSV: document id, filename, then one column per defined column."""
    out = io.StringIO()
    names = [c["name"] for c in table.columns]
    writer = csv.writer(out)
    writer.writerow(["document_id", "filename", *names])
    for row in table.rows:
        writer.writerow(
            [row["document_id"], row["filename"], *(_cell(row["cells"].get(n)) for n in names)]
        )
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
