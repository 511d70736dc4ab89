"""Measure `casework hed validate` in a dataset's context against outside references.

1. The HED test suite (hed-standard/hed-tests, json_test_data/validation_tests.json; before
   Feb 2026 hed-specification's tests/json_tests): every case with definitions on a standard
   8.x schema. Each string, sidecar, events and combo test goes through the service functions
   `casework hed validate` calls (the definitions written to a text file, the sidecars and
   events to files), and is scored as hedtools' own spec runner scores it: a "fails" test must
   report one of the case's codes (errors, and warnings when the case is a warning case), a
   "passes" test must report nothing.
2. Public BIDS datasets with HED (hed-standard/hed-examples, datasets/*): each events file
   hedtools' BidsDataset validates, validated by `hed validate --sidecar S --events E` with the
   task sidecar whose entities the file's name carries, compared with BidsDataset's issues for
   that file (validity and error codes); each sidecar alone likewise. The same again on a
   copy with errors put in (`mutate`: an unknown tag appended to a sidecar's first level, the
   last Def/ name made unknown, the first two onsets of the first events file swapped), since
   the datasets as published are valid.
3. `hed annotate --events` (strategy rules, no model) on the first events file of each
   dataset, without a sidecar and with the dataset's sidecar stripped of its categorical HED
   (its definitions and value columns kept): whether the sidecar it writes validates.

Usage (the data is fetched outside the repository and never committed):
    python scripts/hed_context_check.py --suite validation_tests.json --datasets DIR [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from casework.apps.hed import service
from casework.apps.hed.deps import HedDeps
from casework.config import get_settings
from casework.errors import CaseworkError
from casework.runtime import RunConfig

EXCLUDED = {"code", "sourcedata", "derivatives", "stimuli", "phenotype"}
"""Folders BidsDataset leaves out by default."""


# ---------------------------------------------------------------------- the test suite
def _codes(errors: list[Any], warnings: list[Any], warning_case: bool) -> list[str]:
    return [i.code for i in errors] + ([i.code for i in warnings] if warning_case else [])


def _tsv(rows: list[list[Any]]) -> str:
    return "".join("\t".join(str(x) for x in row) + "\n" for row in rows)


def run_suite(path: Path) -> dict[str, Any]:
    cases = json.loads(path.read_text())
    tally: Counter[tuple[str, str, bool]] = Counter()
    wrong: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for case in cases:
        schema = case.get("schema")
        if not case.get("definitions"):
            skipped["no definitions"] += 1
            continue
        if not isinstance(schema, str) or not re.fullmatch(r"8\.\d\.\d", schema):
            skipped[f"schema {schema} (not a standard 8.x)"] += 1
            continue
        codes = {case["error_code"], *case.get("alt_codes", [])}
        warning_case = bool(case.get("warning"))
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            defs_file = folder / "definitions.txt"
            defs_file.write_text("\n".join(case["definitions"]) + "\n")
            defs = service.read_definitions(defs_file, schema)
            for section, tests in case["tests"].items():
                for expected, items in tests.items():
                    for n, test in enumerate(items):
                        found = _one_test(section, test, folder, defs, defs_file, schema, n)
                        if found is None:
                            continue
                        issues = _codes(*found, warning_case)
                        ok = any(c in codes for c in issues) if expected == "fails" else not issues
                        tally[(section, expected, ok)] += 1
                        if not ok:
                            wrong.append(
                                {
                                    "case": case["name"],
                                    "section": section,
                                    "expected": expected,
                                    "codes": sorted(codes),
                                    "got": issues,
                                    "test": test,
                                }
                            )
    sections: dict[str, Any] = {}
    for (section, expected, ok), count in sorted(tally.items()):
        entry = sections.setdefault(f"{section}/{expected}", {"as_suite_says": 0, "total": 0})
        entry["total"] += count
        entry["as_suite_says"] += count if ok else 0
    total = sum(tally.values())
    agree = sum(c for (_, _, ok), c in tally.items() if ok)
    return {
        "tests": total,
        "as_suite_says": agree,
        "share": round(agree / total, 4) if total else None,
        "by_section": sections,
        "skipped_cases": dict(skipped),
        "disagreements": wrong,
    }


def _one_test(
    section: str,
    test: Any,
    folder: Path,
    defs: Any,
    defs_file: Path,
    schema: str,
    n: int,
) -> tuple[list[Any], list[Any]] | None:
    if section == "string_tests":
        result = service.validate_strings([test], schema, validator="python", definitions=defs)[0]
        return list(result.errors), list(result.warnings)
    sidecar = events = None
    if section in ("sidecar_tests", "combo_tests"):
        sidecar = folder / f"{section}-{n}_events.json"
        sidecar.write_text(json.dumps(test["sidecar"] if section == "combo_tests" else test))
    if section in ("event_tests", "combo_tests"):
        events = folder / f"{section}-{n}_events.tsv"
        events.write_text(_tsv(test["events"] if section == "combo_tests" else test))
    if sidecar is None and events is None:
        return None
    try:
        report = service.validate_dataset(
            sidecar=sidecar, events=events, schema=schema, definitions=defs_file
        )
    except CaseworkError as exc:  # refused as unreadable: counted as an error report
        return [type("Refused", (), {"code": f"refused: {exc}"})()], []
    return list(report.errors), list(report.warnings)


# ---------------------------------------------------------------------- BIDS datasets
def _entities(name: str) -> set[str]:
    return {part for part in Path(name).name.split("_") if "-" in part}


def _included(path: Path, root: Path) -> bool:
    return not (set(path.relative_to(root).parts[:-1]) & EXCLUDED)


def _task_sidecars(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*_events.json") if _included(p, root))


def mutate(root: Path) -> None:
    """Put errors into a copy of a dataset: see the module's docstring."""
    for path in _task_sidecars(root):
        data = json.loads(path.read_text())
        dicts = [(c, e["HED"]) for c, e in data.items() if isinstance(e.get("HED"), dict)]
        if dicts:
            hed = dicts[0][1]
            first = next(iter(hed))
            hed[first] = hed[first] + ", Blech"
        with_def = [
            (hed, level)
            for _, hed in dicts
            for level, text in hed.items()
            if re.search(r"(?<![-\w])Def/", text)
        ]
        if with_def:
            hed, level = with_def[-1]
            hed[level] = re.sub(r"(?<![-\w])Def/([\w-]+)", r"Def/\1-missing", hed[level], count=1)
        path.write_text(json.dumps(data, indent=2))
    files = sorted(p for p in root.rglob("*_events.tsv") if _included(p, root))
    if files:
        lines = files[0].read_text().splitlines()
        header = lines[0].split("\t")
        if "onset" in header and len(lines) > 3:
            i = header.index("onset")
            a, b = lines[1].split("\t"), lines[2].split("\t")
            a[i], b[i] = b[i], a[i]
            lines[1], lines[2] = "\t".join(a), "\t".join(b)
            files[0].write_text("\n".join(lines) + "\n")


