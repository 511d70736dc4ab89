"""Attacks on the HTTP API's request bodies: too large (sized or chunked), nested too deeply,
and malformed in ways that make parsers throw. Each gets a 4xx with one sentence, never a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator

from attack_helpers import PASSWORD, Served, make_served, sign_in
from fastapi import APIRouter
from httpx import Response

from casework.config import ServerSettings, Settings
from casework.server.guards import json_problem

MB = 1024 * 1024
TOO_LARGE = (
    "The request body is larger than this server accepts (10 MB); "
    "send less, or raise CASEWORK_SERVER__MAX_BODY_BYTES."
)
TOO_DEEP = (
    "The JSON body nests arrays or objects more than 100 levels deep; send a flatter document."
)


def _one_sentence(res: Response) -> str:
    body = res.json()
    assert set(body) == {"error", "kind"}, body
    message = body["error"]
    assert message.endswith(".") and ". " not in message and "\n" not in message, message
    return message


def _chunks(total: int, size: int = MB) -> Iterator[bytes]:
    """A body without Content-Length (chunked), so the server only learns its size reading."""
    sent = 0
    while sent < total:
        yield b"x" * min(size, total - sent)
        sent += size


def test_default_limits() -> None:
    limits = Settings().server
    assert (limits.max_body_bytes, limits.max_upload_bytes) == (10 * MB, 51 * MB)
    assert limits.max_json_depth == 100


def test_a_body_over_the_limit_is_a_413_before_anything_reads_it(served: Served) -> None:
    api, anon = served.api(), served.client()
    big = b'{"hed": ["' + b"a" * (10 * MB) + b'"]}'
    res = anon.post("/hed/validate", content=big, headers={"content-type": "application/json"})
    # Refused on its Content-Length, before the token is checked or a byte is read.
    assert res.status_code == 413 and _one_sentence(res) == TOO_LARGE
    assert res.json()["kind"] == "RequestTooLarge"
    # Chunked: no length to refuse up front; refused once the count passes the limit.
    res = api.post(
        "/hed/validate", content=_chunks(11 * MB), headers={"content-type": "application/json"}
    )
    assert res.status_code == 413 and _one_sentence(res) == TOO_LARGE
    # Just under the limit is not refused for its size (an unknown field is ignored).
    fits = b'{"query": "select 1", "pad": "' + b"a" * (9 * MB) + b'"}'
    res = api.post("/sql/validate", content=fits, headers={"content-type": "application/json"})
    assert res.status_code == 200 and res.json()["valid"] is True


def test_chunked_bodies_of_any_type_are_cut_off_at_the_limit(tmp_path) -> None:
    small = ServerSettings(max_body_bytes=4_000)
    api = make_served(tmp_path / "home", server=small).api()
    for route, kind in (
        ("/hed/validate", "application/json"),
        ("/receipts/review/1/accept", "application/octet-stream"),
        ("/sql/ask", "text/plain"),
        ("/login", "application/x-www-form-urlencoded"),
    ):
        res = api.post(route, content=_chunks(9_000, 1_000), headers={"content-type": kind})
        assert res.status_code == 413 and "(4,000 bytes)" in _one_sentence(res), route


def test_uploads_have_their_own_larger_limit(tmp_path) -> None:
    small = ServerSettings(max_body_bytes=4_000, max_upload_bytes=20_000)
    api = make_served(tmp_path / "home", server=small).api()
    form = {"file": ("notes.txt", b"y" * 10_000, "text/plain")}
    under = api.post("/documents/documents", files=form)
    assert under.status_code != 413 and under.status_code < 500  # the route's own answer
    over = api.post("/documents/documents", files={"file": ("big.pdf", b"y" * 30_000)})
    assert over.status_code == 413
    assert _one_sentence(over) == (
        "The request body is larger than this server accepts (20,000 bytes); "
        "send less, or raise CASEWORK_SERVER__MAX_UPLOAD_BYTES."
    )
    res = api.post("/hed/validate", json={"hed": ["a" * 5_000]})
    assert res.status_code == 413 and "(4,000 bytes)" in _one_sentence(res)


def test_deeply_nested_json_is_a_422(served: Served) -> None:
    api = served.api()
    attacks = {
        "arrays": "[" * 10_000 + "]" * 10_000,
        "objects": '{"a":' * 10_000 + "1" + "}" * 10_000,
        "inside a field": '{"hed": ' + "[" * 10_000 + "]" * 10_000 + "}",
        "unclosed": "[" * 100_000,
        "just over": "[" * 101 + "]" * 101,
    }
    for name, body in attacks.items():
        for kind in ("application/json", "application/problem+json"):
            res = api.post("/hed/validate", content=body, headers={"content-type": kind})
            assert res.status_code == 422, (name, kind, res.status_code, res.text[:200])
            assert _one_sentence(res) == TOO_DEEP, name
    # Not JSON by its type: not parsed at all, so no recursion; still a 4xx.
    res = api.post(
        "/hed/validate", content=attacks["arrays"], headers={"content-type": "text/plain"}
    )
    assert 400 <= res.status_code < 500
    # Brackets in strings are text, and 100 levels is allowed: the route answers as usual.
    fine = {"query": "select 1", "pad": ["[" * 150 + "]" * 150, [[[[["deep enough"]]]]]]}
    assert api.post("/sql/validate", json=fine).status_code == 200
    res = api.post(
        "/hed/validate", content="[" * 100 + "]" * 100, headers={"content-type": "application/json"}
    )
    assert res.status_code == 422 and "detail" in res.json()  # the route's validation, not ours


def test_hostile_json_never_gets_a_5xx(served: Served) -> None:
    api = served.api()
    bodies = [
        b'{"hed": [' + b"9" * 100_000 + b"]}",  # past Python's int digit limit
        b'{"hed": ["a"], "hed": 5}',  # a repeated key
        b"\xff\xfe{\x00}\x00",  # not UTF-8
        b'{"hed": ["a"]' + b" " * 100_000,  # truncated
        b"",
        b"null",
        json.dumps({"hed": ["a"] * 1001}).encode(),  # over the route's own list cap
    ]
    for body in bodies:
        res = api.post("/hed/validate", content=body, headers={"content-type": "application/json"})
        assert 200 <= res.status_code < 500, (body[:40], res.status_code, res.text[:200])
        assert "Traceback" not in res.text


def test_json_that_parses_into_unwritable_values_is_a_422_not_a_500(served: Served) -> None:
    """Python parses these without complaint into values that cannot be written back out, so
    the route's answer (which echoes its input, or a validation error quoting it) was a 500."""
    api = served.api()
    surrogate = "surrogate pair"
    not_finite = "NaN, Infinity or a number too large"
    attacks = {
        b'{"hed": ["\\ud800"]}': surrogate,
        b'{"hed": ["\\udc00x"]}': surrogate,
        b'{"hed": ["\xed\xa0\x80"]}': surrogate,  # the surrogate in UTF-8 bytes
        b'{"hed": [1e999999]}': not_finite,
        b'{"hed": [NaN]}': not_finite,
        b'{"hed": [-Infinity]}': not_finite,
        b'{"hed": [' + b"1" * 400 + b".5]}": not_finite,
    }
    for body, words in attacks.items():
        res = api.post("/hed/validate", content=body, headers={"content-type": "application/json"})
        assert res.status_code == 422, (body[:40], res.status_code, res.text[:200])
        assert words in _one_sentence(res), body[:40]
    # The same characters as text, a real pair, and big finite numbers are fine.
    fine = {"query": "select 1", "pad": ["\\ud800 NaN 1e999999", "\U0001f600", 1e308, 10**300]}
    assert api.post("/sql/validate", json=fine).status_code == 200


