"""The llama.cpp server behind the local model: one per (path, context, threads) per process."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.errors import ConfigError, ModelError

__all__ = ["MISSING_MODEL", "Engine", "engine_for", "llama_load_check"]

MISSING_MODEL = "The bundled model is not prepared: run `make model` (or `casework model prepare`)."


@dataclass
class Engine:
    server: Any
    lock: threading.Lock
    load_seconds: float


_ENGINES: dict[tuple[str, int, int], Engine] = {}
_ENGINES_LOCK = threading.Lock()


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
            engine = _ENGINES[key] = Engine(server, threading.Lock(), seconds)
        return engine


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
