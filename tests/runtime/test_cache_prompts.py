"""The runtime's lookup cache and prompt loader."""

from __future__ import annotations

import threading

import pytest

from casework.errors import ConfigError
from casework.runtime.cache import LookupCache
from casework.runtime.prompts import load_prompt


def test_lookup_cache_computes_each_key_once():
    cache = LookupCache()
    calls: list[str] = []

    def compute(key: str) -> str:
        calls.append(key)
        return key.upper()

    assert [cache.get(("row", k), lambda k=k: compute(k)) for k in "abab"] == ["A", "B", "A", "B"]
    assert calls == ["a", "b"] and (cache.hits, cache.misses) == (2, 2)
    cache.clear()
    assert cache.get(("row", "a"), lambda: "again") == "again"


def test_lookup_cache_gives_one_value_per_key_across_threads():
    cache = LookupCache()
    seen: list[object] = []
    barrier = threading.Barrier(4)

    def worker() -> None:
        barrier.wait()
        seen.append(cache.get("key", object))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(v) for v in seen}) == 1


def test_load_prompt_renders_an_apps_prompt_file():
    text = load_prompt(
        "casework.apps.receipts",
        "task",
        word="14.00",
        line_id=12,
        word_id=4,
        label="UNIT_PRICE",
        definition="price of one unit",
        merchant="Wild Fork",
        reason="column",
    )
    assert text.startswith(
        'Word: "14.00" (line 12, word 4)\nSuggested label: UNIT_PRICE (price of one unit)'
    )
    assert "$" not in text.split("\n")[0]


def test_a_missing_value_or_prompt_is_one_sentence():
    with pytest.raises(ConfigError) as err:
        load_prompt("casework.apps.receipts", "task", word="x")
    assert str(err.value) == (
        "Prompt 'task' of casework.apps.receipts needs a value for 'line_id'; pass it to load_prompt."
    )
    with pytest.raises(
        ConfigError, match=r"^No prompt 'nope' in casework.apps.receipts: add prompts/nope.md.$"
    ):
        load_prompt("casework.apps.receipts", "nope")
