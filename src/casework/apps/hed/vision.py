"""The vision agent: an image -> a natural-language event description, by a vision model."""

from __future__ import annotations

import base64
import io

from langchain_core.messages import HumanMessage

from casework.apps.hed.models import ROLES
from casework.errors import InputError, ModelError
from casework.runtime.prompts import load_prompt
from casework.runtime.runconfig import RunConfig

__all__ = ["MAX_IMAGE_BYTES", "check_image", "describe_image"]

MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_DESCRIPTION_WORDS = 120


def check_image(data: bytes, name: str = "the image") -> str:
    """The image's MIME type; one sentence of InputError when it is not a readable image."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise InputError(f"{name} is empty; pass a PNG, JPEG, GIF or WebP image.")
    if len(data) > MAX_IMAGE_BYTES:
        raise InputError(
            f"{name} is larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB; pass a smaller image."
        )
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
            kind = (image.format or "").lower()
    except (UnidentifiedImageError, OSError, SyntaxError):
        raise InputError(f"{name} is not an image; pass a PNG, JPEG, GIF or WebP image.") from None
    if kind not in ("png", "jpeg", "gif", "webp"):
        raise InputError(
            f"{name} is a {kind or 'unknown'} image; pass a PNG, JPEG, GIF or WebP image."
        )
    return f"image/{kind}"


def describe_image(data: bytes, config: RunConfig, *, name: str = "the image") -> str:
    """Ask the vision model for the event the image shows, as one short paragraph."""
    mime = check_image(data, name)
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    message = HumanMessage(
        content=[
            {
                "type": "text",
                "text": load_prompt(__package__, "vision", max_words=MAX_DESCRIPTION_WORDS),
            },
            {"type": "image_url", "image_url": {"url": url}},
        ]
    )
    reply = config.models(ROLES["vision"]).invoke([message])
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    words = text.split()
    if not words:
        raise ModelError("The vision model returned an empty description of the image.")
    return " ".join(words[:MAX_DESCRIPTION_WORDS])
