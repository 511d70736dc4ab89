"""Roster import (CSV and JSON, one-sentence errors, nothing half-written), the append-only
audit log, the migration matching the tables, and the CLI's faces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError
from vanpool_helpers import START

from casework.apps.vanpool.deps import build_deps
from casework.apps.vanpool.roster import COLUMNS, import_roster
from casework.config import Settings
from casework.errors import InputError

HEADER = ",".join(COLUMNS)
GOOD = [
    "EMP-0001,Ana Diaz,ana@example.com,94538,Fremont,Day Shift,Mon-Fri 07:00-15:30,America/Los_Angeles,,VP-001,94536,Fremont,06:15,16:15,",
    "EMP-0002,Ben Kim,ben@example.com,94555,Fremont,Day Shift,Mon-Fri 07:00-15:30,America/Los_Angeles,2026-11-20..2026-11-27,VP-001,94536,Fremont,06:15,16:15,",
    "EMP-0003,Cy Lo,cy@example.com,90026,Fremont,Night Shift,Sun-Thu 22:00-06:30,America/Los_Angeles,,VP-001,94536,Fremont,06:15,16:15,",
    "EMP-0004,Di Wu,di@example.com,94538,Fremont,Day Shift,Mon-Fri 07:00-15:30,America/Los_Angeles,,,,,,,",
]


@pytest.fixture
def store(tmp_path: Path):
    return build_deps(Settings(home=tmp_path / "home"), clock=lambda: START)


def write_csv(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def test_csv_import_and_shared_shifts(store, tmp_path: Path) -> None:
    counts = import_roster(store.repo, write_csv(tmp_path, GOOD), START)
    assert counts == {"shifts": 2, "employees": 4, "vanpools": 1, "riders": 3}
    vp = store.repo.get_vanpool("VP-001")
    assert [e.employee_id for e in vp.riders] == ["EMP-0001", "EMP-0002", "EMP-0003"]
    assert vp.max_commute_miles == 50.0
    assert vp.riders[0].shift_id == vp.riders[1].shift_id != vp.riders[2].shift_id
    assert store.repo.get_employee("EMP-0002").pto == "2026-11-20..2026-11-27"
    # Importing again changes nothing.
    assert import_roster(store.repo, write_csv(tmp_path, GOOD), START)["employees"] == 0


def test_json_import(store, tmp_path: Path) -> None:
    keys = COLUMNS
    rows = [dict(zip(keys, line.split(","), strict=True)) for line in GOOD]
    path = tmp_path / "roster.json"
    path.write_text(json.dumps(rows))
    assert import_roster(store.repo, path, START)["riders"] == 3


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (GOOD[0].replace("94538", "00000"), "Row 2 (EMP-0001): ZIP code 00000 does not exist."),
        (GOOD[0].replace("07:00-15:30", "7am-3pm"), "Row 2 (EMP-0001): Time '7am' is not 24-hour"),
        (GOOD[0].replace("Mon-Fri 07:00", "Monday-Fry 07:00"), "Row 2 (EMP-0001): Day 'Fry'"),
        (GOOD[0].replace("EMP-0001", "E1"), "Row 2 (E1): 'E1' is not a EMP id"),
        (
            GOOD[0].replace("06:15,16:15", "06:15,"),
            "Row 2 (EMP-0001): vanpool VP-001 needs 'return'.",
        ),
        (GOOD[0].replace("America/Los_Angeles", "Pacific"), "Row 2 (EMP-0001): Timezone 'Pacific'"),
    ],
)
def test_bad_rows_name_the_row_and_write_nothing(
    store, tmp_path: Path, row: str, message: str
) -> None:
    with pytest.raises(InputError) as info:
        import_roster(store.repo, write_csv(tmp_path, [GOOD[1], row]), START)
    assert str(info.value).startswith(message.replace("Row 2", "Row 2"))
    assert store.repo.counts()["employees"] == 0


def test_conflicting_vanpool_columns(store, tmp_path: Path) -> None:
    bad = GOOD[1].replace("94536", "94539")
    with pytest.raises(InputError, match=r"Row 2 .*VP-001 has pickup_zip '94539' here but '94536'"):
        import_roster(store.repo, write_csv(tmp_path, [GOOD[0], bad]), START)


def test_audit_log_is_append_only(store) -> None:
    store.repo.audit(START, "test", "something", detail={"a": 1})
    with store.repo.engine.begin() as conn, pytest.raises(DatabaseError, match="append-only"):
        conn.execute(text("UPDATE vanpool_audit_log SET actor='x'"))
    with store.repo.engine.begin() as conn, pytest.raises(DatabaseError, match="append-only"):
        conn.execute(text("DELETE FROM vanpool_audit_log"))
    assert len(store.repo.audit_log()) == 1


def test_migration_matches_the_tables(store) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from casework.apps.vanpool import tables
    from casework.stores.sql import Base

    with store.repo.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    ours = [d for d in diff if "vanpool_" in repr(d)]
    assert ours == [], ours
    assert tables.CaseRow.__tablename__ == "vanpool_cases"
