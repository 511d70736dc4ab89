"""Session cookies and CSRF tokens for the web UI.

The session itself lives on the server (``casework.access.sessions``: a row per sign-in, so
sign-out, a password change or disabling the user ends it at once); the cookie carries only
its random id, signed with HMAC-SHA256 so a forged or mangled cookie is refused before any
database look-up, and changing the secret signs everyone out. The secret comes from
``CASEWORK_WEB_SECRET`` or is generated once into ``<home>/web-secret`` (mode 0600).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from pathlib import Path

from casework.config import Settings

__all__ = [
    "LOGIN_COOKIE",
    "SESSION_COOKIE",
    "decode_session",
    "encode_session",
    "load_secret",
    "same_token",
    "sign",
    "unsign",
]

SESSION_COOKIE = "cw_session"
LOGIN_COOKIE = "cw_login"
"""Holds the sign-in form's CSRF token before there is a session (double submit)."""
SECRET_ENV = "CASEWORK_WEB_SECRET"
_SESSION_ID_CHARS = 43
"""``secrets.token_urlsafe(32)``: what ``casework.access.sessions`` hands out."""


def load_secret(settings: Settings) -> bytes:
    """The signing secret: the environment's, else the one stored under the home directory."""
    from_env = os.environ.get(SECRET_ENV, "").strip()
    if from_env:
        return from_env.encode()
    path = Path(settings.home) / "web-secret"
    if not path.exists():
        from casework.stores.sql import private_dir

        private_dir(path.parent)  # the home is the user's alone (0700), whoever makes it first
        try:  # O_EXCL: two processes starting at once keep the first one's secret
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(48))
    secret = path.read_text().strip()
    if not secret:
        raise OSError(f"{path} is empty; delete it and the server will create a new secret.")
    return secret.encode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(secret: bytes, payload: dict[str, object]) -> str:
    body = _b64(json.dumps(payload, separators=(",", ":")).encode())
    mac = hmac.new(secret, body.encode(), hashlib.sha256).digest()
    return f"{body}.{_b64(mac)}"


def unsign(secret: bytes, value: str, *, max_age: float | None = None) -> dict[str, object] | None:
    """The payload of a signed value, or None when it was tampered with or is too old."""
    body, _, mac = value.partition(".")
    if not body or not mac:
        return None
    expected = hmac.new(secret, body.encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(expected, _unb64(mac)):
            return None
        payload = json.loads(_unb64(body))
    except (ValueError, TypeError):
        return None
    if not isinstance(payload, dict):
        return None
    issued = payload.get("t")
    if max_age is not None and (
        not isinstance(issued, int | float) or time.time() - issued > max_age
    ):
        return None
    return payload


def encode_session(secret: bytes, session_id: str) -> str:
    """The cookie value for a session id (from ``casework.access.start_session``)."""
    return sign(secret, {"s": session_id})


def decode_session(secret: bytes, value: str | None) -> str | None:
    """The session id a cookie carries, or None when it is missing, forged or malformed (the
    server still looks the id up: only a live session row makes it a session)."""
    if not value or len(value) > 200:
        return None
    payload = unsign(secret, value)
    found = payload.get("s") if payload is not None else None
    if not isinstance(found, str) or len(found) != _SESSION_ID_CHARS:
        return None
    return found


def same_token(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())
