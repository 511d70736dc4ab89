"""Read labelled receipt files (tokens, boxes, BIO tags, merchant name) into receipts.

The format is the one of the bundled samples: a JSON object with ``tokens`` (words in reading
order), ``bboxes`` (``[x0, y0, x1, y1]`` per token), ``ner_tags`` (``O``, ``B-LABEL``,
``I-LABEL``), and optionally ``merchant_name``, ``receipt_key`` (``image_id#n``) and
``metadata``. A file may also hold a list of such objects. Lines are rebuilt from the boxes;
the merchant place is derived from the labelled header words.

Parsing is pure (``parse_file``); ``import_files`` parses every file first and writes them in
one transaction, so a bad file leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.apps.receipts.models import Box, Place
from casework.apps.receipts.rules import normalize, word_shape
from casework.errors import InputError

__all__ = [
    "ParsedLine",
    "ParsedReceipt",
    "ParsedWord",
    "build_lines",
    "derive_place",
    "parse_file",
    "parse_files",
    "parse_record",
]

_TAG = re.compile(r"O|[BI]-[A-Z][A-Z0-9_]*")


@dataclass
class ParsedWord:
    token_index: int
    text: str
    box: Box
    label: str | None
    line_id: int = 0
    word_id: int = 0


@dataclass
class ParsedLine:
    line_id: int
    words: list[ParsedWord]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def box(self) -> Box:
        return Box(
            x0=min(w.box.x0 for w in self.words),
            y0=min(w.box.y0 for w in self.words),
            x1=max(w.box.x1 for w in self.words),
            y1=max(w.box.y1 for w in self.words),
        )


@dataclass
class ParsedReceipt:
    image_id: str
    receipt_id: int
    merchant_name: str
    source: str
    slug: str
    lines: list[ParsedLine]
    width: float
    height: float
    place: Place
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.image_id}#{self.receipt_id}"

    @property
    def words(self) -> list[ParsedWord]:
        return [w for line in self.lines for w in line.words]


def _fail(source: str, message: str) -> InputError:
    return InputError(f"{source}: {message}")


def _centre(box: Box) -> float:
    return (box.y0 + box.y1) / 2


def build_lines(words: list[ParsedWord], *, y_up: bool = True) -> list[ParsedLine]:
    """Group words into lines by their vertical centres, top line first, words left to right.

    A word joins the current line when its centre is within half the smaller height of the
    line's centre. ``y_up``: y grows upwards (the samples' convention), so the top has the
    largest y.
    """
    sign = -1 if y_up else 1
    ordered = sorted(words, key=lambda w: (sign * _centre(w.box), w.box.x0))
    groups: list[list[ParsedWord]] = []
    centres: list[float] = []
    heights: list[float] = []
    for w in ordered:
        c, h = _centre(w.box), abs(w.box.y1 - w.box.y0)
        if groups and abs(c - centres[-1]) <= max(0.5 * min(h, heights[-1]), 1.0):
            groups[-1].append(w)
            n = len(groups[-1])
            centres[-1] = centres[-1] + (c - centres[-1]) / n
            heights[-1] = statistics.median(abs(x.box.y1 - x.box.y0) for x in groups[-1])
        else:
            groups.append([w])
            centres.append(c)
            heights.append(h)
    lines = []
    for i, group in enumerate(groups, start=1):
        group.sort(key=lambda w: (w.box.x0, w.token_index))
        for j, w in enumerate(group, start=1):
            w.line_id, w.word_id = i, j
        lines.append(ParsedLine(line_id=i, words=group))
    return lines


def _y_up(words: list[ParsedWord]) -> bool:
    """The samples put the top of the receipt at the largest y; detect the other convention
    from the reading order (the first tokens are at the top)."""
    if len(words) < 4:
        return True
    centres = [_centre(w.box) for w in words]
    head = statistics.mean(centres[:3])
    return head >= statistics.median(centres)


def _labelled_clusters(
    lines: list[ParsedLine], label: str, *, max_gap: int = 2, max_lines: int = 4
) -> list[list[str]]:
    """Per line of the first cluster of lines carrying ``label``: the labelled words."""
    hits = [(i, [w.text for w in line.words if w.label == label]) for i, line in enumerate(lines)]
    hits = [(i, ws) for i, ws in hits if ws]
    if not hits:
        return []
    cluster = [hits[0]]
    for i, ws in hits[1:]:
        if i - cluster[-1][0] > max_gap or len(cluster) >= max_lines:
            break
        cluster.append((i, ws))
    return [ws for _, ws in cluster]


def derive_place(merchant_name: str, lines: list[ParsedLine]) -> Place:
    """Merchant metadata from the labelled header: address, phone, website, hours."""
    address = ", ".join(" ".join(ws) for ws in _labelled_clusters(lines, "ADDRESS_LINE"))
    phone_lines = _labelled_clusters(lines, "PHONE_NUMBER", max_gap=0, max_lines=1)
    phone = " ".join(phone_lines[0]) if phone_lines else ""
    hours = ", ".join(
        " ".join(ws) for ws in _labelled_clusters(lines, "STORE_HOURS", max_gap=1, max_lines=3)
    )
    sites = [
        w.text
        for line in lines
        for w in line.words
        if w.label == "WEBSITE" and word_shape(w.text) == "url"
    ]
    name_parts = [p for p in (normalize(t) for t in merchant_name.split()) if len(p) > 2]
    preferred = [s for s in sites if any(p in normalize(s) for p in name_parts)]
    website = min(preferred or sites, key=len) if sites else ""
    return Place(
        name=merchant_name, address=address, phone=phone, website=website.lower(), hours=hours
    )


def _slug(path: Path, index: int, count: int) -> str:
    stem = path.name
    for suffix in (".json", ".labels"):
        stem = stem.removesuffix(suffix)
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "receipt"
    return f"{slug}-{index + 1}" if count > 1 else slug


def parse_record(
    data: Any, *, source: str, slug: str, rename: Mapping[str, str] | None = None
) -> ParsedReceipt:
    """One receipt object -> ParsedReceipt; raises InputError naming ``source`` on bad input.
    ``rename`` maps a file's label names to the taxonomy's (``ADDRESS`` -> ``ADDRESS_LINE``)
    before anything reads them (the merchant and its place included)."""
    if not isinstance(data, dict):
        raise _fail(source, "expected a JSON object with tokens, bboxes and ner_tags.")
    missing = [k for k in ("tokens", "bboxes", "ner_tags") if k not in data]
    if missing:
        raise _fail(source, f"missing {', '.join(missing)} (expected tokens, bboxes and ner_tags).")
    tokens, boxes, tags = data["tokens"], data["bboxes"], data["ner_tags"]
    if not all(isinstance(x, list) for x in (tokens, boxes, tags)):
        raise _fail(source, "tokens, bboxes and ner_tags must be lists.")
    if not tokens:
        raise _fail(source, "the receipt has no tokens.")
    if not (len(tokens) == len(boxes) == len(tags)):
        raise _fail(
            source,
            f"tokens, bboxes and ner_tags differ in length ({len(tokens)}, {len(boxes)}, {len(tags)}).",
        )
    words: list[ParsedWord] = []
    for i, (tok, box, tag) in enumerate(zip(tokens, boxes, tags, strict=True)):
        if not isinstance(tok, str) or not tok.strip():
            raise _fail(source, f"token {i} is empty or not a string.")
        parsed_box = _box(box)
        if parsed_box is None:
            raise _fail(source, f"bbox {i} is not four finite numbers [x0, y0, x1, y1].")
        if not isinstance(tag, str) or not _TAG.fullmatch(tag):
            raise _fail(source, f"ner_tag {i} ({tag!r}) is not O, B-LABEL or I-LABEL.")
        words.append(
            ParsedWord(
                token_index=i,
                text=tok.strip()[:400],
                box=parsed_box,
                label=None if tag == "O" else (rename or {}).get(tag[2:], tag[2:]),
            )
        )
    lines = build_lines(words, y_up=_y_up(words))
    merchant = data.get("merchant_name")
    if not isinstance(merchant, str) or not merchant.strip():
        first = _labelled_clusters(lines, "MERCHANT_NAME", max_gap=0, max_lines=1)
        merchant = " ".join(first[0]) if first else "Unknown merchant"
    merchant = merchant.strip()[:200]
    image_id, receipt_id = _receipt_key(data.get("receipt_key"), tokens, boxes)
    xs0 = min(w.box.x0 for w in words)
    raw_metadata = data.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    return ParsedReceipt(
        image_id=image_id,
        receipt_id=receipt_id,
        merchant_name=merchant,
        source=source,
        slug=slug,
        lines=lines,
        width=max(w.box.x1 for w in words) - min(xs0, 0.0),
        height=max(w.box.y1 for w in words) - min(w.box.y0 for w in words),
        place=derive_place(merchant, lines),
        extra=metadata,
    )


def _box(value: Any) -> Box | None:
    """``[x0, y0, x1, y1]`` as a Box with its corners in order; None unless four finite
    numbers (JSON's NaN and Infinity, which Python reads, are no coordinates)."""
    if not isinstance(value, list) or len(value) != 4:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return None
    x0, y0, x1, y1 = (float(v) for v in value)
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        return None
    return Box(x0=min(x0, x1), y0=min(y0, y1), x1=max(x0, x1), y1=max(y0, y1))


def _receipt_key(value: Any, tokens: list[Any], boxes: list[Any]) -> tuple[str, int]:
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([A-Za-z0-9_\-.]{1,80})#(\d{1,6})\s*", value)
        if m:
            return m.group(1), int(m.group(2))
    digest = hashlib.sha256(json.dumps([tokens, boxes]).encode()).hexdigest()
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"casework-receipt:{digest}")), 1


