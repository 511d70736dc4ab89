"""Secrets never leave: a secret planted in every setting that can hold one (the database URL's
password on a real PostgreSQL server, a stored SQL schema's URL, API keys, the SMTP password,
the web secret) is searched for in every answer of a walk of the API and the web UI, in the
log, and in the traces and reports of one evaluation; the server's home path in every answer."""

from __future__ import annotations

import io
import logging
import re
import sys
from pathlib import Path

import pytest
from attack_helpers import PASSWORD, make_served, sign_in
from test_attack_permissions import PARAMS, TABLE, _rows

from casework.access import create_token, create_user, open_access
from casework.apps.sql import service as sql_service
from casework.apps.sql.deps import BUNDLED_SCHEMA
from casework.cli import main
from casework.config import get_settings
from casework.redact import RedactingFilter, Redactor, redact_url, redactor_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pg import PostgresServer

PLANTED = {
    "database": "PlantedDbPw-7d41",
    "schema": "PlantedSqlPw-91ce",
    "OPENAI_API_KEY": "sk-planted-openai-5b2f",
    "ANTHROPIC_API_KEY": "sk-ant-planted-0c3a",
    "CASEWORK_WEB_SECRET": "planted-web-secret-88e1",
    "CASEWORK_VANPOOL__SMTP_PASSWORD": "planted-smtp-pw-44d0",
    "caller_key": "sk-planted-caller-e9a7",
}


def test_a_url_shows_without_its_password():
    assert (
        redact_url("postgresql://analyst:S3cretPW@db.internal:5432/sec")
        == "postgresql://analyst:***@db.internal:5432/sec"
    )
    assert redact_url("sqlite:////srv/app/.casework/casework.db") == "sqlite:///***/casework.db"
    assert redact_url("sqlite://") == "sqlite://"


def test_a_log_line_and_its_traceback_lose_the_secret():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(Redactor.of(["hunter2-secret"])))
    log = logging.getLogger("casework.test.redact")
    log.addHandler(handler)
    try:
        try:
            raise RuntimeError("connect postgresql://u:pw-in-url@h/db with hunter2-secret")
        except RuntimeError:
            log.exception("failed for %s", "hunter2-secret")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert "hunter2-secret" not in text and "pw-in-url" not in text
    # the message, then the source line and the exception of the traceback: 1 + 2 + 2
    assert text.count("***") == 5 and "RuntimeError" in text


def test_an_access_log_line_keeps_its_shape():
    """uvicorn's access formatter unpacks the record's arguments itself: the filter keeps
    them a tuple (it once set them to None, and every request printed a logging error)."""
    from uvicorn.logging import AccessFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(AccessFormatter('%(client_addr)s "%(request_line)s" %(status_code)s'))
    handler.addFilter(RedactingFilter(Redactor.of(["hunter2-secret"])))
    log = logging.getLogger("casework.test.access")
    log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.INFO)
    try:
        log.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/x?k=hunter2-secret", "1.1", 200)
    finally:
        log.removeHandler(handler)
    assert stream.getvalue() == '127.0.0.1:5 "GET /x?k=*** HTTP/1.1" 200 OK\n'


@pytest.fixture(scope="module")
def pg_url():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def _leaks(text: str, home: str) -> list[str]:
    found = [name for name, secret in PLANTED.items() if secret in text]
    return found + (["home path"] if home in text else [])


@pytest.mark.slow
@pytest.mark.postgres
def test_no_planted_secret_leaves(pg_url, tmp_path, monkeypatch):
    # trust authentication: the server takes any password, so the planted ones are real URLs
    db_url = pg_url.replace("postgres@", f"postgres:{PLANTED['database']}@")
    sql_url = pg_url.replace("postgres@", f"postgres:{PLANTED['schema']}@")
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CASEWORK_WEB_SECRET"):
        monkeypatch.setenv(name, PLANTED[name])
    monkeypatch.setenv(
        "CASEWORK_VANPOOL__SMTP_PASSWORD", PLANTED["CASEWORK_VANPOOL__SMTP_PASSWORD"]
    )
    home = tmp_path / "home"
    served = make_served(home, database_url=db_url)
    engine = open_access(served.settings)
    create_user(engine, "ada", "admin", password=PASSWORD)
    _, token = create_token(engine, "ada")
    sql_service.load_schema_file(served.settings, BUNDLED_SCHEMA, db_url=sql_url)
    home_path = str(home.resolve())

    # one evaluation, as the operator runs it, on the same planted settings
    monkeypatch.setenv("CASEWORK_HOME", str(home))
    monkeypatch.setenv("CASEWORK_DATABASE_URL", db_url)
    get_settings.cache_clear()
    main(["eval", "sql", "--strategy", "rules", "--limit", "3", "--no-progress"])
    get_settings.cache_clear()
    written = [p for p in (home / "evals").rglob("*") if p.is_file()]
    written += [p for p in (home / "traces").rglob("*") if p.is_file()]
    assert any(p.name == "report.json" for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert [n for n in PLANTED if PLANTED[n] in text] == [], path

    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.addFilter(RedactingFilter(redactor_for(served.settings)))
    logging.getLogger().addHandler(handler)
    answers: list[tuple[str, int, str]] = []
    try:
        api = served.client()
        api.headers["Authorization"] = f"Bearer {token}"
        web = served.client()
        assert sign_in(web, "ada", PASSWORD).status_code == 303
        for row in _rows(TABLE):
            client = api if row["face"] == "api" else web
            url = re.sub(r"\{([^}]+)\}", lambda m: PARAMS[m.group(1)], str(row["path"]))
            if row["method"] == "GET":
                res = client.get(url, follow_redirects=False)
            else:
                res = client.request(str(row["method"]), url, json={}, follow_redirects=False)
            answers.append((url, res.status_code, res.text))
        # the answers that carry a URL or a key on purpose or by accident
        schema = api.get("/sql/schema")
        assert schema.json()["db_url"].startswith("postgresql+psycopg://postgres:***@127.0.0.1")
        answers.append(("/sql/schema", schema.status_code, schema.text))
        ask = {"question": "How many alerts are there?", "strategy": "rules", "execute": True}
        answers.append(("/sql/ask", 0, api.post("/sql/ask", json=ask).text))
        keyed = api.post(
            "/hed/annotate",
            json={"description": "A red circle appears.", "strategy": "rules"},
            headers={"X-Casework-Api-Key": PLANTED["caller_key"]},
        )
        answers.append(("/hed/annotate", keyed.status_code, keyed.text))
        runs = web.get("/evals")
        answers.append(("/evals", runs.status_code, runs.text))
        run_id = re.search(r"/evals/([^/\"]+)/files/report\.html", runs.text)
        assert run_id, "the evaluation's report is not listed"
        for name in ("report.html", "report.json"):
            res = web.get(f"/evals/{run_id.group(1)}/files/{name}")
            assert res.status_code == 200
            answers.append((name, res.status_code, res.text))
    finally:
        logging.getLogger().removeHandler(handler)
    assert len(answers) > len(_rows(TABLE))
    assert [
        (url, status, _leaks(text, home_path))
        for url, status, text in answers
        if _leaks(text, home_path)
    ] == []
    assert _leaks(log.getvalue(), "\x00") == []
