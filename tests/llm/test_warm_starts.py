"""Warm starts: the local model's prompt state saved by one process and restored by the next."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from casework.llm.local.warm import KEEP_FILES, OPENING_CHARS, SAVE_MIN_NEW_TOKENS, WarmStarts

RULES = "Rule: a stimulus shown is a Sensory-event.\n" * 60  # the shared opening
assert len(RULES) > OPENING_CHARS


class FakeSlot:
    """llama.cpp's slot actions on files: save writes the 'state' it holds, restore reads it."""

    def __init__(self, folder: Path, fail: str = "") -> None:
        self.folder, self.fail = folder, fail
        self.state = ""
        self.calls: list[tuple[str, str]] = []

    def __call__(self, action: str, filename: str) -> dict[str, Any]:
        self.calls.append((action, filename))
        if action == self.fail:
            raise OSError(f"could not {action}")
        if action == "save":
            (self.folder / filename).write_text(self.state)
            return {"n_saved": len(self.state)}
        self.state = (self.folder / filename).read_text()
        return {"n_restored": len(self.state)}


def _warm(tmp_path: Path, **kw: str) -> tuple[WarmStarts, FakeSlot]:
    slot = FakeSlot(tmp_path, **kw)
    return WarmStarts(tmp_path, "qwen2.5-model-c8192", slot), slot


def _ran(warm: WarmStarts, slot: FakeSlot, prompt: str, evaluated: int) -> None:
    """A completion: what warm starts do before and after it."""
    warm.before(prompt)
    slot.state = prompt
    warm.after(prompt, {"timings": {"prompt_n": evaluated}})


def test_a_costly_prompt_is_saved_and_the_next_process_restores_it(tmp_path: Path) -> None:
    first, slot = _warm(tmp_path)
    _ran(first, slot, RULES + "Describe: a red square.", evaluated=1200)
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert len(saved) == 1 and saved[0].startswith("qwen2_5-model-c8192-")  # no partial left
    assert saved[0].endswith(".bin")

    nxt, fresh = _warm(tmp_path)  # a new process: an empty slot
    assert nxt.before(RULES + "Describe: a blue circle.") == len(RULES) + 23
    assert fresh.state.startswith(RULES) and fresh.calls == [("restore", saved[0])]
    # the slot holds that opening now: the next prompt of it restores nothing again
    fresh.state = RULES + "x"
    nxt.after(RULES + "x", {"timings": {"prompt_n": 12}})
    assert nxt.before(RULES + "Describe: a green line.") == 0
    assert fresh.calls == [("restore", saved[0])]


def test_cheap_and_short_prompts_leave_nothing(tmp_path: Path) -> None:
    warm, slot = _warm(tmp_path)
    _ran(warm, slot, RULES + "cached mostly", evaluated=SAVE_MIN_NEW_TOKENS - 1)
    _ran(warm, slot, "short prompt", evaluated=5000)
    assert list(tmp_path.iterdir()) == [] and slot.calls == []


def test_another_opening_is_restored_when_the_slot_holds_one(tmp_path: Path) -> None:
    warm, slot = _warm(tmp_path)
    other = "Schema: CREATE TABLE singer (id INTEGER, name TEXT);\n" * 40
    _ran(warm, slot, RULES + "a", evaluated=900)
    _ran(warm, slot, other + "b", evaluated=900)  # the slot now holds the schema prompt
    assert warm.before(RULES + "c") > 0 and slot.state.startswith(RULES)


def test_a_failed_save_or_restore_runs_cold_and_leaves_no_partial(tmp_path: Path) -> None:
    warm, slot = _warm(tmp_path, fail="save")
    _ran(warm, slot, RULES + "a", evaluated=900)
    assert list(tmp_path.iterdir()) == []
    ok, good = _warm(tmp_path)
    _ran(ok, good, RULES + "a", evaluated=900)
    broken, _ = _warm(tmp_path, fail="restore")
    assert broken.before(RULES + "b") == 0 and broken.holding is None


def test_only_the_most_recently_used_states_are_kept(tmp_path: Path) -> None:
    warm, slot = _warm(tmp_path)
    for i in range(KEEP_FILES + 3):
        _ran(warm, slot, f"{i:03d}" + RULES, evaluated=900)
        newest = max(tmp_path.glob("*.bin"), key=lambda p: p.stat().st_mtime)
        os.utime(newest, (time.time() + i, time.time() + i))  # distinct times on any clock
    kept = list(tmp_path.glob("*.bin"))
    assert len(kept) == KEEP_FILES


@pytest.mark.slow
def test_the_bundled_model_restores_a_saved_prompt_in_a_new_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two engines of the real model, as two processes: the second's first request
    evaluates only the tokens after the saved opening."""
    from casework.llm.bundled import MODEL_FILE
    from casework.llm.local import engine

    bundled = Path(os.environ["CASEWORK_MODEL_PATH"]) / MODEL_FILE
    monkeypatch.setenv(engine.WARM_START_ENV, "1")
    model = tmp_path / "models" / "bundled.gguf"  # its saved states beside it, in tmp_path
    model.parent.mkdir()
    model.symlink_to(bundled)
    prompt = RULES + "Q: which tag marks a stimulus?\nA:"
    request = {"prompt": prompt, "max_tokens": 2, "cache_prompt": True, "temperature": 0.0}
    first = engine.engine_for(model, 2048, 2)
    cold = first.complete(request)["timings"]
    assert cold["cache_n"] == 0 and cold["prompt_n"] > SAVE_MIN_NEW_TOKENS
    assert len(list((tmp_path / "models" / "slots").glob("*.bin"))) == 1
    monkeypatch.setattr(engine, "_ENGINES", {})  # a new process: a new server, empty slot
    second = engine.engine_for(model, 2048, 2)
    assert second is not first and second.warm is not None
    warm = second.complete({**request, "prompt": RULES + "Q: which tag marks a response?\nA:"})
    assert second.warm.restored_tokens >= cold["prompt_n"] - 2
    assert warm["timings"]["prompt_n"] < 20  # only the new question, not the rules again
