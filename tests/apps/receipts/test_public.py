"""The public surface of the receipts app: every ``__all__`` name exists; APP is registered."""

from __future__ import annotations

import importlib

import pytest
import typer

from casework.config import get_settings
from casework.registry import get_app

MODULES = [
    "agent",
    "api",
    "baseline",
    "cli",
    "dataset",
    "demo",
    "deps",
    "classify",
    "evalsuite",
    "evidence",
    "rules",
    "harmonizer",
    "importer",
    "models",
    "places",
    "policy",
    "repository",
    "service",
    "strategies",
    "tables",
    "tools",
    "vectors",
]


# The public names of the modules whose surface this pins (the others are pinned where they
# are owned); a change here is an API change and belongs in the changelog.
PUBLIC = {
    "dataset": {
        "AUDIT_PATH",
        "CASES_PATH",
        "CONFUSIONS",
        "SEED",
        "build_cases",
        "read_audit",
        "write_cases",
    },
    "rules": {
        "KEYWORDS",
        "RULES_SOURCE",
        "RulesDecision",
        "TOTAL_KEYWORDS",
        "WordFacts",
        "amount_role",
        "column",
        "context_checks",
        "decide_by_rules",
        "line_keywords",
        "normalize",
        "sections",
        "shape_fits",
        "word_shape",
    },
    "repository": {"LabelChange", "ReceiptsRepository", "WaitingLabel"},
    "tools": {"TOOL_NAMES", "build_tools", "dumps"},
    "deps": {"ReceiptsDeps", "build_deps", "stored_calibrations"},
    "tables": {"EdgeCaseRow", "LabelRow", "LineRow", "PlaceRow", "ReceiptRow", "WordRow"},
}


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist(name):
    module = importlib.import_module(f"casework.apps.receipts.{name}")
    missing = [attr for attr in module.__all__ if not hasattr(module, attr)]
    assert missing == [], name
    if name in PUBLIC:
        assert set(module.__all__) == PUBLIC[name]


def test_tools_are_the_specs_six_in_the_order_a_small_model_reads_them(seeded):
    from casework.apps.receipts.tools import TOOL_NAMES, build_tools

    assert [t.name for t in build_tools(seeded)] == [
        "get_word_context",
        "search_similar_words",
        "check_edge_cases",
        "get_merchant_metadata",
        "get_labels_on_receipt",
        "get_all_labels_for_word",
    ]
    assert set(TOOL_NAMES) == {t.name for t in build_tools(seeded)}


def test_app_is_registered():
    spec = get_app("receipts")
    assert spec.migrations is not None and (spec.migrations / "receipts_0001_initial.py").is_file()
    commands = typer.main.get_command(spec.cli()).commands  # type: ignore[attr-defined]
    assert set(commands) >= {
        "harmonize",
        "history",
        "import",
        "index",
        "list",
        "seed",
        "show",
        "validate",
    }
    groups = {name for name, c in commands.items() if hasattr(c, "commands")}
    # the platform adds `examples` to the app's CLI when the top-level CLI loads (casework.cli)
    assert groups - {"examples"} == {"edge-cases", "review"}
    assert [(r.path, sorted(r.methods)) for r in spec.router(get_settings()).routes] == [
        ("/receipts", ["GET"]),
        ("/validate", ["POST"]),
        ("/review", ["GET"]),
        ("/review/{label_id}/accept", ["POST"]),
        ("/review/{label_id}/reject", ["POST"]),
        ("/words/{receipt}/{line_id}/{word_id}/labels", ["GET"]),
    ]
    assert callable(spec.demo) and callable(spec.eval_suite)
    assert "evaluate" not in commands  # one evaluation path: `casework eval receipts`
    strategies = spec.strategies()
    assert list(strategies) == [
        "memory",
        "rules",
        "baseline",
        "choice",
        "agent",
        "cascade",
        "memory-offline",
    ]
    assert dict(strategies) == dict(spec.eval_suite().strategies)
