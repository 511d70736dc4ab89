"""The server's net for secrets: every answer's body (JSON, pages, event streams) and every log
line pass ``casework.redact``'s redactor before they leave, whatever route or error made them.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from casework.redact import RedactingFilter, Redactor

__all__ = ["RedactAnswers", "redact_logs"]


class RedactAnswers:
    """Pure ASGI middleware: a whole answer is redacted and its length fixed; a streamed one
    (events) chunk by chunk, without a length."""

    def __init__(self, app: ASGIApp, redactor: Redactor) -> None:
        self.app = app
        self.redactor = redactor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None

        async def send_redacted(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message  # held until the first body part says whether it is whole
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body = self.redactor.data(message.get("body", b""))
            if start is not None:
                headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
                if not message.get("more_body", False):
                    headers.append((b"content-length", str(len(body)).encode()))
                await send({**start, "headers": headers})
                start = None
            await send({**message, "body": body})

        await self.app(scope, receive, send_redacted)
        if start is not None:  # an answer that sent no body at all
            await send(start)


def redact_logs(redactor: Redactor) -> None:
    """Put the redacting filter on every handler of the root and uvicorn loggers (a filter on
    a handler sees the records of every logger that reaches it)."""
    log_filter = RedactingFilter(redactor)
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(log_filter)
