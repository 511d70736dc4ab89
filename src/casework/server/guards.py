"""Request guards around the whole server: who the client is, body size and JSON checks, and
security headers.

All are plain ASGI middleware, so they see every request (API, web UI, docs) before routing:

* ``ProxyHeaders`` believes ``Forwarded`` / ``X-Forwarded-For`` / ``X-Forwarded-Proto`` only
  from the peers in ``server.trusted_proxies`` (none by default), so the client address every
  limit keys on is the one that connected unless a proxy we trust says otherwise. ``casework
  serve`` turns uvicorn's own handling off (it believes them from 127.0.0.1 by default).
* ``BodyGuard`` refuses a body over ``server.max_body_bytes`` with a 413 (``max_upload_bytes``
  for a ``multipart/form-data`` body sent to a route that takes files; a multipart body sent
  anywhere else gets the ordinary limit), up front when ``Content-Length`` says so and as
  soon as a chunked body passes the limit otherwise. JSON is read as FastAPI reads it (the
  first ``Content-Type``): a body that is not UTF-8 (UTF-16 and UTF-32, which Python's parser
  also takes) gets a 415, since the checks read UTF-8; one nested deeper than
  ``server.max_json_depth`` gets a 422 before any parser recurses into it (Python's own parser
  raises ``RecursionError`` a thousand levels down, which FastAPI answers with a bare 400),
  and so does one that would parse into a value nothing can write back out (see
  ``json_problem``).
* ``SecurityHeaders`` adds what a response did not set itself: a Content-Security-Policy that
  loads nothing (pages set their own), ``X-Frame-Options: DENY``, ``nosniff`` and a
  same-origin referrer. The interactive API docs load their script from a CDN and get a
  policy that allows just that.
"""

from __future__ import annotations

import email.message
import functools
import ipaddress
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence

from fastapi.dependencies.models import Dependant
from fastapi.params import File
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from casework.apikit import RequestTooLarge, error_body, error_response
from casework.config import ServerSettings
from casework.errors import InputError

__all__ = [
    "ERROR_HEADERS",
    "BodyGuard",
    "ProxyHeaders",
    "SecurityHeaders",
    "forwarded_client",
    "json_problem",
]

DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
"""For answers that are not pages (JSON, redirects, plain text): nothing in them may load."""
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "font-src 'self' https://fonts.gstatic.com; img-src 'self' data: https:; worker-src blob:; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
ERROR_HEADERS = {**SECURITY_HEADERS, "Content-Security-Policy": DEFAULT_CSP}
"""For an answer sent past the middleware (the server's last-resort 500)."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
"""A string; one left open runs to the end of the text, so a match never fails once begun
(a failed match would be retried from every later quote: quadratic in the body's size)."""
_BRACKET = re.compile(rb"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*(\\u[dD]([89abAB]|[c-fC-F])[0-9a-fA-F]{2})")
"""A ``\\uD800``-``\\uDFFF`` escape (an escaped backslash before it does not make one)."""
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")
"""A surrogate written straight in UTF-8, which Python's JSON parser lets through."""


_FLOATY = re.compile(rb"NaN|Infinity|-?\d[\d.]*[eE][+-]?\d{3,}|-?[\d.]{300,}(?:[eE][+-]?\d+)?")
"""The constants Python's parser takes beyond JSON, and the only numbers that can overflow a
float: an exponent of three digits or more, or three hundred digits before it."""
INLINE_CHECK_BYTES = 256 * 1024
"""JSON bodies up to this size are checked on the event loop; larger ones on a worker thread
(a 10 MB body takes a second or so, which must not stall every other request)."""


def json_problem(body: bytes, max_depth: int) -> str | None:
    """Why a JSON text must not reach Python's parser, in one sentence; None when it may.

    Each of these parses without complaint (or with a ``RecursionError``) into a value that
    fails later, where the failure is a 500: nesting past ``max_depth`` (past about a thousand
    levels the parser itself overflows the stack), half of a UTF-16 surrogate pair (a string
    no encoder writes back), and NaN, Infinity or a number that overflows a float (an answer
    that echoes it cannot be written as JSON). The text need not be valid JSON otherwise: the
    parser that runs next says what else is wrong with it."""
    if _lone_surrogate(body):
        return (
            "The JSON body holds half of a UTF-16 surrogate pair (\\ud800 to \\udfff alone), "
            "which is not text; send valid Unicode."
        )
    bare = _STRING.sub(b'""', body)  # brackets and numbers inside strings are text
    if _nesting_exceeds(bare, max_depth):
        return (
            f"The JSON body nests arrays or objects more than {max_depth} levels deep; "
            "send a flatter document."
        )
    if _not_finite(bare):
        return (
            "The JSON body holds NaN, Infinity or a number too large for a float, which JSON "
            "does not allow; send finite numbers."
        )
    return None


def _nesting_exceeds(bare: bytes, limit: int) -> bool:
    if bare.count(b"[") + bare.count(b"{") <= limit:
        return False
    depth = 0
    for match in _BRACKET.finditer(bare):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _lone_surrogate(body: bytes) -> bool:
    if _ENCODED_SURROGATE.search(body):
        return True
    if b"\\u" not in body:
        return False
    pending_high = -1  # where the escape after an unpaired high surrogate must start
    for match in _SURROGATE_ESCAPE.finditer(body):
        start, end = match.span(1)
        high = match.group(2) in b"89abAB"
        if pending_high >= 0:
            if high or start != pending_high:
                return True
            pending_high = -1
        elif high:
            pending_high = end
        else:
            return True  # a low surrogate with no high one before it
    return pending_high >= 0


def _not_finite(bare: bytes) -> bool:
    for match in _FLOATY.finditer(bare):
        token = match.group()
        if token in (b"NaN", b"Infinity"):
            return True
        # Integers stay exact (Python's own digit limit refuses the absurd ones); fractions
        # and exponents become floats, which overflow to inf.
        if not any(c in token for c in b".eE"):
            continue
        try:
            if math.isinf(float(token)):
                return True
        except ValueError:  # not a number at all ("1..2e400"): the parser will say so
            continue
    return False


def _media_type(header: bytes) -> str:
    """``type/subtype`` of a Content-Type, parsed as FastAPI parses it (``text/plain`` when
    it is malformed), so the guard and the route never disagree on what a body is."""
    message = email.message.Message()
    message["content-type"] = header.decode("latin-1")
    return message.get_content_type()


def _is_json(content_type: str) -> bool:
    kind, _, subtype = content_type.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


NOT_UTF8 = (
    "The JSON body is not UTF-8 (it reads as {encoding}); send it as UTF-8, which is what "
    "JSON between systems must be."
)


def _takes_files(route: object) -> bool:
    """Whether a route declares a ``File`` parameter (itself or in a dependency)."""

    def files_in(dependant: Dependant) -> bool:
        return any(isinstance(f.field_info, File) for f in dependant.body_params) or any(
            files_in(sub) for sub in dependant.dependencies
        )

    return isinstance(route, APIRoute) and files_in(route.dependant)


class BodyGuard:
    """413 for a body over the limit, 415 for JSON that is not UTF-8, 422 for JSON that must
    not be parsed; see the module doc."""

    def __init__(self, app: ASGIApp, limits: ServerSettings) -> None:
        self.app = app
        self.limits = limits
        self._uploads: dict[int, bool] = {}
        """Whether the route with this id takes files (routes live as long as the app)."""

    def _multipart_limit(self, scope: Scope) -> RequestTooLarge:
        """The upload limit for a route that takes files, the body limit for any other. Read
        when the route first reads the body: by then routing has put the route in the scope."""
        route = scope.get("route")
        key = id(route)
        if key not in self._uploads:
            self._uploads[key] = _takes_files(route)
        if self._uploads[key]:
            return RequestTooLarge(
                self.limits.max_upload_bytes, "CASEWORK_SERVER__MAX_UPLOAD_BYTES"
            )
        return RequestTooLarge(self.limits.max_body_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = content_type = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = value
            elif name == b"transfer-encoding" and length is None:
                length = b""
            elif name == b"content-type" and content_type is None:  # the first, as Starlette
                content_type = _media_type(value)
        if length is None:  # neither header: an HTTP/1.1 request without a body
            await self.app(scope, receive, send)
            return
        multipart = content_type == "multipart/form-data"
        if multipart:  # the larger limit up front; the route's own once it is known
            too_large = RequestTooLarge(
                self.limits.max_upload_bytes, "CASEWORK_SERVER__MAX_UPLOAD_BYTES"
            )
        else:
            too_large = RequestTooLarge(self.limits.max_body_bytes)
        declared = int(length) if length.isdigit() else None
        if declared is not None and declared > too_large.limit:
            await error_response(too_large)(scope, receive, send)
            return
        if content_type is not None and _is_json(content_type):
            await self._json(scope, receive, send, too_large)
        elif multipart:
            await self._streamed(scope, receive, send, self._multipart_limit, declared)
        else:
            await self._streamed(scope, receive, send, lambda _: too_large, declared)

    async def _json(
        self, scope: Scope, receive: Receive, send: Send, too_large: RequestTooLarge
    ) -> None:
        """Read the whole (bounded) body, check it, then hand it on in one message."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > too_large.limit:
                await error_response(too_large)(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        encoding = json.detect_encoding(body)
        if encoding not in ("utf-8", "utf-8-sig"):
            refusal = InputError(NOT_UTF8.format(encoding=encoding.upper()))
            await JSONResponse(error_body(refusal), status_code=415)(scope, receive, send)
            return
        if len(body) <= INLINE_CHECK_BYTES:
            problem = json_problem(body, self.limits.max_json_depth)
        else:
            problem = await run_in_threadpool(json_problem, body, self.limits.max_json_depth)
        if problem is not None:
            await error_response(InputError(problem))(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _streamed(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        limit_for: Callable[[Scope], RequestTooLarge],
        declared: int | None,
    ) -> None:
        """Count the body as the app reads it; past the limit (``limit_for`` the routed
        request, asked at the first read), answer 413 instead of the app."""
        size = 0
        too_large: RequestTooLarge | None = None
        over = started = False

        async def counted() -> Message:
            nonlocal size, over, too_large
            if too_large is None:
                too_large = limit_for(scope)
                if declared is not None and declared > too_large.limit:
                    over = True
                    raise too_large
            message = await receive()
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > too_large.limit:
                    over = True
                    raise too_large
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the app's answer to a body it could not read: ours goes instead
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not over or started:
                raise
        if over and not started and too_large is not None:
            await error_response(too_large)(scope, receive, send)


def _address(token: str) -> str | None:
    """The IP address in one hop of a forwarding header (``for=`` value or X-Forwarded-For
    item: quoted, bracketed IPv6, with or without a port), or None when it names none."""
    token = token.strip().strip('"').strip()
    if token.startswith("["):  # [2001:db8::1]:4711
        token = token[1:].partition("]")[0]
    elif token.count(":") == 1:  # 192.0.2.7:4711
        token = token.partition(":")[0]
    try:
        return str(ipaddress.ip_address(token))
    except ValueError:
        return None


def _hops(headers: list[tuple[bytes, bytes]]) -> tuple[list[str], str | None]:
    """The client chain (nearest proxy last) and the scheme the headers claim: ``Forwarded``
    (RFC 7239) when present, else ``X-Forwarded-For`` / ``X-Forwarded-Proto``."""
    forwarded = [v.decode("latin-1") for n, v in headers if n == b"forwarded"]
    if forwarded:
        chain, proto = [], None
        for element in ",".join(forwarded).split(","):
            proto = None  # only the nearest proxy's element says how it was reached
            for pair in element.split(";"):
                key, _, value = pair.strip().partition("=")
                if key.lower() == "for":
                    chain.append(value)
                elif key.lower() == "proto":
                    proto = value.strip().strip('"')
        return chain, proto
    xff = [v.decode("latin-1") for n, v in headers if n == b"x-forwarded-for"]
    protos = [v.decode("latin-1") for n, v in headers if n == b"x-forwarded-proto"]
    chain = [hop for hop in ",".join(xff).split(",") if hop.strip()]
    return chain, (protos[-1].split(",")[-1].strip() if protos else None)


@functools.lru_cache(maxsize=8)
def _networks(trusted: tuple[str, ...]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(t, strict=False) for t in trusted]


def forwarded_client(
    peer: str, headers: list[tuple[bytes, bytes]], trusted: Sequence[str]
) -> tuple[str, str | None]:
    """The client address (and the scheme, when a proxy says) behind a request from
    ``peer``: ``peer`` itself unless it is one of the ``trusted`` proxies; then the nearest
    hop in the forwarding chain that is not a trusted proxy (each proxy appends the address it
    heard from, so hops a client wrote itself lie further left and are never reached while an
    untrusted hop stands before them). A hop that names no address ends the walk there."""
    networks = _networks(tuple(trusted))

    def is_trusted(address: str | None) -> bool:
        if address is None:
            return False
        ip = ipaddress.ip_address(address)
        return any(ip in network for network in networks)

    if not networks or not is_trusted(_address(peer) or None):
        return peer, None
    chain, proto = _hops(headers)
    client = peer
    for hop in reversed(chain):
        address = _address(hop)
        if address is None:
            client = hop.strip().strip('"')[:64] or peer  # "unknown", "_hidden": as given
            break
        client = address
        if not is_trusted(address):
            break
    scheme = proto.lower() if proto and proto.lower() in ("http", "https") else None
    return client, scheme


class ProxyHeaders:
    """Sets the request's client address (and scheme) from forwarding headers, only when the
    peer is a trusted proxy (``server.trusted_proxies``); see ``forwarded_client``."""

    def __init__(self, app: ASGIApp, trusted: Sequence[str] = ()) -> None:
        self.app = app
        self.trusted = list(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if self.trusted and scope["type"] == "http" and client:
            address, scheme = forwarded_client(client[0], scope["headers"], self.trusted)
            scope = dict(scope, client=(address, 0))
            if scheme is not None:
                scope["scheme"] = scheme
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` and a default CSP to every answer that lacks them."""

    def __init__(self, app: ASGIApp, docs_paths: Iterable[str | None] = ()) -> None:
        self.app = app
        self.docs_paths = frozenset(p for p in docs_paths if p)
        base = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        self._pages = [*base, (b"content-security-policy", DEFAULT_CSP.encode())]
        self._docs = [*base, (b"content-security-policy", DOCS_CSP.encode())]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self._docs if scope.get("path") in self.docs_paths else self._pages

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in extra if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
