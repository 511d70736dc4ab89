"""Outbound email over STARTTLS and implicit TLS to a real loopback server with a self-signed
certificate made here, with login; and a server that refuses, or speaks no TLS: the email
stays queued, the case never claims it was sent, and ``tick`` sends it once the server takes it."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from vanpool_helpers import Clock, first, free_port

from casework.apps.vanpool import lifecycle, service
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.roster import import_roster
from casework.apps.vanpool.settings import VanpoolSettings
from casework.apps.vanpool.synth import DATA_DIR
from casework.config import Settings

USER, PASSWORD = "pool-patrol", "s3cret-relay"


@dataclass
class Certificate:
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost, valid for a day."""
    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    paths = Certificate(folder / "cert.pem", folder / "key.pem")
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@dataclass
class Relay:
    """A loopback SMTP relay: keeps each message with whether it came over TLS and who logged in."""

    refuse: bool = False
    messages: list[EmailMessage] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse:
            return "554 5.7.1 Relay refused"
        raw = envelope.original_content or envelope.content
        self.messages.append(BytesParser(policy=default_policy).parsebytes(raw))  # type: ignore[arg-type]
        tls = server.transport.get_extra_info("ssl_object") is not None
        self.sessions.append({"tls": tls, "login": session.auth_data})
        return "250 OK"

    @staticmethod
    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, auth: Any) -> Any:
        ok = isinstance(auth, LoginPassword) and (auth.login, auth.password) == (
            USER.encode(),
            PASSWORD.encode(),
        )
        return AuthResult(success=ok, auth_data=auth.login if ok else None)


def start(relay: Relay, port: int, **kwargs: Any) -> Controller:
    controller = Controller(relay, hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    return controller


def deps_for(home: Path, clock: Clock, port: int, **smtp: Any) -> VanpoolDeps:
    app = VanpoolSettings(smtp_port=port, smtp_timeout=5, retry_seconds=60, **smtp)
    d = build_deps(Settings(home=home, allow_network_models=False), app=app, clock=clock)
    if not d.repo.vanpool_ids():
        import_roster(d.repo, DATA_DIR / "roster.json", clock())
    return d


@pytest.fixture
def truth_vp() -> str:
    import json

    truth = {t["vanpool_id"]: t for t in json.loads((DATA_DIR / "injected.json").read_text())}
    return first(truth, "location_mismatch")["vanpool_id"]


def test_starttls_with_login_delivers(tmp_path, certificate: Certificate, truth_vp) -> None:
    relay, port = Relay(), free_port()
    server = start(
        relay,
        port,
        tls_context=certificate.server_context(),
        require_starttls=True,
        authenticator=Relay.authenticate,
        auth_required=True,
    )
    try:
        deps = deps_for(
            tmp_path / "home",
            Clock(),
            port,
            smtp_tls="starttls",
            smtp_ca_file=certificate.cert,
            smtp_username=USER,
            smtp_password=PASSWORD,
        )
        result, _ = lifecycle.audit_vanpool(deps, truth_vp)
    finally:
        server.stop()
    assert (result.outreach.verdict, result.outreach.sent) == ("sent", True)
    assert relay.sessions == [{"tls": True, "login": USER.encode()}]
    [msg] = relay.messages
    assert msg["X-Casework-Thread"] == result.outreach.email_thread_id
    stored = deps.repo.get_message(result.outreach.message_id)
    assert (stored.status, stored.attempts, stored.last_error) == ("sent", 1, None)


def test_implicit_tls_delivers(tmp_path, certificate: Certificate, truth_vp) -> None:
    relay, port = Relay(), free_port()
    server = start(relay, port, ssl_context=certificate.server_context())
    try:
        deps = deps_for(
            tmp_path / "home", Clock(), port, smtp_tls="tls", smtp_ca_file=certificate.cert
        )
        result, _ = lifecycle.audit_vanpool(deps, truth_vp)
    finally:
        server.stop()
    assert result.outreach.sent is True
    assert [s["tls"] for s in relay.sessions] == [True]


def _assert_queued_not_sent(deps: VanpoolDeps, result: Any, error: str) -> None:
    out = result.outreach
    assert (out.verdict, out.sent) == ("queued", False)
    msg = deps.repo.get_message(out.message_id)
    assert (msg.status, msg.sent_at) == ("queued", None)
    assert error in (msg.last_error or "")
    actions = [e["action"] for e in deps.repo.audit_log(case_id=result.case_id)]
    assert "email_queued" in actions and "email_sent" not in actions


def test_an_untrusted_certificate_is_not_sent_to_and_the_email_waits(
    tmp_path, certificate: Certificate, truth_vp
) -> None:
    """Without the CA the relay's self-signed certificate fails verification: nothing is sent
    in the clear, the email stays queued; once the CA is configured, tick sends it."""
    relay, port, clock = Relay(), free_port(), Clock()
    server = start(relay, port, tls_context=certificate.server_context(), require_starttls=True)
    try:
        deps = deps_for(tmp_path / "home", clock, port, smtp_tls="starttls")
        result, _ = lifecycle.audit_vanpool(deps, truth_vp)
        _assert_queued_not_sent(deps, result, "CERTIFICATE_VERIFY_FAILED")
        assert relay.messages == []
        fixed = deps_for(
            tmp_path / "home", clock, port, smtp_tls="starttls", smtp_ca_file=certificate.cert
        )
        clock.advance(seconds=61)
        assert service.tick(fixed)["sent"] == 1
    finally:
        server.stop()
    assert len(relay.messages) == 1
    assert fixed.repo.get_message(result.outreach.message_id).status == "sent"


def test_a_refusing_server_leaves_the_email_queued_until_it_accepts(tmp_path, truth_vp) -> None:
    relay, port, clock = Relay(refuse=True), free_port(), Clock()
    server = start(relay, port)
    try:
        deps = deps_for(tmp_path / "home", clock, port)
        result, _ = lifecycle.audit_vanpool(deps, truth_vp)
        _assert_queued_not_sent(deps, result, "Relay refused")
        case = deps.repo.get_case(result.case_id)
        assert case.status == "pending_reply"  # the case waits; it says nothing was sent
        clock.advance(seconds=61)
        assert service.tick(deps) | {"now": None, "reaudited": []} == {
            "now": None,
            "replies": [],
            "sent": 0,
            "still_queued": 1,
            "reaudited": [],
        }
        msg = deps.repo.get_message(result.outreach.message_id)
        assert msg.attempts == 2  # the back-off doubled: not retried before it is due
        clock.advance(seconds=60)
        assert service.tick(deps)["still_queued"] == 0  # not due yet: nothing tried
        assert deps.repo.get_message(result.outreach.message_id).attempts == 2
        relay.refuse = False
        clock.advance(seconds=61)
        assert service.tick(deps)["sent"] == 1
    finally:
        server.stop()
    msg = deps.repo.get_message(result.outreach.message_id)
    assert (msg.status, msg.attempts, msg.last_error) == ("sent", 3, None)
    assert len(relay.messages) == 1


def test_starttls_to_a_server_without_tls_is_refused_not_sent_in_the_clear(
    tmp_path, truth_vp
) -> None:
    relay, port = Relay(), free_port()
    server = start(relay, port)  # plain SMTP, no STARTTLS offered
    try:
        deps = deps_for(tmp_path / "home", Clock(), port, smtp_tls="starttls")
        result, _ = lifecycle.audit_vanpool(deps, truth_vp)
    finally:
        server.stop()
    _assert_queued_not_sent(deps, result, "STARTTLS")
    assert relay.messages == []
