"""A real-shaped HR export (``data/hr_export.csv``) imports in one run, every refused row of a
bad one is listed at once with nothing written, and the audits on it give the answers written
by hand from seed 001's arithmetic (``data/hr_export.jsonl``; distances by the haversine on
the ZIPs' centres, overlaps on the 30-minute rule), the 10.04-mile rider included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError
from vanpool_helpers import START

from casework.apps.vanpool import service
from casework.apps.vanpool.deps import build_deps
from casework.apps.vanpool.models import RosterRefused
from casework.apps.vanpool.roster import read_rows
from casework.apps.vanpool.strategies import ShiftInput
from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.runtime import RunConfig

DATA = Path(__file__).parent / "data"
EXPORT = DATA / "hr_export.csv"
GOLD = DATA / "hr_export.jsonl"
REFUSED = DATA / "hr_export_refused.csv"


@pytest.fixture
def store(tmp_path: Path):
    return build_deps(Settings(home=tmp_path / "home"), clock=lambda: START)


def _export_text() -> str:
    return EXPORT.read_bytes().decode("utf-8-sig")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "export.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    return path


def test_the_fixture_is_shaped_like_an_hr_export() -> None:
    raw = EXPORT.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # the byte-order mark Excel writes
    assert raw.count(b"\r\n") == 20 and raw.count(b"\n") == 20  # CRLF only: 1 + 17 + 2 rows
    assert b'"Olson, Kari"' in raw  # quoted fields with commas
    assert raw.endswith(b",,,,,,,,,,,,,,,\r\n,,,,,,,,,,,,,,,\r\n")  # trailing rows of commas
    assert "José Núñez".encode() in raw
    for quirk in (b"55075-4634", b",1835,", b"5:20,", b"4:30 PM", b"16:45:00", b"US/Eastern"):
        assert quirk in raw


def test_an_hr_export_imports_in_one_run(store) -> None:
    report = service.import_roster(store, EXPORT)
    assert (report.rows, report.blank_rows) == (17, 2)
    assert report.added == {"shifts": 5, "employees": 17, "vanpools": 3, "riders": 14}
    assert report.repaired == {
        "ZIP zeros restored": 4,
        "ZIP+4 cut to 5 digits": 6,
        "shifts to 24-hour": 8,
        "times to 24-hour": 15,
        "timezone aliases": 5,
    }
    repo = store.repo
    assert repo.get_employee("EMP-2001").home_zip == "55075"  # 55075-4634
    assert repo.get_employee("EMP-3001").home_zip == "01835"  # 1835
    assert repo.get_employee("EMP-3002").home_zip == "01832"  # 1832-4410
    assert repo.get_employee("EMP-3002").name == "José Núñez"
    vp101, vp102 = repo.get_vanpool("VP-101"), repo.get_vanpool("VP-102")
    assert (vp101.pickup_zip, vp101.departure_time, vp101.return_time) == (
        "55123",
        "06:15",
        "16:45",
    )
    assert (vp102.pickup_zip, vp102.departure_time, vp102.return_time) == (
        "01830",
        "05:20",
        "16:30",
    )
    assert vp101.max_commute_miles == 10.0
    # Two spellings of one zone and of one schedule are one shift row.
    day = {repo.get_employee(e).shift_id for e in ("EMP-3001", "EMP-3003", "EMP-3004")}
    assert len(day) == 1 and repo.get_employee("EMP-3003").timezone == "America/New_York"
    assert repo.get_employee("EMP-3003").shift_spec == "Mon-Fri 07:00-15:30"
    # Blank where no audit reads it: employees who ride no vanpool.
    park = repo.get_employee("EMP-4001")
    assert (park.email, park.shift_id, park.timezone) == ("", None, None)
    ito = repo.get_employee("EMP-4003")  # a non-rider's shift without a name: named by it
    assert (ito.shift_name, ito.shift_spec, ito.timezone) == (
        "Mon-Fri 9:00 AM-5:00 PM",
        "Mon-Fri 09:00-17:00",
        "America/New_York",
    )
    again = service.import_roster(store, EXPORT)
    assert again.added == {"shifts": 0, "employees": 0, "vanpools": 0, "riders": 0}


def _gold() -> dict[str, dict]:
    return {c["id"]: c for c in map(json.loads, GOLD.read_text().splitlines())}


def test_the_rules_agree_with_the_hand_computed_answers(store) -> None:
    service.import_roster(store, EXPORT)
    gold = _gold()
    config = RunConfig.of(store.settings)
    for case_id, case in gold.items():
        task, inputs, expected = case["metadata"]["task"], case["inputs"], case["expected"]
        if task == "case-manager":
            got = service.run_audit("rules", inputs["vanpool_id"], store)
            assert (got.verdict, sorted(got.failed_checks)) == (
                expected["verdict"],
                expected["failed_checks"],
            ), case_id
        elif task == "location":
            got = service.LOCATION_STRATEGIES["rules"](
                service.AuditInput(inputs["vanpool_id"]), store, config
            )
            assert (got.verdict, got.failed_employees) == (
                expected["verdict"],
                expected["failed_employees"],
            ), case_id
        elif expected["verdict"] == "NEEDS_REVIEW":
            with pytest.raises(InputError, match=expected["error_mentions"]):
                service.SHIFT_STRATEGIES["rules"](
                    ShiftInput(tuple(inputs["employee_ids"])), store, config
                )
        else:
            shift_input = ShiftInput(
                tuple(inputs.get("employee_ids", ())), vanpool_id=inputs.get("vanpool_id")
            )
            got = service.SHIFT_STRATEGIES["rules"](shift_input, store, config)
            assert (got.verdict, got.failed_employees) == (
                expected["verdict"],
                expected["conflicting_employees"],
            ), case_id
            stated = {
                e.ref: e.fields["overlap_minutes"] for e in got.evidence if e.ref[:4] == "EMP-"
            }
            assert stated == expected["overlap_minutes"], case_id
    # The 10.04-mile rider: shown to 0.01 mi so it does not read as inside the limit.
    location = service.LOCATION_STRATEGIES["rules"](service.AuditInput("VP-101"), store, config)
    shown = {
        e.ref: e.fields["distance_miles"] for e in location.evidence if e.source == "distance_check"
    }
    assert shown == {"EMP-2001": 7.3, "EMP-2002": 2.6, "EMP-2003": 10.04, "EMP-2004": 4.9}


BAD_EDITS = [
    # (text in the export, replacement, the (row, column) refused)
    ("US/Central,,VP-101", "Central,,VP-101", (3, "timezone")),
    ("55419", "5541", (4, "home_zip")),
    ("6:15,16:45:00", "6:15,16:45:30", (4, "return")),
    ("Assembly,mary.sullivan@example.com", "Assembly,", (6, "email")),
    ("Sun-Thu 10:00 PM-6:30 AM", "Sun-Thu 10 PM-6:30 AM", (11, "shift")),
    ("EMP-3007", "EMP-3006", (12, "employee_id")),
    ("2026-11-23,VP-103", "11/23/2026,VP-103", (13, "pto")),
    ("America/Chicago,,VP-103,55075", "America/Chicago,,VP-103,55076", (15, "pickup_zip")),
    ("EMP-4003", "EMP-403", (18, "employee_id")),
    (
        "Boston,,Mon-Fri 9:00 AM-5:00 PM,US/Eastern",
        "Boston,,Mon-Fri 9:00 AM-5:00 PM,",
        (18, "timezone"),
    ),
]


def _bad_export(tmp_path: Path) -> Path:
    """``data/hr_export_refused.csv`` (the README's example), checked to be the export with
    exactly ``BAD_EDITS`` made."""
    text = _export_text()
    for old, new, _ in BAD_EDITS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    assert REFUSED.read_bytes() == b"\xef\xbb\xbf" + text.encode("utf-8")
    return REFUSED


def test_every_refused_row_is_listed_at_once_and_nothing_is_written(store, tmp_path) -> None:
    path = _bad_export(tmp_path)
    with pytest.raises(RosterRefused) as info:
        service.import_roster(store, path)
    problems = info.value.problems
    # Row 13 is refused for its PTO, so row 14 (55076) is the first row of VP-103 read and
    # row 15's 55075 is the one that disagrees with it.
    assert [(p.row, p.column) for p in problems] == [where for _, _, where in BAD_EDITS]
    assert str(info.value).splitlines()[0] == (
        f"{REFUSED}: 8 of 17 rows refused (10 problems); nothing was written. Fix these and import "
        "the file again:"
    )
    by_place = {(p.row, p.column): p for p in problems}
    assert by_place[(4, "home_zip")].sentence() == (
        "Row 4 (EMP-2003), home_zip '5541': ZIP code 05541 does not exist; check the number."
    )
    assert by_place[(6, "email")].sentence() == (
        "Row 6 (EMP-3001), email empty: Write the rider's e-mail address (the outreach writes "
        "to it)."
    )
    assert by_place[(12, "employee_id")].problem == (
        "EMP-3006 is on row 11 already; write each employee once."
    )
    assert store.repo.counts() == {"employees": 0, "vanpools": 0, "riders": 0, "cases": 0}


def test_a_dry_run_writes_nothing(store) -> None:
    report = service.import_roster(store, EXPORT, dry_run=True)
    assert report.dry_run and report.added["employees"] == 17
    assert store.repo.counts()["employees"] == 0
    assert store.repo.audit_log() == []


@pytest.mark.parametrize(
    ("encode", "separator"), [("cp1252", ","), ("utf-8", ";")], ids=["windows-1252", "semicolons"]
)
def test_excel_encodings_and_separators(store, tmp_path, encode: str, separator: str) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(_export_text().replace(",", separator).encode(encode))
    assert service.import_roster(store, path).added["employees"] == 17
    assert store.repo.get_employee("EMP-3002").name == "José Núñez"


def test_blank_rows_in_the_middle_keep_the_row_numbers(tmp_path) -> None:
    lines = _export_text().split("\r\n")
    lines.insert(2, ",,,,")  # a blank row after the first employee
    rows = read_rows(_write(tmp_path, "\r\n".join(lines)))
    assert rows.numbers[:3] == [2, 4, 5] and rows.blank == 3


def test_a_non_riders_shift_needs_its_zone_and_a_riders_shift_is_required(store, tmp_path) -> None:
    text = _export_text().replace(
        '"Park, Jae",Finance,,55102,St Paul HQ,,,',
        '"Park, Jae",Finance,,55102,St Paul HQ,,Mon-Fri 09:00-17:00,',
    )
    text = text.replace(
        'Olson, Kari",Plant Ops,kari.olson@example.com,55075-4634,Eagan,Day Shift,Mon-Fri 7:00-15:30',
        'Olson, Kari",Plant Ops,kari.olson@example.com,55075-4634,Eagan,Day Shift,',
    )
    with pytest.raises(RosterRefused) as info:
        service.import_roster(store, _write(tmp_path, text))
    assert [(p.row, p.employee_id, p.column) for p in info.value.problems] == [
        (2, "EMP-2001", "shift"),
        (16, "EMP-4001", "timezone"),
    ]


def test_a_shift_is_read_even_when_its_zone_is_refused(store, tmp_path) -> None:
    text = _export_text().replace(
        "Day Shift,Mon-Fri 7:00-15:30,America/Chicago", "Day Shift,Mon-Fry 7:00-15:30,Central"
    )
    with pytest.raises(RosterRefused) as info:
        service.import_roster(store, _write(tmp_path, text))
    assert [(p.row, p.column) for p in info.value.problems] == [(2, "timezone"), (2, "shift")]


def test_a_shift_check_of_an_employee_without_a_shift_is_one_sentence(store) -> None:
    service.import_roster(store, EXPORT)
    with pytest.raises(InputError, match=r"^EMP-4001 has no shift on record; import the roster"):
        service.SHIFT_STRATEGIES["rules"](
            ShiftInput(("EMP-3001", "EMP-4001")), store, RunConfig.of(store.settings)
        )


def test_optional_shift_migration_keeps_the_rows_it_finds(tmp_path) -> None:
    from alembic import command
    from sqlalchemy import text

    from casework.stores.sql import (
        _alembic_config,
        current_heads,
        get_engine,
        migrate,
        migration_locations,
    )

    engine = get_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = _alembic_config(engine, migration_locations())
    command.upgrade(cfg, "vanpool_0001")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO vanpool_shifts (shift_id, name, spec, timezone) "
                "VALUES ('SH-1', 'Day', 'Mon-Fri 07:00-15:30', 'America/New_York')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO vanpool_employees (employee_id, name, email, home_zip, home_lat, "
                "home_lng, site, shift_pk, pto, updated_at) VALUES ('EMP-0001', 'A', "
                "'a@example.com', '01835', 42.75, -71.08, 'Haverhill', 1, '', '2026-01-01')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO vanpool_vanpools (vanpool_id, work_site, pickup_zip, pickup_lat, "
                "pickup_lng, departure_time, return_time, timezone, max_commute_miles) VALUES "
                "('VP-001', 'Haverhill', '01830', 42.79, -71.07, '06:00', '16:00', "
                "'America/New_York', 10)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO vanpool_riders (vanpool_pk, employee_pk, joined_at) "
                "VALUES (1, 1, '2026-01-01')"
            )
        )
    migrate(engine)  # riders reference the employees: a table rebuild would fail here
    assert "vanpool_0003" in current_heads(engine)  # through vanpool_0002_optional_shift
    from casework.apps.vanpool.repository import VanpoolRepository

    repo = VanpoolRepository(engine)
    assert repo.get_vanpool("VP-001").riders[0].shift_id == "SH-1"
    insert = text(
        "INSERT INTO vanpool_employees (employee_id, name, email, home_zip, home_lat, "
        "home_lng, site, shift_pk, pto, updated_at) VALUES ('EMP-0002', 'B', '', "
        "'01835', 42.75, -71.08, 'Haverhill', NULL, '', '2026-01-01')"
    )
    with engine.begin() as conn:
        conn.execute(insert)
    assert repo.get_employee("EMP-0002").shift_id is None
    command.downgrade(cfg, "vanpool_0002_optional_shift")  # the audit log's caller goes first
    with pytest.raises(RuntimeError, match="employees without a shift"):
        command.downgrade(cfg, "vanpool_0001")
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM vanpool_employees WHERE employee_id = 'EMP-0002'"))
    command.downgrade(cfg, "vanpool_0001")
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(insert)
    migrate(engine)
    assert repo.get_vanpool("VP-001").riders[0].employee_id == "EMP-0001"


# ---------------------------------------------------------------------------- the CLI
@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "240")  # one line per sentence in the captured output
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def _main(capsys, *args: str) -> tuple[int, str, str]:
    import sys

    from casework.cli import main

    old, sys.argv = sys.argv, ["casework", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_import_dry_run_and_json(home, capsys) -> None:
    code, out, err = _main(capsys, "vanpool", "import", str(EXPORT), "--dry-run")
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "an import would add 17 employees, 3 vanpools, 14 riders, 5 shifts; nothing written "
        "(--dry-run)."
    )
    code, out, _ = _main(capsys, "vanpool", "import", str(EXPORT), "--json")
    data = json.loads(out)
    assert code == 0 and data["written"] is True and data["total"]["riders"] == 14


def test_cli_lists_every_refused_row_and_exits_2(home, capsys) -> None:
    path = _bad_export(home)
    code, out, err = _main(capsys, "vanpool", "import", str(path))
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and "8 of 17 rows refused (10 problems)" in lines[0]
    assert len(lines) == 11 and lines[2].strip().startswith("Row 4 (EMP-2003), home_zip '5541'")
    code, out, err = _main(capsys, "vanpool", "import", str(path), "--json", "--dry-run")
    data = json.loads(out)  # one JSON document on stdout
    assert code == 2 and err == ""
    assert (data["written"], data["dry_run"], data["refused_rows"]) == (False, True, 8)
    assert data["problems"][1] == {
        "row": 4,
        "employee_id": "EMP-2003",
        "column": "home_zip",
        "value": "5541",
        "problem": "ZIP code 05541 does not exist; check the number.",
    }
    code, out, _ = _main(capsys, "vanpool", "import", str(EXPORT), "--json")
    assert code == 0 and json.loads(out)["added"]["employees"] == 17  # the bad runs wrote nothing


def test_cli_eval_on_the_export_with_the_hand_written_answers(home, capsys) -> None:
    args = ["eval", "vanpool", "--strategy", "rules", "--roster", str(EXPORT)]
    code, out, err = _main(
        capsys, *args, "--dataset", str(GOLD), "--json", "--check", "--no-progress"
    )
    data = json.loads(out)
    assert code == 0, err
    assert data["dataset"] == str(GOLD) and data["cases"] == 11
    assert data["metrics"]["verdict_accuracy"] == 1.0 and data["metrics"]["errors"] == 0
    assert data["errored_cases"] == []
    broken = home / "broken.jsonl"
    broken.write_text(
        GOLD.read_text()
        + json.dumps({"id": "no-reply", "inputs": {"text": "ok"}, "metadata": {"task": "outreach"}})
        + "\n"
    )
    code, out, err = _main(capsys, *args, "--dataset", str(broken), "--json", "--no-progress")
    assert code == 0 and "1 of 12 cases errored (errored_cases)." in err
    assert json.loads(out)["errored_cases"] == [
        {
            "case_id": "no-reply",
            "error": "InputError: Case no-reply (outreach) lacks the input 'reply'.",
        }
    ]
    code, out, err = _main(capsys, *args, "--dataset", str(broken), "--check", "--no-progress")
    assert code == 1 and "1 of 12 cases errored: --check fails the run." in err
    assert "1 of 12 case(s) errored:" in out and f"dataset {broken}" in out