def parse_file(path: Path, rename: Mapping[str, str] | None = None) -> list[ParsedReceipt]:
    """Every receipt in one file (an object, or a list of objects), labels renamed by
    ``rename``."""
    path = Path(path)
    data = _read_json(path)
    records = data if isinstance(data, list) else [data]
    if not records:
        raise InputError(f"{path} holds an empty list.")
    return [
        parse_record(
            rec,
            source=str(path) if len(records) == 1 else f"{path}[{i}]",
            slug=_slug(path, i, len(records)),
            rename=rename,
        )
        for i, rec in enumerate(records)
    ]


_ONE_DOCUMENT = "write one receipt object, or a JSON list of them, per file"


def _read_json(path: Path) -> Any:
    """The file's one JSON document; InputError in one sentence for anything else."""
    if not path.is_file():
        raise InputError(f"{path} is not a file.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text.") from exc
    if not text.strip():
        raise InputError(f"{path} is empty; {_ONE_DOCUMENT}.")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # JSON Lines, or two documents one after the other
            raise InputError(
                f"{path} holds more than one JSON document (another starts on line "
                f"{exc.lineno}); {_ONE_DOCUMENT}."
            ) from None
        raise InputError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}).") from exc


def parse_files(
    paths: Sequence[Path], rename: Mapping[str, str] | None = None
) -> list[ParsedReceipt]:
    """Every receipt of every file, in order; a file named twice, or a receipt key given
    twice, is refused (the second receipt would be dropped as if imported already)."""
    named: set[Path] = set()
    for path in map(Path, paths):
        if path.resolve() in named:
            raise InputError(f"{path} is named twice; name each file once.")
        named.add(path.resolve())
    parsed = [rec for path in paths for rec in parse_file(Path(path), rename)]
    first: dict[str, ParsedReceipt] = {}
    for rec in parsed:
        if rec.key in first:
            raise InputError(
                f"{rec.source}: receipt key {rec.key} is also {first[rec.key].source}'s; "
                "give each receipt its own receipt_key."
            )
        first[rec.key] = rec
    return parsed
