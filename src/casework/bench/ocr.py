"""``casework bench ocr``: character and word error rates of each OCR engine, and seconds per
page, on scans that come with ground-truth transcripts (ICDAR 2019 SROIE's, or yours).

A folder holds pages in SROIE's layout: ``img/NAME.jpg`` with ``box/NAME.csv`` (one text line
a row: ``x1,y1,x2,y2,x3,y3,x4,y4,TEXT``) and, for field gold, ``key/NAME.json``; or the files
side by side (``NAME.jpg`` and ``NAME.txt``, as SROIE's task 1 download has them). Each page
is read the way ``casework documents add`` reads it (``service.read_file``: image in, text
out). The reference is the transcript's boxes put in lines by the same reading order, so an
engine is not charged for the order in which the annotators listed the boxes. Rates compare
upper case with runs of whitespace as one space (SROIE's transcripts are in capitals), over
the whole page: edits over reference characters (CER) and over reference words (WER), summed
over pages. The data stays where it is: nothing of it is copied or committed.

Pages split in two by their order in the folder, even positions for development (what the
engines' settings were fitted on) and odd ones held out. ``--write-dataset`` writes the pages
that have key files as a ``casework eval documents --dataset`` file (gold company, date,
address, total), so the same split measures field F1 through OCR.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from casework.clikit import progress
from casework.errors import InputError

__all__ = [
    "SPLITS",
    "TranscribedPage",
    "error_rates",
    "load_pages",
    "print_ocr_report",
    "reference_text",
    "run_ocr_bench",
    "split_pages",
    "write_dataset",
]

SPLITS = ("dev", "held-out", "all")
_IMAGES = (".jpg", ".jpeg", ".png")


@dataclass(frozen=True)
class TranscribedPage:
    name: str
    image: Path
    transcript: Path
    key: Path | None


def load_pages(folder: Path) -> list[TranscribedPage]:
    """Every image of the folder that has a transcript, sorted by name; one sentence when the
    folder is missing or holds none."""
    if not folder.is_dir():
        raise InputError(f"No folder {str(folder)!r}; give a folder of scans with transcripts.")
    images = folder / "img" if (folder / "img").is_dir() else folder
    pages = []
    for image in sorted(p for p in images.iterdir() if p.suffix.lower() in _IMAGES):
        for transcript in (folder / "box" / f"{image.stem}.csv", image.with_suffix(".txt")):
            if transcript.is_file():
                key = folder / "key" / f"{image.stem}.json"
                pages.append(
                    TranscribedPage(image.stem, image, transcript, key if key.is_file() else None)
                )
                break
    if not pages:
        raise InputError(
            f"{folder} holds no scan with a transcript: put img/NAME.jpg with box/NAME.csv "
            "(SROIE's layout), or NAME.jpg with NAME.txt side by side."
        )
    return pages


def split_pages(
    pages: list[TranscribedPage], split: str, limit: int | None = None
) -> list[TranscribedPage]:
    """The development (even positions) or held-out (odd) pages, or all; ``limit`` takes that
    many spread evenly over the split (a sample, not the first few)."""
    if split not in SPLITS:
        raise InputError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}.")
    chosen = pages if split == "all" else pages[0 if split == "dev" else 1 :: 2]
    if limit is not None and limit < len(chosen):
        chosen = [chosen[i * len(chosen) // limit] for i in range(limit)]
    return chosen


def _transcript_boxes(path: Path) -> list[list[Any]]:
    boxes = []
    for row in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = row.split(",", 8)
        if len(parts) < 9:
            continue
        try:
            c = [float(v) for v in parts[:8]]
        except ValueError:
            continue
        quad = [[c[0], c[1]], [c[2], c[3]], [c[4], c[5]], [c[6], c[7]]]
        boxes.append([quad, parts[8].strip(), 1.0])
    return boxes


def reference_text(path: Path) -> str:
    """A transcript's lines in the reading order the OCR engines' boxes are put in."""
    from casework.registry import app_service

    return str(app_service("documents").boxes_to_text(_transcript_boxes(path)))


def _words(text: str) -> str:
    return " ".join(text.upper().split())


def error_rates(pairs: list[tuple[str, str]]) -> tuple[float, float]:
    """(CER, WER) of (hypothesis, reference) pages: Levenshtein edits summed over the pages,
    over the reference's characters and words, case and runs of whitespace ignored."""
    from rapidfuzz.distance import Levenshtein

    char_edits = chars = word_edits = words = 0
    for hypothesis, reference in pairs:
        hyp, ref = _words(hypothesis), _words(reference)
        char_edits += Levenshtein.distance(hyp, ref)
        chars += len(ref)
        word_edits += Levenshtein.distance(hyp.split(), ref.split())
        words += len(ref.split())
    return (char_edits / chars if chars else 0.0, word_edits / words if words else 0.0)


