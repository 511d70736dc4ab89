"""Email for real: an outbound ``Mailer`` seam (SMTP on ``aiosmtplib``), a send queue with
retry, and an inbound SMTP receiver (``aiosmtpd``) that files replies into their threads.

Outbound messages are written as ``queued`` first and only marked ``sent`` after the SMTP
server accepted them, so a case never claims an email was sent that was refused or never
left. A refused or unreachable server leaves the message queued with ``last_error`` and a
``next_attempt_at`` (exponential back-off); ``vanpool tick`` retries the queue.

Every outbound message carries the thread id in an ``X-Casework-Thread`` header and in the
subject (``[THREAD-…]``); replies are matched by ``In-Reply-To``/``References`` message ids,
that header, or the subject tag, in that order.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from email.utils import make_msgid
from typing import Any, Protocol

import aiosmtplib

from casework.apps.vanpool.models import ID_PATTERNS
from casework.apps.vanpool.repository import VanpoolRepository
from casework.apps.vanpool.settings import VanpoolSettings
from casework.errors import CaseworkError, NotFoundError

__all__ = [
    "THREAD_HEADER",
    "InboundHandler",
    "MailError",
    "Mailer",
    "SmtpMailer",
    "build_message",
    "deliver_queue",
    "file_reply",
    "queue_message",
    "thread_id_of",
]

THREAD_HEADER = "X-Casework-Thread"
MESSAGE_HEADER = "X-Casework-Message"
MAX_BACKOFF = timedelta(hours=1)


class MailError(CaseworkError):
    """The SMTP server refused the message or could not be reached."""


class Mailer(Protocol):
    """Outbound email; a provider API (Resend, SES) implements the same method."""

    def send(self, message: EmailMessage) -> str:
        """Send or raise ``MailError``; returns the server's answer."""
        ...


class SmtpMailer:
    """SMTP through ``aiosmtplib`` with host, port, TLS and credentials from settings."""

    def __init__(self, settings: VanpoolSettings) -> None:
        self.settings = settings

    def send(self, message: EmailMessage) -> str:
        s = self.settings
        try:
            _errors, response = asyncio.run(
                aiosmtplib.send(
                    message,
                    hostname=s.smtp_host,
                    port=s.smtp_port,
                    username=s.smtp_username,
                    password=s.smtp_password.get_secret_value() if s.smtp_password else None,
                    use_tls=s.smtp_tls == "tls",
                    start_tls=s.smtp_tls == "starttls",
                    cert_bundle=str(s.smtp_ca_file) if s.smtp_ca_file else None,
                    timeout=s.smtp_timeout,
                )
            )
        except (aiosmtplib.SMTPException, OSError) as exc:
            raise MailError(
                f"SMTP {s.smtp_host}:{s.smtp_port} did not accept the message ({exc})"
            ) from exc
        return response


