"""The caller a repository writes for, and ``transaction()``: every call inside it one
transaction (nested ones join it), what was handed to ``after_commit`` run once it commits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from casework.stores.sql import session_scope

CALLER_MAX = 120
"""Characters of a caller kept in the log (the column's width)."""


@dataclass
class _Unit:
    """The transaction under way in this context: its session and what runs after commit."""

    engine: Engine
    session: Session
    after_commit: list[Callable[[], Any]] = field(default_factory=list)


_unit: ContextVar[_Unit | None] = ContextVar("vanpool_unit", default=None)


class TransactionScope:
    """The engine, the caller, and the transaction under way in this context."""

    def __init__(self, engine: Engine, caller: str = "") -> None:
        self.engine = engine
        self.caller = caller[:CALLER_MAX]
        """Who the writes are for; every audit row names them."""

    def _current(self) -> _Unit | None:
        unit = _unit.get()
        return unit if unit is not None and unit.engine is self.engine else None

    def session(self) -> Any:
        unit = self._current()
        return nullcontext(unit.session) if unit is not None else session_scope(self.engine)

    def in_transaction(self) -> bool:
        return self._current() is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every repository call inside is one transaction (nested ones join it); on commit,
        the ``after_commit`` callbacks run in order, on error nothing of it is written."""
        if self._current() is not None:
            yield
            return
        with session_scope(self.engine) as s:
            unit = _Unit(self.engine, s)
            token = _unit.set(unit)
            try:
                yield
            finally:
                _unit.reset(token)
        for callback in unit.after_commit:
            callback()

    def after_commit(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` once the transaction under way commits (now, when none is)."""
        unit = self._current()
        if unit is None:
            callback()
        else:
            unit.after_commit.append(callback)