def _cpu() -> float:
    """CPU seconds of this process's threads and of its finished children (tesseract runs as
    one): on a shared machine the wall time says as much about the neighbours as the engine."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_ocr_bench(
    folder: Path,
    engines: list[str],
    *,
    split: str = "dev",
    limit: int | None = None,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Each engine reads each page of the split once, after one untimed read that loads it."""
    from casework.registry import app_service

    documents = app_service("documents")
    unknown = [e for e in engines if e not in documents.ENGINE_NAMES]
    if unknown:
        raise InputError(
            f"Unknown OCR engine {unknown[0]!r}; choose among {', '.join(documents.ENGINE_NAMES)}."
        )
    for name in engines:
        documents.ocr_engine(
            name, cached=False
        )  # one not installed: one sentence before any page is read
    pages = split_pages(load_pages(folder), split, limit)
    references = [reference_text(p.transcript) for p in pages]
    rows = []
    with progress(enabled=show_progress) as bar:
        for name in engines:
            task = bar.add_task(f"ocr {name}", total=len(pages))
            documents.read_file(
                pages[0].image, engine=name, cached=False
            )  # loads the engine's models
            texts, seconds, cpu = [], [], []
            for page in pages:
                started, cpu_started = time.perf_counter(), _cpu()
                texts.append(documents.read_file(page.image, engine=name, cached=False).raw_text)
                seconds.append(time.perf_counter() - started)
                cpu.append(_cpu() - cpu_started)
                bar.advance(task)
            cer, wer = error_rates(list(zip(texts, references, strict=True)))
            rows.append(
                {
                    "engine": name,
                    "cer": round(cer, 4),
                    "wer": round(wer, 4),
                    "seconds_per_page": round(statistics.mean(seconds), 3),
                    "seconds_max": round(max(seconds), 3),
                    "cpu_seconds_per_page": round(statistics.mean(cpu), 3),
                }
            )
    return {
        "folder": str(folder),
        "split": split,
        "pages": len(pages),
        "first": pages[0].name,
        "last": pages[-1].name,
        "engines": rows,
    }


def write_dataset(
    folder: Path,
    out: Path,
    *,
    split: str = "dev",
    limit: int | None = None,
    exclude: list[Path] | None = None,
) -> int:
    """The split's pages that have key files as an evaluation dataset (absolute file paths,
    gold company / date / address / total); returns how many lines it wrote. ``exclude``:
    earlier datasets whose pages are left out before ``limit`` spreads its sample, so a new
    held-out set shares no page with the ones already read."""
    used = _used_images(exclude or [])
    pages = [
        p
        for p in split_pages(load_pages(folder), split, None)
        if p.key is not None and p.image.name not in used
    ]
    if limit is not None and limit < len(pages):
        pages = [pages[i * len(pages) // limit] for i in range(limit)]
    if not pages:
        raise InputError(f"{folder} has no key/NAME.json files, so no field gold to write.")
    lines = []
    for page in pages:
        assert page.key is not None
        key = json.loads(page.key.read_text(encoding="utf-8", errors="replace"))
        gold = {k: key.get(k) for k in ("company", "date", "address", "total") if key.get(k)}
        lines.append(
            json.dumps(
                {
                    "id": f"sroie-{page.name}",
                    "file": str(page.image.resolve()),
                    "gold": gold,
                    "metadata": {"split": split},
                },
                ensure_ascii=False,
            )
        )
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def _used_images(datasets: list[Path]) -> set[str]:
    """The image file names the cases of these datasets read; a missing or unreadable file
    is one sentence."""
    used: set[str] = set()
    for dataset in datasets:
        if not dataset.is_file():
            raise InputError(f"No dataset {str(dataset)!r} to exclude; check the path.")
        for number, line in enumerate(dataset.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                used.add(Path(json.loads(line)["file"]).name)
            except (ValueError, KeyError, TypeError):
                raise InputError(
                    f'{dataset} line {number} is not a dataset case with a "file"; '
                    "exclude a file that --write-dataset wrote."
                ) from None
    return used


def print_ocr_report(result: dict[str, Any], console: Console) -> None:
    table = Table(
        "engine",
        "CER",
        "WER",
        "s/page",
        "slowest",
        "CPU s/page",
        title=f"OCR on {result['pages']} pages ({result['split']}: {result['first']} to "
        f"{result['last']}) of {result['folder']}",
    )
    for row in result["engines"]:
        table.add_row(
            row["engine"],
            f"{row['cer']:.3f}",
            f"{row['wer']:.3f}",
            f"{row['seconds_per_page']:.2f}",
            f"{row['seconds_max']:.2f}",
            f"{row['cpu_seconds_per_page']:.2f}",
        )
    console.print(table)