def build_message(
    *,
    sender: str,
    recipients: list[str],
    subject: str,
    body: str,
    thread_id: str,
    message_id: str,
    in_reply_to: str | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Subject"] = subject if thread_id in subject else f"{subject} [{thread_id}]"
    msg["Message-ID"] = make_msgid(idstring=message_id, domain="casework.local")
    msg[THREAD_HEADER] = thread_id
    msg[MESSAGE_HEADER] = message_id
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg.set_content(body)
    return msg


def queue_message(
    repo: VanpoolRepository,
    settings: VanpoolSettings,
    *,
    thread_id: str,
    recipients: list[str],
    subject: str,
    body: str,
    now: datetime,
    status: str = "queued",
    message_id: str | None = None,
) -> str:
    """Write an outbound message (queued, or a draft awaiting review); returns its MSG id."""
    msg_id = repo.add_message(
        thread_id,
        direction="outbound",
        status=status,
        sender=settings.sender,
        recipients=recipients,
        subject=subject if thread_id in subject else f"{subject} [{thread_id}]",
        body=body,
        now=now,
        message_id=message_id,
    )
    return msg_id


def _backoff(settings: VanpoolSettings, attempts: int) -> timedelta:
    return min(timedelta(seconds=settings.retry_seconds * 2 ** max(0, attempts - 1)), MAX_BACKOFF)


def send_one(
    repo: VanpoolRepository,
    settings: VanpoolSettings,
    mailer: Mailer,
    message_id: str,
    now: datetime,
) -> bool:
    """Try one queued message now; True when the server accepted it."""
    m = repo.get_message(message_id)
    if m.status == "sent":
        return True
    previous = [x for x in repo.messages(m.thread_id) if x.direction == "inbound"]
    in_reply_to = previous[-1].headers.get("Message-ID") if previous else None
    email = build_message(
        sender=m.sender,
        recipients=m.recipients,
        subject=m.subject,
        body=m.body,
        thread_id=m.thread_id,
        message_id=m.message_id,
        in_reply_to=in_reply_to,
    )
    attempts = m.attempts + 1
    try:
        mailer.send(email)
    except MailError as exc:
        repo.update_message(
            message_id,
            status="queued",
            attempts=attempts,
            last_error=str(exc),
            next_attempt_at=now + _backoff(settings, attempts),
        )
        return False
    repo.update_message(
        message_id,
        status="sent",
        attempts=attempts,
        last_error=None,
        sent_at=now,
        next_attempt_at=None,
        headers={"Message-ID": email["Message-ID"], THREAD_HEADER: m.thread_id},
    )
    return True


def deliver_queue(
    repo: VanpoolRepository, settings: VanpoolSettings, mailer: Mailer, now: datetime
) -> dict[str, int]:
    """Retry every queued message that is due; counts of sent and still queued."""
    sent = failed = 0
    for m in repo.queued_messages(now):
        if send_one(repo, settings, mailer, m.message_id, now):
            sent += 1
        else:
            failed += 1
    return {"sent": sent, "still_queued": failed}


# ---------------------------------------------------------------------------- inbound
_THREAD_RE = re.compile(ID_PATTERNS["THREAD"])
# Our Message-IDs look like <1732350000.123.456.MSG-A3F8B291@casework.local>.
_MSG_RE = re.compile(r"[<.](" + ID_PATTERNS["MSG"] + r")@", re.IGNORECASE)


def thread_id_of(message: EmailMessage, repo: VanpoolRepository) -> str | None:
    """The thread a reply belongs to: by the message it answers, the thread header, or subject."""
    refs = " ".join(str(message.get(h, "")) for h in ("In-Reply-To", "References"))
    for msg_id in _MSG_RE.findall(refs):
        try:
            return repo.get_message(msg_id.upper()).thread_id
        except NotFoundError:
            continue
    for text in (str(message.get(THREAD_HEADER, "")), str(message.get("Subject", ""))):
        found = _THREAD_RE.search(text.upper())
        if found:
            return found.group(0)
    return None


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    text = part.get_content() if part is not None else str(message.get_payload())
    # Keep the reply, not the quoted history below it.
    lines = []
    for line in text.splitlines():
        if line.startswith(">") or re.match(r"On .+ wrote:$", line.strip()):
            break
        lines.append(line)
    return "\n".join(lines).strip()


def file_reply(repo: VanpoolRepository, raw: bytes, now: datetime | None = None) -> tuple[str, str]:
    """File one inbound email into its thread; returns (thread id, MSG id).

    A reply to no known thread raises ``NotFoundError`` (the receiver answers 550).
    """
    message = BytesParser(policy=default_policy).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    thread_id = thread_id_of(message, repo)
    if thread_id is None:
        raise NotFoundError("The reply names no THREAD-… id in its headers or subject.")
    repo.thread_case(thread_id)  # unknown thread -> NotFoundError
    now = now or datetime.now(UTC)
    msg_id = repo.add_message(
        thread_id,
        direction="inbound",
        status="received",
        sender=str(message.get("From", "")),
        recipients=[str(message.get("To", ""))],
        subject=str(message.get("Subject", "")),
        body=_body(message),
        now=now,
        headers={
            k: str(message.get(k, ""))
            for k in ("Message-ID", "In-Reply-To", "References", THREAD_HEADER)
            if message.get(k)
        },
    )
    # Who caused it: the rider who wrote, not the operator running the receiver.
    repo.by(f"mail:{message.get('From', '')}").audit(
        now,
        "mail",
        "reply_received",
        case_id=repo.thread_case(thread_id),
        detail={"thread_id": thread_id, "message_id": msg_id},
    )
    return thread_id, msg_id


class InboundHandler:
    """``aiosmtpd`` handler: each DATA is filed into its thread or refused with 550."""

    def __init__(
        self, repo: VanpoolRepository, on_reply: Callable[[str, str], Any] | None = None
    ) -> None:
        self.repo = repo
        self.on_reply = on_reply
        self.filed: list[tuple[str, str]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = envelope.original_content or envelope.content
        try:
            thread_id, msg_id = await asyncio.to_thread(file_reply, self.repo, raw)
        except NotFoundError as exc:
            return f"550 {exc}"
        self.filed.append((thread_id, msg_id))
        if self.on_reply is not None:
            await asyncio.to_thread(self.on_reply, thread_id, msg_id)
        return "250 Message accepted for delivery"


def serve_inbound(repo: VanpoolRepository, host: str, port: int, on_reply: Any = None) -> Any:
    """Start the receiver in a background thread; returns the controller (``.stop()``)."""
    from aiosmtpd.controller import Controller

    handler = InboundHandler(repo, on_reply)
    controller = Controller(handler, hostname=host, port=port)
    controller.start()
    return controller