def run_datasets(folder: Path, *, mutated: bool = False) -> dict[str, Any]:
    if mutated:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "datasets"
            shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.bmp", "*.set", "*.fdt"))
            for root in copy.iterdir():
                if (root / "dataset_description.json").is_file():
                    mutate(root)
            return run_datasets(copy)

    from hed import load_schema_version
    from hed.errors import ErrorSeverity
    from hed.tools import BidsDataset

    out: dict[str, Any] = {"datasets": [], "files": 0, "validity_agrees": 0, "codes_agree": 0}
    for root in sorted(p for p in folder.iterdir() if (p / "dataset_description.json").is_file()):
        version = json.loads((root / "dataset_description.json").read_text()).get("HEDVersion")
        if not isinstance(version, str) or not re.fullmatch(r"8\.\d\.\d", version):
            out["datasets"].append({"dataset": root.name, "skipped": f"HEDVersion {version}"})
            continue
        dataset = BidsDataset(str(root), schema=load_schema_version(version))
        reference: dict[str, list[dict[str, Any]]] = {}
        for issue in dataset.validate(check_for_warnings=False):
            if issue.get("severity", ErrorSeverity.ERROR) == ErrorSeverity.ERROR:
                key = str(Path(str(issue.get("ec_filename", ""))).resolve())
                reference.setdefault(key, []).append(issue)
        group = dataset.get_file_group("events")
        checked = [Path(f.file_path).resolve() for f in group.datafile_dict.values() if f.has_hed]
        sidecars = [Path(p).resolve() for p in group.sidecar_dict]
        rows = []
        for sidecar in sidecars:
            ours = service.validate_dataset(sidecar=sidecar, schema=version)
            rows.append(_compare(sidecar, root, reference.get(str(sidecar), []), ours))
        for events in sorted(checked):
            applies = [
                s
                for s in sidecars
                if _entities(s.name) <= _entities(events.name) and _included(s, root)
            ]
            if len(applies) != 1:
                rows.append({"file": str(events.relative_to(root)), "skipped": "not one sidecar"})
                continue
            ours = service.validate_dataset(sidecar=applies[0], events=events, schema=version)
            ref = reference.get(str(events), []) + reference.get(str(applies[0]), [])
            rows.append(_compare(events, root, ref, ours))
        compared = [r for r in rows if "skipped" not in r]
        out["files"] += len(compared)
        out["validity_agrees"] += sum(r["validity_agrees"] for r in compared)
        out["codes_agree"] += sum(r["codes_agree"] for r in compared)
        invalid = sum(1 for r in compared if not r["hedtools_valid"])
        out["datasets"].append(
            {
                "dataset": root.name,
                "schema": version,
                "files": len(compared),
                "invalid_by_hedtools": invalid,
                "disagree": [r for r in compared if not r["codes_agree"]],
                "skipped": [r for r in rows if "skipped" in r],
            }
        )
    return out


