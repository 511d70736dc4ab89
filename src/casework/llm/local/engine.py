"""The llama.cpp server behind the local model: one per (path, context, threads) per process."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.errors import ConfigError, ModelError
from casework.llm.local.warm import WarmStarts, http_slot_action

__all__ = ["MISSING_MODEL", "Engine", "engine_for", "llama_load_check"]

MISSING_MODEL = "The bundled model is not prepared: run `make model` (or `casework model prepare`)."


@dataclass
class Engine:
    server: Any
    lock: threading.Lock
    load_seconds: float
    warm: WarmStarts | None = None
    """Prompt states kept between processes (None: off, or the server has no slot endpoint)."""

    def complete(self, request: dict[str, Any]) -> Any:
        """One completion under the lock (one CPU model: requests run one at a time), from a
        saved state of the prompt's opening when one is on disk, leaving its own when new."""
        with self.lock:
            if self.warm is not None:
                self.warm.before(str(request.get("prompt", "")))
            result = self.server.handle_completions(request)
            if self.warm is not None and isinstance(result, dict) and "error" not in result:
                self.warm.after(str(request.get("prompt", "")), result)
            return result


_ENGINES: dict[tuple[str, int, int], Engine] = {}
_ENGINES_LOCK = threading.Lock()


WARM_START_ENV = "CASEWORK_MODEL_WARM_START"
"""Set to 0 to keep no prompt state between processes (``casework.llm.local.warm``)."""


def _slots_dir(path: Path) -> Path:
    return path.parent / "slots"


def _server_params(path: Path, n_ctx: int, n_threads: int) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one slot: every request reuses (and extends) the same KV cache
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.cache_ram_mib = 2048  # RAM copies of other conversations' prefixes (multi-agent)
    params.sampling.temp = 0.0
    params.sampling.top_k = 1
    params.sampling.seed = 42
    params.warmup = False
    params.slot_save_path = f"{_slots_dir(path)}/"  # warm starts save and restore here only
    params.verbosity = -1  # llama.cpp logs every request to stderr otherwise
    return params


def _load_server(path: Path, n_ctx: int, n_threads: int) -> tuple[Any, float]:
    import xllamacpp

    if not path.is_file():
        raise ConfigError(MISSING_MODEL)
    start = time.perf_counter()
    try:
        server = xllamacpp.Server(_server_params(path, n_ctx, n_threads))
    except Exception as exc:
        raise ModelError(f"llama.cpp could not load {path}: {exc}.") from exc
    return server, time.perf_counter() - start


def engine_for(path: Path, n_ctx: int, n_threads: int) -> Engine:
    key = (str(Path(path).resolve()), n_ctx, n_threads)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            server, seconds = _load_server(Path(path), n_ctx, n_threads)
            warm = _warm_starts(server, Path(path), n_ctx)
            engine = _ENGINES[key] = Engine(server, threading.Lock(), seconds, warm)
        return engine


def _warm_starts(server: Any, path: Path, n_ctx: int) -> WarmStarts | None:
    address = getattr(server, "listening_address", "")
    if os.environ.get(WARM_START_ENV, "1") == "0" or not address:
        return None
    folder = _slots_dir(path)
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None  # a read-only model folder: every process starts cold
    key = f"{path.stem}-{path.stat().st_size}-c{n_ctx}"
    return WarmStarts(folder, key, http_slot_action(address))


def llama_load_check(path: Path) -> float:
    """Load the GGUF in a fresh llama.cpp instance (small context) and return the seconds taken.

    For ``casework doctor``. Raises ConfigError if the file is missing, ModelError if llama.cpp
    cannot load it or cannot generate a token with it.
    """
    server, seconds = _load_server(Path(path), 512, 2)
    result = server.handle_completions({"prompt": "1+1=", "max_tokens": 1, "cache_prompt": False})
    if not isinstance(result, dict) or "error" in result:
        raise ModelError(f"llama.cpp loaded {path} but could not generate: {result}.")
    del server
    return seconds
