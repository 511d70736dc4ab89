"""Vanpool fixtures: a fresh store with the bundled roster, a loopback SMTP sink, a clock."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.roster import import_roster
from casework.apps.vanpool.settings import VanpoolSettings
from casework.apps.vanpool.synth import DATA_DIR
from casework.config import Settings
from casework.llm import call

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Clock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


@dataclass
class Sink:
    """A real SMTP server on loopback that keeps what it receives."""

    port: int
    messages: list[EmailMessage] = field(default_factory=list)
    controller: Any = None

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = BytesParser(policy=default_policy).parsebytes(
            envelope.original_content or envelope.content
        )
        self.messages.append(msg)  # type: ignore[arg-type]
        return "250 OK"

    def start(self) -> None:
        from aiosmtpd.controller import Controller

        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture
def sink() -> Any:
    s = Sink(free_port())
    s.start()
    yield s
    s.stop()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_deps(home: Path, port: int, clock: Clock, **kwargs: Any) -> VanpoolDeps:
    settings = Settings(home=home, allow_network_models=False)
    app = VanpoolSettings(smtp_port=port, retry_seconds=60)
    return build_deps(settings, app=app, clock=clock, **kwargs)


@pytest.fixture
def deps(tmp_path: Path, sink: Sink, clock: Clock) -> VanpoolDeps:
    d = make_deps(tmp_path / "home", sink.port, clock)
    import_roster(d.repo, DATA_DIR / "roster.json", clock())
    return d


@pytest.fixture(scope="session")
def truth() -> dict[str, dict[str, Any]]:
    return {t["vanpool_id"]: t for t in json.loads((DATA_DIR / "injected.json").read_text())}


def first(truth: dict[str, dict[str, Any]], scenario: str) -> dict[str, Any]:
    return next(t for t in truth.values() if t["scenario"] == scenario)


def cite(source: str, ids: list[str]) -> list[dict[str, str]]:
    """Evidence as the prompts ask for it: the tool as source, an EMP id as ref."""
    return [{"source": source, "ref": eid, "summary": f"{eid} checked."} for eid in ids[:5]]


def specialist_responder(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """A stand-in specialist: fetch the data, then decide from what the tool returned and
    cite the failing riders (else every rider) by EMP id, as the prompts say."""
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if "get_employee_shifts" in tools:
        if not results:
            return call("get_employee_shifts")
        data = json.loads(results[-1].content)
        failed = list(data["below_rule"])
        everyone = [e["employee_id"] for e in data["employees"]]
        return call(
            "submit_decision",
            verdict="fail" if failed else "pass",
            confidence=90,
            reasoning="Overlap with the majority shift.",
            failed_employees=failed,
            evidence=cite("get_employee_shifts", failed + [e for e in everyone if e not in failed]),
        )
    if not results:
        return call("check_commute_distance")
    data = json.loads(results[-1].content)
    failed = list(data["beyond_threshold"])
    everyone = [d["employee_id"] for d in data["distances"]]
    return call(
        "submit_decision",
        verdict="fail" if failed else "pass",
        confidence=90,
        reasoning="Distances against the threshold.",
        failed_employees=failed,
        evidence=cite("check_commute_distance", failed or everyone[:2]),
    )
