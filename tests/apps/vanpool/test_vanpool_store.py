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
from casework.apps.vanpool.models import RosterRefused
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
    counts = import_roster(store.repo, write_csv(tmp_path, GOOD), START).added
    assert counts == {"shifts": 2, "employees": 4, "vanpools": 1, "riders": 3}
    vp = store.repo.get_vanpool("VP-001")
    assert [e.employee_id for e in vp.riders] == ["EMP-0001", "EMP-0002", "EMP-0003"]
    assert vp.max_commute_miles == 50.0
    assert vp.riders[0].shift_id == vp.riders[1].shift_id != vp.riders[2].shift_id
    assert store.repo.get_employee("EMP-0002").pto == "2026-11-20..2026-11-27"
    # Importing again changes nothing.
    assert import_roster(store.repo, write_csv(tmp_path, GOOD), START).added["employees"] == 0


def test_json_import(store, tmp_path: Path) -> None:
    keys = COLUMNS
    rows = [dict(zip(keys, line.split(","), strict=True)) for line in GOOD]
    path = tmp_path / "roster.json"
    path.write_text(json.dumps(rows))
    assert import_roster(store.repo, path, START).added["riders"] == 3


# Rows are numbered as a spreadsheet shows them: the header is row 1, so GOOD[1] is row 2.
@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            GOOD[0].replace("94538", "00000"),
            "Row 3 (EMP-0001), home_zip '00000': ZIP code 00000 does not exist; check the number.",
        ),
        (
            GOOD[0].replace("07:00-15:30", "7am-3pm"),
            "Row 3 (EMP-0001), shift 'Mon-Fri 7am-3pm': Time '7am' is not a time of day "
            "(write 07:00, 7:00 or 7:00 AM).",
        ),
        (
            GOOD[0].replace("Mon-Fri 07:00", "Monday-Fry 07:00"),
            "Row 3 (EMP-0001), shift 'Monday-Fry 07:00-15:30': Day 'Fry'",
        ),
        (GOOD[0].replace("EMP-0001", "E1"), "Row 3 (E1), employee_id 'E1': 'E1' is not a EMP id"),
        (
            GOOD[0].replace("06:15,16:15", "06:15,"),
            "Row 3 (EMP-0001), return empty: Write the vanpool's return time, e.g. 16:15",
        ),
        (
            GOOD[0].replace("America/Los_Angeles", "Pacific"),
            "Row 3 (EMP-0001), timezone 'Pacific': Timezone 'Pacific' is unknown",
        ),
    ],
)
def test_bad_rows_name_the_row_and_write_nothing(
    store, tmp_path: Path, row: str, message: str
) -> None:
    with pytest.raises(RosterRefused) as info:
        import_roster(store.repo, write_csv(tmp_path, [GOOD[1], row]), START)
    lines = str(info.value).splitlines()
    assert lines[0].endswith(
        "1 of 2 rows refused (1 problems); nothing was written. Fix these and import the file again:"
    )
    assert lines[1].strip().startswith(message), lines[1]
    assert store.repo.counts()["employees"] == 0


def test_conflicting_vanpool_columns(store, tmp_path: Path) -> None:
    bad = GOOD[1].replace("94536", "94539")
    with pytest.raises(
        InputError,
        match=r"Row 3 \(EMP-0002\), pickup_zip '94539': VP-001 has '94536' there on row 2",
    ):
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
