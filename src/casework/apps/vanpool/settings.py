"""The vanpool app's own settings (SMTP, timeouts), read from ``CASEWORK_VANPOOL__*``.

Kept inside the app until the platform's ``Settings`` grows an app section; the variable
names are the ones that section would use (``CASEWORK_VANPOOL__SMTP_HOST``, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["VanpoolSettings"]


class VanpoolSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CASEWORK_VANPOOL__", extra="ignore")

    smtp_host: str = "127.0.0.1"
    """Outbound SMTP server. Default: 127.0.0.1."""
    smtp_port: int = 1025
    """Default: 1025 (a local relay)."""
    smtp_tls: Literal["none", "starttls", "tls"] = "none"
    """``tls`` (implicit, port 465), ``starttls`` (port 587) or ``none``. Default: none."""
    smtp_ca_file: Path | None = None
    """PEM certificates to trust for the server's TLS certificate (a relay with a private or
    self-signed one). Default: the system's trust store. Certificates are always verified."""
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    smtp_timeout: float = 10.0
    sender: str = "pool-patrol@example.com"
    """From address of outreach emails; replies come back to it."""
    inbound_host: str = "127.0.0.1"
    """Where ``vanpool mail serve`` listens. Default: 127.0.0.1."""
    inbound_port: int = 2525
    reply_timeout_days: float = 7.0
    """A case waiting this long for a reply is re-audited (silent-fix check). Default: 7."""
    max_reaudits: int = 3
    """After this many failed re-audits a case goes to pre-cancel. Default: 3."""
    retry_seconds: float = 60.0
    """First retry delay of a refused email; doubles per attempt up to an hour."""
    portal_url: str = "https://portal.example.com/profile"
    """The employee portal where riders update their address and shift."""
