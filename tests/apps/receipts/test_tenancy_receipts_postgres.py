"""Tenant-scoped receipts on a real PostgreSQL server: the same checks through the API."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tenancy_receipts import _check_through_the_api, _tenancy_world

from casework.config import Settings
from casework.stores.sql import current_heads
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_a_user_never_reads_another_users_receipts_on_postgres(tmp_path: Path) -> None:
    server = PostgresServer()
    try:
        url = server.start()
        settings = Settings(home=tmp_path / "home", database_url=url, allow_network_models=False)
        world = _tenancy_world(settings)
        assert "receipts_0002" in current_heads(world["operator"].repo.engine)
        _check_through_the_api(settings, world)
    finally:
        server.stop()
