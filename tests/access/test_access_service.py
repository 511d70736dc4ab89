"""The access service: users, Argon2 passwords, hashed tokens and every way a token fails."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from casework.access import (
    AuthError,
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
from casework.access.tables import TokenRow, UserRow
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller, Role
from casework.stores.sql import session_scope


@pytest.fixture
def engine(tmp_path):
    return open_access(Settings(home=tmp_path / "home", allow_network_models=False))


def test_users_are_unique_named_and_roled(engine):
    assert not has_users(engine)
    ana = create_user(engine, "ana", "reviewer")
    bob = create_user(engine, "bob")
    assert (ana.id, ana.role, bob.role, bob.has_password) == (1, Role.REVIEWER, Role.USER, False)
    assert has_users(engine)
    assert [(u.name, u.role.value) for u in list_users(engine)] == [
        ("ana", "reviewer"),
        ("bob", "user"),
    ]
    with pytest.raises(InputError, match="A user named 'ana' already exists"):
        create_user(engine, "ana")
    with pytest.raises(InputError, match="Unknown role 'boss'"):
        create_user(engine, "carl", "boss")
    with pytest.raises(InputError, match="is not allowed"):
        create_user(engine, "no spaces")
    with pytest.raises(NotFoundError, match="No user 'zed'"):
        get_user(engine, "zed")
    disable_user(engine, "ana")
    disable_user(engine, "bob")
    assert not has_users(engine), "disabled users cannot hold a working token"


def test_passwords_are_argon2_and_checked(engine):
    create_user(engine, "ana", password="correct horse")
    create_user(engine, "bob")
    with session_scope(engine) as s:
        stored = s.scalar(select(UserRow.password_hash).where(UserRow.name == "ana"))
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    assert verify_password(engine, "ana", "correct horse") == Caller(1, "ana", Role.USER)
    for name, password in (("ana", "wrong horse"), ("bob", "anything1"), ("zed", "correct horse")):
        with pytest.raises(AuthError, match="user name or password is wrong"):
            verify_password(engine, name, password)
    with pytest.raises(InputError, match="at least 8 characters"):
        set_password(engine, "bob", "short")
    set_password(engine, "bob", "long enough")
    assert verify_password(engine, "bob", "long enough").name == "bob"
    disable_user(engine, "ana")
    with pytest.raises(AuthError):
        verify_password(engine, "ana", "correct horse")


def test_tokens_are_random_shown_once_and_stored_hashed(engine):
    create_user(engine, "ana", Role.ADMIN)
    info, secret = create_token(engine, "ana")
    other_info, other = create_token(engine, "ana", expires_days=30)
    assert secret.startswith("cw_") and len(secret) == 46 and secret != other
    assert info.prefix == secret[:10] and info.expires_at is None
    assert other_info.expires_at - other_info.created_at == timedelta(days=30)
    with session_scope(engine) as s:
        rows = s.scalars(select(TokenRow).order_by(TokenRow.id)).all()
        assert [r.token_hash for r in rows] == [
            hashlib.sha256(secret.encode()).hexdigest(),
            hashlib.sha256(other.encode()).hexdigest(),
        ]
        assert all(secret not in (r.token_hash, r.prefix) for r in rows)
    caller = authenticate_token(engine, secret)
    assert caller == Caller(user_id=1, name="ana", role=Role.ADMIN)
    assert caller.has_role("reviewer") and not Caller(2, "b", Role.USER).has_role("reviewer")
    [first, second] = list_tokens(engine, "ana")
    assert first.last_used_at is not None and second.last_used_at is None
    assert (first.status(), second.status()) == ("active", "active")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("not-a-token", "That is not a casework token"),
        ("cw_", "That is not a casework token"),
        ("cw_" + "x" * 43, "The token is not valid"),
    ],
)
def test_wrong_tokens_are_refused(engine, token, message):
    create_user(engine, "ana")
    create_token(engine, "ana")
    with pytest.raises(AuthError, match=message):
        authenticate_token(engine, token)


def test_revoked_expired_and_disabled_tokens_stop_working(engine):
    create_user(engine, "ana")
    create_user(engine, "bob")
    revoked_info, revoked = create_token(engine, "ana")
    _, expiring = create_token(engine, "ana", expires_days=1)
    _, bobs = create_token(engine, "bob")
    assert revoke_token(engine, revoked_info.prefix).id == revoked_info.id
    with pytest.raises(AuthError, match="The token was revoked"):
        authenticate_token(engine, revoked)
    assert list_tokens(engine, "ana")[0].status() == "revoked"
    tomorrow = datetime.now(UTC) + timedelta(days=1, minutes=1)
    assert authenticate_token(engine, expiring).name == "ana"
    with pytest.raises(AuthError, match="The token expired on"):
        authenticate_token(engine, expiring, now=tomorrow)
    disable_user(engine, "bob")
    with pytest.raises(AuthError, match="User 'bob' is disabled"):
        authenticate_token(engine, bobs)
    with pytest.raises(InputError, match="is disabled"):
        create_token(engine, "bob")


def test_revoke_by_id_prefix_or_whole_token_and_refuse_ambiguity(engine):
    create_user(engine, "ana")
    a, _ = create_token(engine, "ana")
    b, b_secret = create_token(engine, "ana")
    c, _ = create_token(engine, "ana")
    assert revoke_token(engine, str(a.id)).revoked_at is not None
    assert revoke_token(engine, b_secret).id == b.id
    with session_scope(engine) as s:  # force two tokens to share a displayed prefix
        s.execute(update(TokenRow).where(TokenRow.id == c.id).values(prefix=a.prefix))
    with pytest.raises(InputError, match="matches 2 tokens; revoke by id"):
        revoke_token(engine, a.prefix)
    with pytest.raises(NotFoundError, match="No token '999'"):
        revoke_token(engine, "999")
    with pytest.raises(InputError, match="--expires-days must be at least 1"):
        create_token(engine, "ana", expires_days=0)
