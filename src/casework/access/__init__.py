"""access: users, passwords and API tokens (platform; apps never import it).

The server authenticates every request with ``authenticate_token``; the web UI signs people in
with ``verify_password``; ``casework user`` and ``casework token`` manage both.
"""

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

__all__ = [
    "TOKEN_PREFIX",
    "AuthError",
    "TokenInfo",
    "User",
    "authenticate_token",
    "create_token",
    "create_user",
    "disable_user",
    "get_user",
    "has_users",
    "list_tokens",
    "list_users",
    "open_access",
    "revoke_token",
    "set_password",
    "verify_password",
]