def _compare(path: Path, root: Path, reference: list[dict[str, Any]], ours: Any) -> dict[str, Any]:
    ref_codes = sorted({str(i["code"]) for i in reference})
    return {
        "file": str(path.relative_to(root)),
        "hedtools_valid": not ref_codes,
        "ours_valid": ours.valid,
        "hedtools_codes": ref_codes,
        "our_codes": ours.codes,
        "validity_agrees": (not ref_codes) == ours.valid,
        "codes_agree": ref_codes == ours.codes,
    }


# ---------------------------------------------------------------------- annotate --events
def run_annotate(folder: Path) -> list[dict[str, Any]]:
    deps = HedDeps(settings=get_settings(), validator="python")
    config = RunConfig.of(get_settings())
    rows = []
    for root in sorted(p for p in folder.iterdir() if (p / "dataset_description.json").is_file()):
        version = json.loads((root / "dataset_description.json").read_text()).get("HEDVersion")
        if not isinstance(version, str) or not re.fullmatch(r"8\.\d\.\d", version):
            continue
        files = sorted(p for p in root.rglob("*_events.tsv") if _included(p, root))
        if not files:
            continue
        sidecars = [
            s for s in _task_sidecars(root) if _entities(s.name) <= _entities(files[0].name)
        ]
        for given in ("none", "stripped"):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "annotated_events.json"
                sidecar = None
                if given == "stripped" and len(sidecars) == 1:
                    sidecar = Path(tmp) / "stripped_events.json"
                    sidecar.write_text(json.dumps(_strip(json.loads(sidecars[0].read_text()))))
                elif given == "stripped":
                    continue
                row: dict[str, Any] = {"dataset": root.name, "file": files[0].name}
                row["sidecar"] = given
                try:
                    result = service.annotate_events(
                        files[0],
                        deps,
                        config,
                        sidecar=sidecar,
                        schema=version,
                        strategy="rules",
                        out=out,
                    )
                except CaseworkError as exc:
                    rows.append(row | {"refused": str(exc)})
                    continue
                made = [i for i in result.levels if i["decided_by"] != "sidecar (kept)"]
                rows.append(
                    row
                    | {
                        "written_and_valid": result.out is not None,
                        "errors": result.report.codes,
                        "levels": len(made),
                        "levels_annotated": sum(1 for i in made if i["hed"]),
                        "uses_def": sum(1 for i in made if "Def/" in i["hed"]),
                    }
                )
    return rows


def _strip(sidecar: dict[str, Any]) -> dict[str, Any]:
    """A sidecar without its categorical HED; entries holding definitions stay."""
    out = {}
    for column, entry in sidecar.items():
        hed = entry.get("HED") if isinstance(entry, dict) else None
        if isinstance(hed, dict) and "definition/" not in json.dumps(hed).casefold():
            entry = {k: v for k, v in entry.items() if k != "HED"}
        out[column] = entry
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, help="validation_tests.json of hed-tests")
    parser.add_argument("--datasets", type=Path, help="hed-examples' datasets folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    if args.suite:
        report["suite"] = run_suite(args.suite)
    if args.datasets:
        report["datasets"] = run_datasets(args.datasets)
        report["datasets_with_errors_put_in"] = run_datasets(args.datasets, mutated=True)
        report["annotate_events"] = run_annotate(args.datasets)
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=str)
        print()
        return 0
    if "suite" in report:
        s = report["suite"]
        print(f"suite: {s['as_suite_says']}/{s['tests']} tests as the suite says ({s['share']})")
        for name, entry in s["by_section"].items():
            print(f"  {name}: {entry['as_suite_says']}/{entry['total']}")
        print(f"  skipped cases: {s['skipped_cases']}")
        for w in s["disagreements"]:
            print(
                f"  differs: {w['case']} {w['section']} {w['expected']} {w['codes']} got {w['got']}"
            )
    for key in ("datasets", "datasets_with_errors_put_in"):
        if key not in report:
            continue
        d = report[key]
        print(
            f"{key}: {d['files']} files; validity agrees on {d['validity_agrees']}, "
            f"error codes on {d['codes_agree']}"
        )
        for ds in d["datasets"]:
            print(f"  {ds}")
    if "annotate_events" in report:
        for row in report["annotate_events"]:
            print(f"  annotate --events: {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
