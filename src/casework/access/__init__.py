"""access: users, passwords, API tokens and web sessions (platform; apps never import it).

The server authenticates every request with ``authenticate_token``; the web UI signs people in
with ``verify_password`` and keeps them signed in with a server-side session
(``start_session`` / ``check_session``); ``casework user`` and ``casework token`` manage them. The names load on first use
(PEP 562): the CLI mounts ``casework user`` without importing SQLAlchemy or the password
hasher, so ``--help`` answers at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import lazy_names

if TYPE_CHECKING:
    from casework.access.service import (
        TOKEN_PREFIX,
        AuthError,
        TokenInfo,
        User,
        authenticate_token,
        create_token,
        create_user,
        disable_user,
        get_user,
        has_users,
        list_tokens,
        list_users,
        open_access,
        revoke_token,
        set_password,
        verify_password,
    )
    from casework.access.sessions import (
        ActiveSession,
        SessionInfo,
        check_session,
        end_session,
        list_sessions,
        revoke_sessions,
        start_session,
    )

__all__ = [
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
]

_HOME = {
    "TOKEN_PREFIX": "service",
    "AuthError": "service",
    "TokenInfo": "service",
    "User": "service",
    "authenticate_token": "service",
    "create_token": "service",
    "create_user": "service",
    "disable_user": "service",
    "get_user": "service",
    "has_users": "service",
    "list_tokens": "service",
    "list_users": "service",
    "open_access": "service",
    "revoke_token": "service",
    "set_password": "service",
    "verify_password": "service",
    "ActiveSession": "sessions",
    "SessionInfo": "sessions",
    "check_session": "sessions",
    "end_session": "sessions",
    "list_sessions": "sessions",
    "revoke_sessions": "sessions",
    "start_session": "sessions",
}

__getattr__ = lazy_names("casework.access", _HOME)
