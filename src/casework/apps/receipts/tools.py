"""The agent's tools, exactly the spec's list; ``submit_decision`` is added by ReactAgent.

Every tool reads the word under validation from the run context (``ToolRuntime[WordRef]``),
never from model arguments, and returns compact JSON. A source that cannot answer raises
``casework.errors.SourceUnavailable``; the runtime hands the model an "unavailable"
observation, so the agent decides from the other sources.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.tools import BaseTool

from casework.apps.receipts import evidence
from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import WordRef
from casework.errors import SourceUnavailable

__all__ = ["TOOL_NAMES", "build_tools", "dumps"]

TOOL_NAMES = (
    "get_word_context",
    "get_merchant_metadata",
    "search_similar_words",
    "get_all_labels_for_word",
    "get_labels_on_receipt",
    "check_edge_cases",
)


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def _safe(source: str, fn: Callable[[], dict[str, Any]]) -> str:
    """Run one source; a failure of its store is ``SourceUnavailable`` for the runtime to report."""
    try:
        return dumps(fn())
    except SourceUnavailable:
        raise
    except Exception as exc:  # a store that went away, a corrupt index: still only one source
        reason = f"{type(exc).__name__}: {exc}"[:200]
        raise SourceUnavailable(source, reason) from exc


def build_tools(deps: ReceiptsDeps) -> list[BaseTool]:
    """The six evidence tools bound to ``deps`` by closure."""

    @tool
    def get_word_context(runtime: ToolRuntime[WordRef]) -> str:
        """PRIMARY evidence. The word's line, the lines above and below, nearby words, its shape, column and receipt section."""
        return _safe("word context", lambda: evidence.word_context(deps, runtime.context))

    @tool
    def get_merchant_metadata(runtime: ToolRuntime[WordRef]) -> str:
        """Merchant name, address, phone, website, hours (Google Places style; mostly accurate) and which of them contain the word. For MERCHANT_NAME, ADDRESS_LINE, PHONE_NUMBER, WEBSITE, STORE_HOURS."""
        return _safe("merchant metadata", lambda: evidence.merchant_metadata(deps, runtime.context))

    @tool
    def search_similar_words(
        runtime: ToolRuntime[WordRef], n_results: int = 6, same_merchant: bool = False
    ) -> str:
        """Similar words on other receipts with their label, validation status and line. Supporting evidence: do similar words carry the suggested label as VALID?"""
        return _safe(
            "similar words",
            lambda: evidence.similar_words_summary(
                deps, runtime.context, n=n_results, same_merchant=same_merchant
            ),
        )

    @tool
    def get_all_labels_for_word(runtime: ToolRuntime[WordRef]) -> str:
        """Every label this word has had: audit trail, statuses and consolidation chain (cross-label confusion)."""
        return _safe("label history", lambda: evidence.all_labels_for_word(deps, runtime.context))

    @tool
    def get_labels_on_receipt(runtime: ToolRuntime[WordRef]) -> str:
        """Label counts on this receipt, labels on the same line, and where else the suggested label appears."""
        return _safe("receipt labels", lambda: evidence.labels_on_receipt(deps, runtime.context))

    @tool
    def check_edge_cases(runtime: ToolRuntime[WordRef]) -> str:
        """Known invalid patterns for this word and label. A match is a fast, strong sign of INVALID."""
        return _safe("edge cases", lambda: evidence.check_edge_cases(deps, runtime.context))

    # Order matters to small models, which tend to walk the list: primary and most telling first.
    return [
        get_word_context,
        search_similar_words,
        check_edge_cases,
        get_merchant_metadata,
        get_labels_on_receipt,
        get_all_labels_for_word,
    ]