def test_json_problem_reads_strings_as_text() -> None:
    deep = b"[" * 4 + b"]" * 4
    assert json_problem(deep, 3) is not None and json_problem(deep, 4) is None
    # Brackets, quotes, escapes, constants and big exponents inside strings are text.
    assert json_problem(b'["\\"[[[[", "]]\\\\", "NaN 1e999 \\\\ud800"]', 3) is None
    assert json_problem(b'["\\\\\\ud800"]', 3) is not None  # an escaped backslash, then \ud800
    assert json_problem(b'["\\ud83d\\ude00", "\\uD83D\\uDE00"]', 3) is None  # real pairs
    assert json_problem(b'["\\ud83d", "\\ude00"]', 3) is not None  # halves in two strings
    assert json_problem(b'{"true": false, "n": [1.5e10, -0.25, 10]}', 3) is None


def test_ids_past_64_bits_are_a_422_not_a_500(served: Served) -> None:
    """SQLite cannot bind an integer past 2**63 - 1 (OverflowError): no row has such an id."""
    api, ana = served.api(), served.client()
    big = "9" * 30
    for method, path in (
        ("post", f"/receipts/review/{big}/accept"),
        ("get", f"/documents/stacks/{big}"),
        ("get", f"/documents/documents/{big}"),
        ("get", f"/documents/extractions/{big}"),
    ):
        res = getattr(api, method)(path)
        assert res.status_code == 422, (path, res.status_code, res.text[:200])
        assert "larger than any id stored here" in _one_sentence(res)
    assert sign_in(ana, "ana", PASSWORD).status_code == 303
    page = ana.get(f"/items/receipts/{big}")
    assert 400 <= page.status_code < 500, page.text[:200]
    assert api.get(f"/documents/stacks/{2**63 - 1}").status_code == 404  # the largest: just absent


def test_a_bug_answers_500_in_one_sentence_with_the_headers(served: Served) -> None:
    router = APIRouter()

    @router.get("/boom/{kind}")
    def boom(kind: str) -> None:
        if kind == "overflow":
            raise OverflowError("math range error")  # not SQLite's: still a bug
        raise RuntimeError("secret internals")  # answered past the middleware

    served.app.include_router(router)
    client = served.client()
    for kind, name in (("overflow", "OverflowError"), ("bug", "RuntimeError")):
        res = client.get(f"/boom/{kind}")
        assert res.status_code == 500 and res.json() == {
            "error": f"Internal error ({name}); see the server log.",
            "kind": "InternalError",
        }
        assert res.headers["x-frame-options"] == "DENY", kind
        assert "frame-ancestors 'none'" in res.headers["content-security-policy"], kind


def test_json_checks_stay_linear_on_pathological_text(served: Served) -> None:
    """An open string of escaped quotes once made the string scan retry from every quote
    (quadratic: minutes for 200 KB); it is one pass now, whatever the text."""
    api = served.api()
    for body in (
        b'["' + b'\\"' * 100_000,  # a string never closed
        b'"' * 200_001,
        b"[" + b"1e300," * 30_000 + b"1]",
        b'["' + b"\\\\" * 100_000 + b"\\",
    ):
        json_problem(body, 100)
        res = api.post("/sql/validate", content=body, headers={"content-type": "application/json"})
        assert 400 <= res.status_code < 500 and "Traceback" not in res.text, res.text[:200]
