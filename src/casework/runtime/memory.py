"""The memory of verified answers: a person's answer is the next case's evidence.

An ``Example`` is one app's case input (as JSON, and as the key text it is found by), the
answer a person verified for it, who verified it and when, where it came from (``review``:
the inbox; ``api``: ``POST /<app>/examples``; ``import``: ``casework <app> examples import``),
the run it came from if any, and its MiniLM embedding (``casework.stores.vector.embed``).
Rows live in casework's own SQL store (``casework_examples``, the core migration branch) and
are tenant-scoped like every other row: a tenant reads its own examples and the shared ones
(written by the local operator), and deletes only its own.

``nearest`` compares the key text's embedding with every example of the app the tenant can
see, by cosine in numpy. At the scale of examples people verify (hundreds to a few thousand
per app) that is a few milliseconds, and it keeps ``delete`` exact: a deleted row is gone
from the very next ``nearest``, with no second index to keep in step.

An app says how its case input becomes key text and what its answer is through the lazy
``AppSpec.examples`` hook: an object with ``key_text(inputs) -> str`` and
``answer_of(expected) -> dict`` (``ValueError`` in words for an answer it cannot take), and
optionally ``scope(inputs) -> str``: what besides the key text tells two cases apart (sql's
database), so the same question verified on two databases is two examples, not a correction.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from sqlalchemy import Engine, Integer, LargeBinary, String, Text, and_, delete, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller, PermissionDenied, owner_for, visible_to, writable_by
from casework.stores.sql import Base, session_scope

__all__ = [
    "EXAMPLE_SOURCES",
    "Example",
    "ExampleDraft",
    "ExamplesHook",
    "Memory",
    "Source",
]

Source = Literal["review", "api", "import"]
EXAMPLE_SOURCES: tuple[str, ...] = ("review", "api", "import")
MAX_KEY_CHARS = 20_000
"""Key text longer than this is refused: it would be a document, not a case's key."""

Embedder = Callable[[list[str]], list[list[float]]]
ScopeOf = Callable[[dict[str, Any]], str]
"""A case input's scope (``ExamplesHook.scope``); ``""``: the key text alone identifies it."""


class ExampleRow(Base):
    __tablename__ = "casework_examples"
    # A decision cites examples by id: SQLite must never hand a deleted one's id out again.
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    app: Mapped[str] = mapped_column(String(50))
    owner_id: Mapped[int | None] = mapped_column(Integer, default=None)
    key_hash: Mapped[str] = mapped_column(String(64))
    key_text: Mapped[str] = mapped_column(Text)
    inputs_json: Mapped[str] = mapped_column(Text)
    answer_json: Mapped[str] = mapped_column(Text)
    verified_by: Mapped[str] = mapped_column(String(200))
    verified_at: Mapped[datetime] = mapped_column()
    source: Mapped[str] = mapped_column(String(10))
    run_id: Mapped[str | None] = mapped_column(String(100), default=None)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)


@runtime_checkable
class ExamplesHook(Protocol):
    """What an app tells the platform about its examples (``AppSpec.examples``)."""

    def key_text(self, inputs: dict[str, Any]) -> str:
        """The case input as the text it is found by; ``ValueError`` in words when the
        inputs are not a case of this app."""
        ...

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        """The verified answer kept from a case's expected outputs (validated);
        ``ValueError`` in words when it is not an answer of this app."""
        ...


@dataclass(frozen=True)
class ExampleDraft:
    """An example before it is stored: what a review decision or an import line gives."""

    inputs: dict[str, Any]
    answer: dict[str, Any]
    run_id: str | None = None


