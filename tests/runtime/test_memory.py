"""The memory of verified answers (SQLite; one PostgreSQL test) and its two uses: the memory
layer and the demonstrations. Most tests embed with a small bag-of-words embedder, so the
similarities are exact and pinned; one test uses the bundled MiniLM."""

from __future__ import annotations

import hashlib
import math

import pytest

from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller, PermissionDenied, Role
from casework.runtime.decision import Decision
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import (
    demonstrations,
    examples_used,
    memory_layer,
    recall,
    recall_confidence,
)
from casework.runtime.runconfig import RunConfig
from casework.stores import open_stores

DIM = 64


def words(texts: list[str]) -> list[list[float]]:
    """Normalised bag of words hashed into DIM buckets: texts sharing words are similar."""
    out = []
    for text in texts:
        v = [0.0] * DIM
        for w in text.lower().split():
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        out.append([x / n for x in v])
    return out


ANA = Caller(7, "ana", Role.REVIEWER)
BOB = Caller(8, "bob", Role.REVIEWER)


@pytest.fixture
def engine(settings):
    return open_stores(settings).engine


def mem(engine, tenant=None, app="toy") -> Memory:
    return Memory(engine, app, tenant, embedder=words)


def add(m: Memory, text: str, label: str, by: str = "ana"):
    return m.add(text, {"text": text}, {"label": label}, verified_by=by, source="import")


def test_add_get_list_delete_and_nearest(engine) -> None:
    m = mem(engine)
    a = add(m, "the van was late again", "late")
    b = add(m, "please update my home address", "update")
    assert m.get(a.id).answer == {"label": "late"} and m.get(a.id).verified_by == "ana"
    assert [e.id for e in m.list()] == [b.id, a.id]  # newest first
    assert len(a.embedding) == DIM
    (first, sim), _ = m.nearest("the van was late again", k=2)
    assert first.id == a.id and sim == pytest.approx(1.0, abs=1e-4)
    m.delete(a.id)
    assert [e.id for e, _ in m.nearest("the van was late again", k=5)] == [b.id]
    with pytest.raises(NotFoundError, match=f"No toy example {a.id}"):
        m.get(a.id)
    with pytest.raises(NotFoundError):
        m.delete(a.id)


def test_the_same_key_text_is_corrected_not_duplicated(engine) -> None:
    m = mem(engine)
    first = add(m, "is the van on time", "question")
    again = add(m, "is the van on time", "escalation", by="bo")
    assert again.id == first.id and m.count() == 1
    assert m.get(first.id).answer == {"label": "escalation"} and m.get(first.id).verified_by == "bo"


def test_the_same_key_text_in_another_scope_is_another_example(engine) -> None:
    by_db = Memory(engine, "toy", embedder=words, scope_of=lambda inputs: inputs.get("db", ""))

    def ask(db: str, sql: str):
        q = "how many singers are there"
        return by_db.add(q, {"q": q, "db": db}, {"sql": sql}, verified_by="ana", source="api")

    concerts = ask("concerts", "SELECT COUNT(*) FROM singer")
    choirs = ask("choirs", "SELECT COUNT(*) FROM member")
    assert choirs.id != concerts.id and by_db.count() == 2
    corrected = ask("concerts", "SELECT COUNT(*) FROM singers")
    assert corrected.id == concerts.id and by_db.count() == 2
    assert by_db.get(choirs.id).answer == {"sql": "SELECT COUNT(*) FROM member"}


def test_a_row_stored_before_its_app_had_scopes_is_still_corrected(engine) -> None:
    q = "how many singers are there"
    unscoped = mem(engine).add(
        q, {"q": q, "db": "concerts"}, {"sql": "old"}, verified_by="ana", source="api"
    )
    by_db = Memory(engine, "toy", embedder=words, scope_of=lambda inputs: inputs.get("db", ""))
    other = by_db.add(q, {"q": q, "db": "choirs"}, {"sql": "x"}, verified_by="ana", source="api")
    fixed = by_db.add(q, {"q": q, "db": "concerts"}, {"sql": "new"}, verified_by="bo", source="api")
    assert other.id != unscoped.id and fixed.id == unscoped.id and by_db.count() == 2
    assert by_db.get(unscoped.id).answer == {"sql": "new"}


def test_a_deleted_examples_id_is_never_given_again(engine) -> None:
    m = mem(engine)
    add(m, "the van was late again", "late")
    last = add(m, "please update my home address", "update")
    m.delete(last.id)
    assert add(m, "is the van on time", "question").id == last.id + 1


def test_add_many_stores_all_or_nothing(engine) -> None:
    m = mem(engine)
    with pytest.raises(InputError, match="needs a case input with some text"):
        m.add_many(
            [
                ("fine text", _draft("fine text")),
                ("   ", _draft("   ")),
            ],
            verified_by="ana",
            source="import",
        )
    assert m.count() == 0


