"""The public surface of access and the run context, pinned: a change here is a change of contract."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "casework.access": [
        "TOKEN_PREFIX",
        "ActiveSession",
        "AuthError",
        "SessionInfo",
        "TokenInfo",
        "User",
        "authenticate_token",
        "check_session",
        "create_token",
        "create_user",
        "disable_user",
        "end_session",
        "get_user",
        "has_users",
        "list_sessions",
        "list_tokens",
        "list_users",
        "open_access",
        "revoke_sessions",
        "revoke_token",
        "set_password",
        "start_session",
        "verify_password",
    ],
    "casework.runtime.context": [
        "Caller",
        "PermissionDenied",
        "Role",
        "RunContext",
        "Tenant",
        "TenantScoped",
        "caller_name",
        "owner_for",
        "visible_to",
        "writable_by",
    ],
    "casework.server.auth": [
        "QUERY_TOKEN_NAMES",
        "authenticate",
        "check_serve_allowed",
        "is_loopback",
    ],
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(PUBLIC[module_name])
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name}"


def test_apps_reach_access_only_through_the_run_context() -> None:
    """Apps get the caller from casework.runtime.context and never import casework.access."""
    from pathlib import Path

    import casework.apps

    for path in Path(casework.apps.__path__[0]).rglob("*.py"):
        text = path.read_text()
        assert "casework.access" not in text, f"{path} imports casework.access"