@dataclass(frozen=True)
class Example:
    id: int
    app: str
    key_text: str
    inputs: dict[str, Any]
    answer: dict[str, Any]
    verified_by: str
    verified_at: datetime
    source: str
    run_id: str | None
    owner_id: int | None
    embedding: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The example as JSON (the CLI's ``--json`` and the API), without its vector."""
        return {
            "id": self.id,
            "app": self.app,
            "key_text": self.key_text,
            "inputs": self.inputs,
            "answer": self.answer,
            "verified_by": self.verified_by,
            "verified_at": self.verified_at.isoformat(),
            "source": self.source,
            "run_id": self.run_id,
            "shared": self.owner_id is None,
        }


def _key_hash(text: str, scope: str = "") -> str:
    """The identity a correction replaces by: the key text, and the scope when there is one
    (no scope hashes as before scopes existed, so older rows keep their identity)."""
    identity = f"{text}\x00{scope}" if scope else text
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def _example(row: ExampleRow) -> Example:
    import numpy as np

    at = row.verified_at
    return Example(
        id=row.id,
        app=row.app,
        key_text=row.key_text,
        inputs=json.loads(row.inputs_json),
        answer=json.loads(row.answer_json),
        verified_by=row.verified_by,
        verified_at=at if at.tzinfo is not None else at.replace(tzinfo=UTC),
        source=row.source,
        run_id=row.run_id,
        owner_id=row.owner_id,
        embedding=tuple(float(x) for x in np.frombuffer(row.embedding, dtype=np.float32)),
    )


def _default_embedder(texts: list[str]) -> list[list[float]]:
    from casework.stores.vector import embed

    return embed(texts)


class Memory:
    """The examples of one app as one tenant sees them (``tenant=None``: the local operator,
    who sees and deletes every row and whose examples are shared)."""

    def __init__(
        self,
        engine: Engine,
        app: str,
        tenant: Caller | None = None,
        *,
        embedder: Embedder | None = None,
        scope_of: ScopeOf | None = None,
    ) -> None:
        self.engine = engine
        self.app = app
        self.tenant = tenant
        self._embed = embedder or _default_embedder
        self._scope_of = scope_of

    def _visible(self) -> Any:
        return and_(ExampleRow.app == self.app, visible_to(ExampleRow.owner_id, self.tenant))

    # ------------------------------------------------------------------ writing
    def add(
        self,
        key_text: str,
        inputs: dict[str, Any],
        answer: dict[str, Any],
        *,
        verified_by: str,
        source: Source,
        run_id: str | None = None,
        verified_at: datetime | None = None,
    ) -> Example:
        """Store one verified answer (see ``add_many``)."""
        return self.add_many(
            [(key_text, ExampleDraft(inputs, answer, run_id))],
            verified_by=verified_by,
            source=source,
            verified_at=verified_at,
        )[0]

    def add_many(
        self,
        drafts: Sequence[tuple[str, ExampleDraft]],
        *,
        verified_by: str,
        source: Source,
        verified_at: datetime | None = None,
    ) -> list[Example]:
        """Store ``(key text, draft)`` pairs in one transaction (all or none). A key text the
        tenant already holds an example for (in the same scope) gets the newer answer: a
        correction replaces what it corrects, and importing a file twice stores it once."""
        if source not in EXAMPLE_SOURCES:
            raise InputError(
                f"Unknown example source {source!r}; use {', '.join(EXAMPLE_SOURCES)}."
            )
        for key, _ in drafts:
            if not key.strip():
                raise InputError("An example needs a case input with some text to find it by.")
            if len(key) > MAX_KEY_CHARS:
                raise InputError(
                    f"An example's key text is {len(key):,} characters; keep it under "
                    f"{MAX_KEY_CHARS:,}."
                )
        import numpy as np

        vectors = self._embed([key for key, _ in drafts])  # before the transaction opens
        at = verified_at or datetime.now(UTC)
        owner = owner_for(self.tenant)
        rows = []
        with session_scope(self.engine) as s:
            for (key, draft), vector in zip(drafts, vectors, strict=True):
                scope = self._scope_of(draft.inputs) if self._scope_of else ""
                row = self._same_case(s, owner, key, scope)
                if row is None:
                    row = ExampleRow(app=self.app, owner_id=owner)
                    s.add(row)
                row.key_hash = _key_hash(key, scope)
                row.key_text = key
                row.inputs_json = json.dumps(draft.inputs, ensure_ascii=False, sort_keys=True)
                row.answer_json = json.dumps(draft.answer, ensure_ascii=False, sort_keys=True)
                row.verified_by = verified_by[:200]
                row.verified_at = at
                row.source = source
                row.run_id = draft.run_id
                row.embedding = np.asarray(vector, dtype=np.float32).tobytes()
                rows.append(row)
            s.flush()
            return [_example(r) for r in rows]

    def _same_case(self, s: Session, owner: int | None, key: str, scope: str) -> ExampleRow | None:
        """The tenant's example of this key text in this scope, if any. A row stored before
        its app had scopes carries the key text's hash alone: it is the same case when its
        inputs have the same scope (and takes the scoped hash when it is rewritten)."""
        mine = and_(
            ExampleRow.app == self.app,
            ExampleRow.owner_id.is_(None) if owner is None else ExampleRow.owner_id == owner,
        )
        row: ExampleRow | None = s.scalars(
            select(ExampleRow).where(mine, ExampleRow.key_hash == _key_hash(key, scope))
        ).first()
        if row is not None or not scope or self._scope_of is None:
            return row
        for legacy in s.scalars(
            select(ExampleRow).where(mine, ExampleRow.key_hash == _key_hash(key))
        ):
            if self._scope_of(json.loads(legacy.inputs_json)) == scope:
                return legacy
        return None

    def delete(self, example_id: int) -> Example:
        """Remove one example (and so its effect: the next ``nearest`` cannot return it).
        A tenant deletes only its own; a shared one is the operator's to delete."""
        with session_scope(self.engine) as s:
            row = s.scalars(
                select(ExampleRow).where(ExampleRow.id == example_id, self._visible())
            ).first()
            if row is None:
                raise NotFoundError(
                    f"No {self.app} example {example_id}; list them with `examples list`."
                )
            gone = _example(row)
            deleted = s.execute(
                delete(ExampleRow).where(
                    ExampleRow.id == example_id, writable_by(ExampleRow.owner_id, self.tenant)
                )
            )
            if not getattr(deleted, "rowcount", 0):
                raise PermissionDenied(
                    f"Example {example_id} is shared (the operator's); only the operator "
                    "deletes it."
                )
            return gone

    # ------------------------------------------------------------------ reading
    def get(self, example_id: int) -> Example:
        with session_scope(self.engine) as s:
            row = s.scalars(
                select(ExampleRow).where(ExampleRow.id == example_id, self._visible())
            ).first()
            if row is None:
                raise NotFoundError(
                    f"No {self.app} example {example_id}; list them with `examples list`."
                )
            return _example(row)

    def list(self, *, limit: int = 100, offset: int = 0) -> list[Example]:
        """Newest first."""
        with session_scope(self.engine) as s:
            rows = s.scalars(
                select(ExampleRow)
                .where(self._visible())
                .order_by(ExampleRow.verified_at.desc(), ExampleRow.id.desc())
                .limit(limit)
                .offset(offset)
            ).all()
            return [_example(r) for r in rows]

    def count(self) -> int:
        with session_scope(self.engine) as s:
            return int(s.scalar(select(func.count(ExampleRow.id)).where(self._visible())) or 0)

    def nearest(self, text: str, k: int = 5) -> builtins.list[tuple[Example, float]]:
        """The ``k`` examples whose key text is most similar to ``text`` (cosine of the
        normalised MiniLM vectors, -1..1), most similar first. No example: no embedding."""
        import numpy as np

        with session_scope(self.engine) as s:
            pairs = s.execute(
                select(ExampleRow.id, ExampleRow.embedding).where(self._visible())
            ).all()
        if not pairs or k <= 0:
            return []
        matrix = np.stack([np.frombuffer(v, dtype=np.float32) for _, v in pairs])
        query = np.asarray(self._embed([text])[0], dtype=np.float32)
        sims = matrix @ query
        order = np.argsort(-sims, kind="stable")[:k]
        wanted = {int(pairs[i][0]): float(sims[i]) for i in order}
        with session_scope(self.engine) as s:
            rows = s.scalars(select(ExampleRow).where(ExampleRow.id.in_(wanted))).all()
        found = {r.id: _example(r) for r in rows}  # a row deleted meanwhile drops out
        return [(found[i], round(sim, 4)) for i, sim in wanted.items() if i in found]
