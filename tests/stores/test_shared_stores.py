"""Stores opened once per process and shared by concurrent cases (issue #21): one Chroma
client per path, one index build per collection, one engine per URL, fresh ones after a fork."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.pool import NullPool

from casework.stores import vector
from casework.stores.sql import external_engine, get_engine

THREADS = 8


def _at_once(fn: Callable[[], Any]) -> tuple[list[Any], list[BaseException]]:
    """``fn`` on THREADS threads released together; their results and errors."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(fn())
        except BaseException as exc:  # collected: the assertion shows them all
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results, errors


def test_eight_threads_opening_one_path_at_once_get_one_client_and_no_error(tmp_path: Path):
    path = tmp_path / "chroma"
    assert not vector.is_open(path)
    clients, errors = _at_once(lambda: vector.open_vector_client(path))
    assert errors == [] and len(clients) == THREADS
    assert len({id(c) for c in clients}) == 1 and vector.is_open(path)
    # The same path spelled another way is the same client.
    assert vector.open_vector_client(tmp_path / "x" / ".." / "chroma") is clients[0]


def test_one_index_build_while_every_other_case_waits_for_it(tmp_path: Path):
    path = tmp_path / "chroma"
    builds: list[int] = []

    def fill(collection: Any) -> None:
        builds.append(threading.get_ident())
        collection.upsert(ids=["a", "b"], documents=["grand total", "organic bananas"])

    def open_and_query() -> list[str]:
        collection = vector.open_collection(path, "shared-index", fill=fill)
        return list(collection.query(query_texts=["total"], n_results=1)["ids"][0])

    hits, errors = _at_once(open_and_query)
    assert errors == [] and hits == [["a"]] * THREADS
    assert len(builds) == 1  # built once; nobody queried a half-built index

    def broken(collection: Any) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        vector.open_collection(path, "broken-index", fill=broken)
    again: list[str] = []
    vector.open_collection(path, "broken-index", fill=lambda c: again.append("built"))
    assert again == ["built"]  # a fill that raised runs again next time


def test_eight_threads_asking_for_one_url_get_one_engine(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    engines, errors = _at_once(lambda: get_engine(url))
    assert errors == [] and len({id(e) for e in engines}) == 1
    # A database casework only reads: its own shared engine, no pool, no pragmas written.
    external = external_engine(url)
    assert external is external_engine(url) and external is not engines[0]
    assert isinstance(external.pool, NullPool)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_opens_its_own_client_and_engine(tmp_path: Path):
    path = tmp_path / "chroma"
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    parent_client = vector.open_vector_client(path)
    parent_engine = get_engine(url)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's teardown
        try:
            from chromadb.api.shared_system_client import SharedSystemClient

            fresh = (
                not vector.is_open(path)
                and not SharedSystemClient._identifier_to_system
                and get_engine(url) is not parent_engine
            )
            os.write(write, b"fresh" if fresh else b"inherited")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 64)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"fresh"
    # The parent keeps its own.
    assert vector.open_vector_client(path) is parent_client and get_engine(url) is parent_engine