def _draft(text: str):
    from casework.runtime.memory import ExampleDraft

    return ExampleDraft({"text": text}, {"label": "x"})


def test_examples_are_tenant_scoped_and_per_app(engine) -> None:
    shared = add(mem(engine), "shared example text", "a")
    ana = add(mem(engine, ANA), "ana example text", "b")
    add(mem(engine, app="other"), "other app text", "c")
    assert {e.id for e in mem(engine, ANA).list()} == {shared.id, ana.id}
    assert {e.id for e in mem(engine, BOB).list()} == {shared.id}
    assert {e.id for e, _ in mem(engine, BOB).nearest("ana example text", k=5)} == {shared.id}
    with pytest.raises(NotFoundError):
        mem(engine, BOB).get(ana.id)
    with pytest.raises(PermissionDenied, match="shared"):
        mem(engine, ANA).delete(shared.id)
    assert mem(engine).count() == 2  # the operator sees every row of the app, not the other app
    mem(engine).delete(ana.id)  # and deletes any
    assert mem(engine, ANA).count() == 1


def test_confidence_is_lower_with_few_near_examples() -> None:
    assert recall_confidence(1.0, 1, 1.0) == 100.0
    assert recall_confidence(0.9, 1, 1.0) == 80.0
    assert recall_confidence(0.9, 4, 1.0) == 87.5
    assert recall_confidence(0.9, 4, 0.5) == 43.75
    assert recall_confidence(0.4, 1, 1.0) == 0.0


def test_recall_votes_and_an_exact_repeat_outweighs_loose_neighbours(engine) -> None:
    m = mem(engine)
    exact = add(m, "my shift moved to nights", "update")
    add(m, "my shift moved to days", "question")
    add(m, "the shift moved to days", "question")
    found = recall(m, "my shift moved to nights", near=0.5)
    assert found.answer == {"label": "update"}
    assert [e.id for e, _ in found.used] == [exact.id]
    assert found.confidence == pytest.approx(94.28)  # the loose neighbours weigh 6 %
    assert recall(m, "completely unrelated words here").answer is None


def _decide(answer, confidence, reasoning) -> Decision:
    if answer is None:
        return Decision(verdict="NEEDS_REVIEW", confidence=0, reasoning=reasoning)
    return Decision(verdict=answer["label"], confidence=confidence, reasoning=reasoning)


def test_the_memory_layer_cites_its_examples_and_deleting_one_removes_its_answer(engine) -> None:
    m = mem(engine)
    layer = memory_layer(lambda deps, config: m, lambda text: text, _decide)
    config = RunConfig(models=None)  # type: ignore[arg-type]  # the layer asks no model
    assert layer("the van is always late", None, config).verdict == "NEEDS_REVIEW"
    e = add(m, "the van is always late", "escalation")
    decided = layer("the van is always late", None, config)
    assert (decided.verdict, decided.confidence) == ("escalation", 100.0)
    assert examples_used(decided) == [e.id] and decided.run is not None
    assert decided.run.strategy == "memory" and "verified example" in decided.reasoning
    m.delete(e.id)
    assert layer("the van is always late", None, config).verdict == "NEEDS_REVIEW"


def test_demonstrations_are_the_most_similar_first_and_cost_nothing_when_empty(engine) -> None:
    calls: list[list[str]] = []

    def counting(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return words(texts)

    m = Memory(engine, "toy", embedder=counting)
    assert demonstrations(m, "anything", 3) == [] and calls == []
    add(m, "van late again today", "late")
    add(m, "address changed last week", "update")
    add(m, "van late", "late")
    shown = demonstrations(m, "van late again", 2)
    assert [d.key_text for d in shown] == ["van late again today", "van late"]
    assert shown[0].similarity >= shown[1].similarity


def test_minilm_finds_a_paraphrase_nearest(settings) -> None:
    m = Memory(open_stores(settings).engine, "toy")
    add(m, "I moved to a new apartment in Oakland last month.", "update")
    add(m, "Which schedule did you compare my shift with?", "question")
    (first, sim), (_, other) = m.nearest("We relocated to a different flat in Oakland.", k=2)
    assert first.answer == {"label": "update"} and sim > other and sim > 0.5


@pytest.mark.slow
@pytest.mark.postgres
def test_memory_on_postgres(settings) -> None:
    from pg import PostgresServer

    server = PostgresServer()
    try:
        m = Memory(open_stores(settings, db_url=server.start()).engine, "toy", embedder=words)
        e = add(m, "the van was late again", "late")
        add(mem(m.engine, ANA), "ana only text", "b")
        assert m.get(e.id).answer == {"label": "late"} and m.count() == 2
        assert mem(m.engine, BOB).count() == 1
        assert m.nearest("the van was late again", k=1)[0][0].id == e.id
        m.delete(e.id)
        assert all(x.id != e.id for x, _ in m.nearest("the van was late again", k=5))
    finally:
        server.stop()
