"""Receipts fixtures: one seeded store per session (embedding ~1,400 words once), small
fresh stores for tests that write, scripted models, stub validators."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.labels import resolve_ref
from casework.apps.receipts.models import LabelDecision, LabelInput, WordRef
from casework.apps.receipts.service import bundled_receipt_files, import_files, seed
from casework.config import Settings, get_settings
from casework.runtime.decision import EndReason, RunInfo

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def seeded_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("receipts-home")


@pytest.fixture(scope="session")
def seeded_settings(seeded_home: Path) -> Settings:
    return Settings(
        home=seeded_home, allow_network_models=False, model_path=get_settings().models_dir
    )


@pytest.fixture(scope="session")
def seeded(seeded_settings: Settings) -> ReceiptsDeps:
    """Deps on a store with every bundled receipt imported and embedded (read-only use)."""
    deps = build_deps(seeded_settings)
    report = seed(deps)
    assert report.vector_error is None
    return deps


@pytest.fixture
def ref(seeded: ReceiptsDeps):
    """``ref("wildfork", 12, 4, "UNIT_PRICE")`` -> WordRef on the seeded store."""

    def make(receipt: str, line: int, word: int, label: str, **kw) -> WordRef:
        return resolve_ref(seeded, receipt, line, word, label, **kw)

    return make


SMALL = ("chevron", "casaverde", "bluebottle", "walgreens")


@pytest.fixture
def small(tmp_path: Path) -> ReceiptsDeps:
    """A fresh store with four bundled receipts (~230 words) for tests that write."""
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    deps = build_deps(settings)
    files = [p for p in bundled_receipt_files() if p.name.split(".")[0] in SMALL]
    report = import_files(deps, files)
    assert report.vector_error is None and len(report.added) == len(SMALL)
    return deps


def _write_receipt(
    path: Path,
    tokens_tags: list[tuple[str, str]],
    *,
    lines: list[int],
    merchant: str | None = "Test Mart",
    key: str | None = "testimg#1",
    y_up: bool = True,
) -> Path:
    """A receipt file: ``tokens_tags[i]`` sits on line ``lines[i]`` (0 = top)."""
    tokens, boxes, tags = [], [], []
    x_by_line: dict[int, int] = {}
    for (tok, tag), line in zip(tokens_tags, lines, strict=True):
        x = x_by_line.get(line, 10)
        y = 900 - 20 * line if y_up else 100 + 20 * line
        boxes.append([x, y, x + 20 * len(tok), y + 12])
        x_by_line[line] = x + 20 * len(tok) + 15
        tokens.append(tok)
        tags.append(tag)
    data: dict = {"tokens": tokens, "bboxes": boxes, "ner_tags": tags}
    if merchant:
        data["merchant_name"] = merchant
    if key:
        data["receipt_key"] = key
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def write_receipt():
    """``write_receipt(path, [(token, tag), ...], lines=[...])`` writes a receipt file."""
    return _write_receipt


@pytest.fixture
def copy_bundled(tmp_path: Path):
    def copy(name: str) -> Path:
        src = next(p for p in bundled_receipt_files() if p.name.startswith(name + "."))
        dst = tmp_path / src.name
        shutil.copy(src, dst)
        return dst

    return copy


class StubStrategy:
    """A strategy that answers from a table: (word text, label) -> (verdict, confidence)."""

    def __init__(
        self,
        answers: dict[tuple[str, str], tuple[str, float]],
        default: tuple[str, float] = ("NEEDS_REVIEW", 60.0),
    ) -> None:
        self.answers = answers
        self.default = default
        self.calls: list[LabelInput] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def __call__(self, input: LabelInput, deps: object, config: object) -> LabelDecision:
        with self._lock:
            self.calls.append(input)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(0.01)
        with self._lock:
            self.in_flight -= 1
        verdict, confidence = self.answers.get((input.word, input.suggested_label), self.default)
        return LabelDecision(
            verdict=verdict,
            confidence=confidence,
            reasoning=f"stub says {verdict}",
            run=RunInfo(ended_by=EndReason.SUBMIT, strategy="stub"),
        )


@pytest.fixture
def stub_strategy():
    return StubStrategy
