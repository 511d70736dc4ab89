"""Secrets leave only redacted: a database URL's password, the values of secret settings and
environment variables (API keys, passwords, the web secret) and the server's own file paths.

Two ways, one module. Where a value is shown on purpose (a schema's database URL) it is shown
through :func:`redact_url`. Everything that leaves the process also passes a net for the
value nobody meant to show: a URL with credentials anywhere in a sentence, a password from the
settings echoed in a driver's error, an absolute path of the server's home. HTTP answers and
pages pass :meth:`Redactor.text` (secrets and paths: a caller learns nothing of the server's
disk); log lines, traces and reports, which stay with the operator who owns those paths, pass
:func:`scrub` (secrets only; a stored report's paths are what a replay reads back).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from casework.config import Settings

__all__ = [
    "HIDDEN",
    "RedactingFilter",
    "Redactor",
    "current",
    "install",
    "redact_url",
    "redactor_for",
    "scrub",
]

HIDDEN = "***"

# scheme://user:password@host: the password part, wherever such a URL stands in a text.
_URL_CREDENTIALS = re.compile(
    r"(?P<head>\b[a-zA-Z][\w+.-]*://[^\s:/@'\"]*:)(?P<pw>[^\s@'\"]+)(?=@)"
)
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
_MIN_SECRET = 6
"""Shorter values are not hunted in texts: 'abc' would be replaced inside every word."""


def redact_url(url: str) -> str:
    """``postgresql://analyst:***@db.internal:5432/sec``; a file database's folder hidden
    (``sqlite:///***/casework.db``): the URL names the store without giving it away."""
    text = _URL_CREDENTIALS.sub(lambda m: m["head"] + HIDDEN, url)
    scheme, sep, rest = text.partition(":///")
    if sep and scheme.startswith("sqlite") and rest and rest != ":memory:":
        path = rest.split("?", 1)[0]
        return f"{scheme}:///{HIDDEN}/{Path(path).name}" + rest[len(path) :]
    return text


@dataclass(frozen=True)
class Redactor:
    """Replaces known secret values, URL passwords and the server's paths in a text."""

    secrets: tuple[str, ...] = ()
    """Longest first, so a secret that contains another goes whole."""
    paths: tuple[tuple[str, str], ...] = ()
    """(absolute folder, shown as), longest folder first."""
    _needles: tuple[bytes, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, secrets: Iterable[str], paths: Iterable[tuple[str, str]] = ()) -> Redactor:
        kept = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)
        folders = sorted({(p, shown) for p, shown in paths if len(p) > 1}, key=lambda x: -len(x[0]))
        needles = tuple(s.encode() for s in kept) + tuple(p.encode() for p, _ in folders)
        return cls(tuple(kept), tuple(folders), needles)

    def text(self, text: str, *, paths: bool = True) -> str:
        """``text`` without the secrets, URL passwords and (``paths``) the server's folders."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, HIDDEN)
        if paths:
            for folder, shown in self.paths:
                if folder in text:
                    text = text.replace(folder, shown)
        if "://" in text:
            text = _URL_CREDENTIALS.sub(lambda m: m["head"] + HIDDEN, text)
        return text

    def data(self, body: bytes) -> bytes:
        """The bytes of an HTTP answer, redacted; untouched (and not decoded) when nothing in
        them needs it, which is nearly always."""
        if not any(n in body for n in self._needles) and b"://" not in body:
            return body
        return self.text(body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def redactor_for(settings: Settings, environ: dict[str, str] | None = None) -> Redactor:
    """The secrets ``settings`` and the environment hold, and the server's folders."""
    env = os.environ if environ is None else environ
    secrets = [v.strip() for k, v in env.items() if _SECRET_ENV.search(k) and v.strip()]
    if settings.database_url:
        found = _URL_CREDENTIALS.search(settings.database_url)
        if found:
            secrets.append(found["pw"])
    home = Path(settings.home).resolve()
    paths = [(str(home), "<home>"), (str(settings.models_dir.resolve()), "<models>")]
    return Redactor.of(secrets, paths)


_current: Redactor | None = None


def install(redactor: Redactor) -> None:
    """Make ``redactor`` the one :func:`scrub` uses (the server and the CLI do at start)."""
    global _current
    _current = redactor


def current() -> Redactor:
    """The installed redactor, else one for the process's settings."""
    global _current
    if _current is None:
        from casework.config import get_settings

        try:
            _current = redactor_for(get_settings())
        except Exception:  # settings that do not load still must not leak what they hold
            _current = Redactor.of(
                [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v.strip()]
            )
    return _current


def scrub(text: str) -> str:
    """``text`` without the installed redactor's secrets (paths kept): for traces, reports and
    log lines, which stay with the operator."""
    return current().text(text, paths=False)


class RedactingFilter(logging.Filter):
    """A log handler's filter: the message (arguments and traceback included) redacted."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        # The message and each argument apart: formatters such as uvicorn's access log
        # unpack ``record.args`` themselves, so its shape must stay.
        redactor = self._redactor or current()

        def clean(value: Any) -> Any:
            if isinstance(value, int | float | bool) or value is None:
                return value
            text = value if isinstance(value, str) else str(value)
            hidden = redactor.text(text, paths=False)
            return value if hidden == text else hidden  # an object only when it leaks

        record.msg = clean(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(clean(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: clean(v) for k, v in record.args.items()}
        if record.exc_info:
            trace = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redactor.text(trace, paths=False)
            record.exc_info = None
        return True
