"""``casework doctor`` and ``casework demo``: check every component, then run something real."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.markup import escape

from casework.config import Settings, get_settings
from casework.errors import CaseworkError, ConfigError
from casework.llm import PROVIDERS

__all__ = ["Check", "doctor_checks", "run_demo", "run_doctor"]


@dataclass
class Check:
    name: str
    status: Literal["ok", "info", "fail", "skip"]
    detail: str


def _check_model(settings: Settings) -> Check:
    from casework.llm.bundled import model_status, verify_model

    status = model_status(settings.models_dir)
    if not status["present"]:
        return Check("bundled model", "fail", f"not prepared at {status['path']}: run `make model`")
    if not status["size_ok"]:
        return Check(
            "bundled model",
            "fail",
            f"{status['path']} has the wrong size: run `casework model prepare`",
        )
    if not status["verified_stamp"] and not verify_model(status["path"]):
        return Check(
            "bundled model", "fail", "SHA-256 does not match: run `casework model prepare`"
        )
    return Check("bundled model", "ok", f"{status['path']} (sha256 verified)")


def _check_llama(settings: Settings) -> Check:
    from casework.llm.bundled import MODEL_FILE
    from casework.llm.local import llama_load_check

    seconds = llama_load_check(settings.models_dir / MODEL_FILE)
    return Check("llama.cpp", "ok", f"model loads in {seconds:.1f} s")


def _check_database(settings: Settings) -> Check:
    from sqlalchemy.exc import SQLAlchemyError

    from casework.errors import StoreUnavailable
    from casework.stores.sql import get_engine, migrate, migration_status

    try:
        engine = get_engine(settings.db_url)
        migrate(engine)
        applied, expected = migration_status(engine)
    except StoreUnavailable as exc:  # its sentence names the file and what to do
        return Check("database", "fail", f"cannot open {settings.db_url}: {exc}")
    except (OSError, SQLAlchemyError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Check(
            "database",
            "fail",
            f"cannot open {settings.db_url} ({reason}): fix CASEWORK_DATABASE_URL or casework.toml",
        )
    if applied != expected:
        return Check(
            "database", "fail", f"migrations not at head ({sorted(applied)} vs {sorted(expected)})"
        )
    return Check(
        "database",
        "ok",
        f"{engine.url.render_as_string()} migrated ({', '.join(sorted(expected))})",
    )


def _check_vectors(settings: Settings) -> Check:
    from casework.stores.vector import open_collection

    t0 = time.perf_counter()
    collection = open_collection(settings.vectors_dir, "casework-doctor")
    collection.upsert(ids=["probe"], documents=["grand total 12.50"])
    hit = collection.query(query_texts=["total"], n_results=1)["ids"][0]
    if hit != ["probe"]:
        return Check("vector store", "fail", "Chroma returned no match for the probe document")
    return Check(
        "vector store",
        "ok",
        f"Chroma at {settings.vectors_dir}, MiniLM embeds offline ({time.perf_counter() - t0:.1f} s)",
    )


def _check_checkpointer(settings: Settings) -> Check:
    from casework.runtime.checkpoint import open_checkpointer

    with open_checkpointer(settings) as saver:
        kind = type(saver).__name__
    return Check("checkpointer", "ok", kind)


def _provider_keys() -> Check:
    have = [p for p, var in PROVIDERS.items() if var and os.environ.get(var)]
    missing = [var for p, var in PROVIDERS.items() if var and not os.environ.get(var)]
    detail = f"keys set: {', '.join(have) or 'none'}"
    if missing:
        detail += f" (not set: {', '.join(missing)}; the bundled model needs none)"
    return Check("provider keys", "info", detail)


# (name, check, the earlier check it needs): a check whose prerequisite failed is skipped,
# so one broken component is reported once rather than again by everything built on it.
DoctorCheck = tuple[str, Callable[[Settings], Check], str | None]


def doctor_checks(settings: Settings) -> list[DoctorCheck]:
    return [
        ("bundled model", _check_model, None),
        ("llama.cpp", _check_llama, "bundled model"),
        ("database", _check_database, None),
        ("vector store", _check_vectors, None),
        ("checkpointer", _check_checkpointer, None),
        ("provider keys", lambda s: _provider_keys(), None),
    ]


_MARKS = {
    "ok": "[green]ok  [/]",
    "info": "[cyan]info[/]",
    "fail": "[red]FAIL[/]",
    "skip": "[yellow]skip[/]",
}


def run_doctor(console: Console, settings: Settings | None = None) -> list[Check]:
    """Run every check and print one line each (a failure once, with its fix); return them.

    Never raises for a broken component: the caller decides the exit code from the statuses.
    """
    settings = settings or get_settings()
    results: list[Check] = []
    failed: set[str] = set()
    for name, fn, needs in doctor_checks(settings):
        if needs in failed:
            check = Check(name, "skip", f"needs the {needs}")
        else:
            try:
                check = fn(settings)
            except CaseworkError as exc:
                check = Check(name, "fail", str(exc))
            except Exception as exc:  # a broken component must not print a traceback
                check = Check(name, "fail", f"{type(exc).__name__}: {exc}")
        if check.status == "fail":
            failed.add(name)
        console.print(
            f"{_MARKS[check.status]} {check.name:<15} {escape(check.detail)}", highlight=False
        )
        results.append(check)
    return results


def run_demo(console: Console) -> None:
    """Doctor, then every registered app's demo (or a local-model smoke run when none)."""
    from casework.registry import all_apps

    console.rule("casework doctor")
    broken = [c.name for c in run_doctor(console) if c.status == "fail"]
    if broken:
        raise ConfigError(
            f"The demo needs every component; fix {', '.join(broken)} (see FAIL above) and run "
            "`casework demo` again."
        )
    demos = {name: spec.demo for name, spec in all_apps().items() if spec.demo}
    if not demos:
        console.print(
            "No app with a demo is registered yet; running the local-model agent smoke run."
        )
    console.rule("local model smoke run")
    smoke_run(console)
    for name, fn in demos.items():
        console.rule(f"{name} demo")
        fn()


def smoke_run(console: Console) -> None:
    """A two-tool ReAct run on the bundled model, printed as the event stream."""
    from casework.runtime.runconfig import RunConfig
    from casework.smoke import OrderRef, build_smoke_agent

    agent = build_smoke_agent(RunConfig.of(get_settings()))
    for event in agent.iter_events(
        "Order A-1001 says it was delivered. Check the order status and then submit your decision "
        "on whether the delivery claim is VALID.",
        context=OrderRef("A-1001"),
    ):
        if event["type"] == "tool":
            console.print(f"  -> {event['tool']}({event['input']})", highlight=False)
        elif event["type"] == "tool_result":
            console.print(f"  <- {event['output'][:120]}", highlight=False)
        elif event["type"] == "complete":
            r = event["result"]
            d = r.decision
            console.print(
                f"  decision: {d.verdict} ({d.confidence:.0f}) ended_by={r.ended_by} "
                f"model_calls={r.usage.model_calls} {r.usage.wall_seconds:.1f}s",
                highlight=False,
            )
            console.print(f"  reasoning: {d.reasoning[:200]}", highlight=False)
