"""The evaluation store on a real PostgreSQL server on loopback: save, list, reopen, delete."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from evals_toy import make_cases, make_suite, toy_models, write_dataset

from casework.config import Settings
from casework.evals import list_runs, load_run, run_suite
from casework.evals.store import delete_run

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_url():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def test_runs_round_trip_through_postgres(pg_url: str, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", database_url=pg_url, allow_network_models=False)
    suite = make_suite(write_dataset(tmp_path / "toy.jsonl", make_cases()))
    run = run_suite(
        suite,
        concurrency=4,
        base_model=toy_models,
        judge_model="scripted:judge",
        settings=settings,
        progress=False,
    )
    again = load_run(run.run_id, settings=settings)
    assert again.metrics["verdict_accuracy"] == run.metrics["verdict_accuracy"]
    assert again.created_at == run.created_at and len(again.cases) == 8
    assert again.case("c04").trajectory["type"] == "circular"
    assert [r.run_id for r in list_runs(settings=settings)] == [run.run_id]
    run_suite(suite, strategy="baseline", settings=settings, progress=False)
    assert len(list_runs(app="toy", settings=settings)) == 2
    assert delete_run(run.run_id, settings=settings) == run.run_id
    assert len(list_runs(settings=settings)) == 1
