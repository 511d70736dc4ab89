"""Warm starts: the local model's prompt state kept on disk between processes.

llama.cpp's server saves and restores a slot's KV cache (``POST /slots/0?action=save`` and
``restore``, files under its ``slot_save_path``). A request that evaluated many new prompt
tokens leaves the slot on disk under a key of its prompt's opening, the part an app's prompts
share (rules, vocabulary, schema); the next process whose prompt opens the same way restores it
before its first request, and llama.cpp evaluates only the tokens that differ. Measured with the
bundled model on 2 cores: a 1,250-token prompt took 17.9 s in a fresh process and 0.22 s in the
next one after a restore (7 ms for 36 MB). A file that cannot be restored is ignored: the
request runs cold, as it would without one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["KEEP_FILES", "OPENING_CHARS", "SAVE_MIN_NEW_TOKENS", "WarmStarts", "http_slot_action"]

log = logging.getLogger(__name__)

OPENING_CHARS = 1500
"""A prompt's opening, the key its saved state is found by; shorter prompts are not kept."""
SAVE_MIN_NEW_TOKENS = 256
"""A request that evaluated at least this many new prompt tokens saves its state."""
KEEP_FILES = 8
"""Saved states kept per model (about 30 KB a token: a 3,500-token prompt is 100 MB); the
least recently used go first."""

SlotAction = Callable[[str, str], dict[str, Any]]
"""``(action, filename) -> llama.cpp's answer``: save or restore slot 0 from/to a file."""


def http_slot_action(base_url: str) -> SlotAction:
    """Slot actions through the embedded server's loopback HTTP endpoint (never through a
    proxy the environment names: ``http_proxy`` would otherwise take loopback calls too)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def act(action: str, filename: str) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{base_url}/slots/0?action={action}",
            data=json.dumps({"filename": filename}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with opener.open(request, timeout=300) as answer:
            body: dict[str, Any] = json.loads(answer.read())
        if "error" in body:
            raise OSError(f"llama.cpp could not {action} {filename}: {body['error']}")
        return body

    return act


class WarmStarts:
    """What the one slot holds and the saved states of ``model_key`` in ``folder``."""

    def __init__(self, folder: Path, model_key: str, action: SlotAction) -> None:
        self.folder = folder
        self.model_key = re.sub(r"[^A-Za-z0-9_-]", "_", model_key)
        self._action = action
        self.holding: str | None = None
        """The opening key of the prompt the slot holds now (None: nothing or a short one)."""
        self.restored_tokens = 0

    def _opening(self, prompt: str) -> str | None:
        if len(prompt) < OPENING_CHARS:
            return None
        return hashlib.sha256(prompt[:OPENING_CHARS].encode()).hexdigest()[:16]

    def _file(self, opening: str) -> Path:
        return self.folder / f"{self.model_key}-{opening}.bin"

    def before(self, prompt: str) -> int:
        """Restore the saved state of the prompt's opening when the slot holds another;
        returns the tokens restored (0: nothing to restore, or it failed)."""
        opening = self._opening(prompt)
        if opening is None or opening == self.holding:
            return 0
        path = self._file(opening)
        if not path.is_file():
            return 0
        try:
            answer = self._action("restore", path.name)
        except OSError as exc:  # damaged, or written by another llama.cpp: run cold
            log.info("warm start skipped: %s", exc)
            return 0
        os.utime(path)  # recently used: kept longest
        self.holding = opening
        self.restored_tokens = int(answer.get("n_restored", 0))
        return self.restored_tokens

    def after(self, prompt: str, result: dict[str, Any]) -> None:
        """The slot holds ``prompt`` now; keep its state when it cost many new tokens."""
        opening = self._opening(prompt)
        self.holding = opening
        evaluated = int((result.get("timings") or {}).get("prompt_n", 0))
        if opening is None or evaluated < SAVE_MIN_NEW_TOKENS:
            return
        partial = self.folder / f"{self.model_key}-{opening}-{os.getpid()}.part"
        try:
            self._action("save", partial.name)
            os.replace(partial, self._file(opening))  # whole or not at all
        except OSError as exc:
            partial.unlink(missing_ok=True)
            log.info("warm start not saved: %s", exc)
            return
        self._forget_oldest()

    def _forget_oldest(self) -> None:
        saved = sorted(self.folder.glob(f"{self.model_key}-*.bin"), key=lambda p: p.stat().st_mtime)
        for old in saved[:-KEEP_FILES]:
            old.unlink(missing_ok=True)
