"""The deterministic parts of the trust guards: who the client is behind proxies, upload
names, Last-Event-ID, validation errors without the input, and how `serve` runs uvicorn."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from casework.apikit import add_error_handler, last_event_id, safe_upload_name
from casework.config import ServerSettings
from casework.errors import InputError
from casework.server.guards import forwarded_client

PROXY = ["10.0.0.0/8", "127.0.0.1"]


class Body(BaseModel):
    n: int


def _h(*pairs: tuple[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in pairs]


@pytest.mark.parametrize(
    ("peer", "headers", "expected"),
    [
        # No trusted proxy configured, or a peer that is not one: the headers are ignored.
        ("127.0.0.1", _h(("X-Forwarded-For", "6.6.6.6")), ("127.0.0.1", None)),
        ("192.0.2.9", _h(("X-Forwarded-For", "6.6.6.6")), ("192.0.2.9", None)),
        # A trusted proxy: the nearest hop it did not add itself, never what the client wrote.
        ("10.0.0.2", _h(("X-Forwarded-For", "6.6.6.6, 203.0.113.5")), ("203.0.113.5", None)),
        ("10.0.0.2", _h(("X-Forwarded-For", "203.0.113.5, 10.1.1.1")), ("203.0.113.5", None)),
        (
            "10.0.0.2",
            _h(("X-Forwarded-For", "a"), ("X-Forwarded-For", "203.0.113.5:4711")),
            ("203.0.113.5", None),
        ),
        (
            "10.0.0.2",
            _h(("X-Forwarded-For", "203.0.113.5"), ("X-Forwarded-Proto", "https")),
            ("203.0.113.5", "https"),
        ),
        ("10.0.0.2", _h(("X-Forwarded-Proto", "gopher")), ("10.0.0.2", None)),
        # RFC 7239 wins over X-Forwarded-For; IPv6 in brackets with a port.
        (
            "10.0.0.2",
            _h(("Forwarded", 'for="[2001:db8::7]:80";proto=https'), ("X-Forwarded-For", "6.6.6.6")),
            ("2001:db8::7", "https"),
        ),
        ("10.0.0.2", _h(("Forwarded", "for=6.6.6.6, for=198.51.100.3")), ("198.51.100.3", None)),
        ("10.0.0.2", _h(("Forwarded", "for=unknown")), ("unknown", None)),
        # The scheme is the nearest proxy's word, not one the client wrote further left.
        (
            "10.0.0.2",
            _h(("Forwarded", "for=6.6.6.6;proto=https, for=203.0.113.5")),
            ("203.0.113.5", None),
        ),
        ("10.0.0.2", _h(), ("10.0.0.2", None)),  # trusted, but forwarding nobody
    ],
)
def test_forwarded_client(peer, headers, expected) -> None:
    trusted = [] if headers and peer == "127.0.0.1" else PROXY
    assert forwarded_client(peer, headers, trusted) == expected


def test_trusted_proxies_setting_accepts_commas_json_and_refuses_junk(monkeypatch) -> None:
    assert ServerSettings(trusted_proxies="10.0.0.1, 10.2.0.0/16").trusted_proxies == [
        "10.0.0.1",
        "10.2.0.0/16",
    ]
    assert ServerSettings(trusted_proxies='["::1"]').trusted_proxies == ["::1"]
    assert ServerSettings().trusted_proxies == []
    with pytest.raises(ValueError, match=r"'proxy\.example' is not an IP address or network"):
        ServerSettings(trusted_proxies="proxy.example")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("receipt.pdf", "receipt.pdf"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\ana\\scan 1.png", "scan 1.png"),
        ("a\x00b\nc.pdf", "abc.pdf"),
        ("x" * 320 + ".pdf", "x" * 251 + ".pdf"),
        ("é" * 200 + ".pdf", "é" * 125 + ".pdf"),  # 2 bytes each: 250 + 4 bytes
        ("y" * 300, "y" * 255),
        ("z" * 300 + "." + "q" * 30, ("z" * 300 + "." + "q" * 30)[:255]),  # no real extension
    ],
)
def test_safe_upload_name(given: str, expected: str) -> None:
    name = safe_upload_name(given)
    assert name == expected and len(name.encode()) <= 255


@pytest.mark.parametrize("given", [None, "", ".", "..", "a/..", "dir/", " \x00 ", "..\\"])
def test_upload_names_that_name_no_file_are_refused(given: str | None) -> None:
    with pytest.raises(InputError, match="send the file under its own name"):
        safe_upload_name(given)


def test_last_event_id_takes_plain_ascii_digits_that_fit_or_nothing() -> None:
    assert [last_event_id(v) for v in ("7", " 12 ", "9" * 18)] == [7, 12, 10**18 - 1]
    junk = [None, "", "²", "٣", "9" * 19, "9" * 5000, "-1", "1e5", "0x10", "1.5", "abc"]
    assert [last_event_id(v) for v in junk] == [0] * len(junk)


def test_a_validation_error_never_echoes_the_input() -> None:
    app = FastAPI()
    add_error_handler(app)

    @app.post("/n")
    def n(body: Body) -> int:
        return body.n

    secret = "do-not-echo-" + "x" * 1000
    res = TestClient(app).post("/n", json={"n": secret})
    assert res.status_code == 422
    assert res.json() == {
        "detail": [
            {
                "type": "int_parsing",
                "loc": ["body", "n"],
                "msg": "Input should be a valid integer, unable to parse string as an integer",
            }
        ]
    }
    res = TestClient(app).post(
        "/n", content=b'{"n": ' + secret.encode(), headers={"content-type": "application/json"}
    )
    assert res.status_code == 422 and "do-not-echo" not in res.text


def test_serve_keeps_uvicorn_from_believing_forwarded_headers(monkeypatch, tmp_path) -> None:
    import uvicorn
    from typer.testing import CliRunner

    from casework.cli import app
    from casework.config import get_settings

    seen: dict[str, object] = {}

    class Config:  # uvicorn.Config as serve builds it; the server is not started
        def __init__(self, asgi: object, **kwargs: object) -> None:
            seen.update(kwargs)

    monkeypatch.setattr(uvicorn, "Config", Config)
    monkeypatch.setattr(uvicorn, "Server", lambda config: type("S", (), {"run": lambda s: None})())
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["serve", "--port", "8123"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert seen == {"host": "127.0.0.1", "port": 8123, "proxy_headers": False}
