"""Strategies: ``run(question, deps, config) -> SQLDecision``, one per compared agent. The question
is a string, or a ``SQLQuestion`` naming the database it is asked of (benchmark cases).

- ``rules``: no model; screening refusals, otherwise the tables a person would start from
  (NEEDS_REVIEW, no SQL): the floor every agent must beat.
- ``keyword`` / ``semantic``: single pass with that retrieval mode.
- ``v1``: ReAct with retrieval and structural validation.
- ``v2``: ``v1`` plus the separate judge and the combined confidence (the spec's agent).
- ``consistency``: execution-guided self-consistency (``consistency.py``): the greedy
  candidate alone when it runs and returns rows, else up to three candidates, the majority on
  their result rows, the agreement as the confidence.
- ``memory``: the query a person verified for a question close enough to this one, on the
  same database, validated and run afresh (read-only); no model call.
- ``cascade`` (the default): the memory, then the screen's refusals, then self-consistency on
  the bundled model (``models.local``, shown the nearest verified questions of the database as
  demonstrations), then, when a remote model is configured (``--model``), ``v2`` on it; the
  first layer sure of its verdict decides, else the best answer goes to a person. Once the
  caller has verified questions, both model layers are less sure of a question far from every
  verified question of its database (``_familiar``), so such questions reach a person and
  become examples.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from casework.apps.sql.agent import (
    refusal_response,
    run_react,
    run_single_pass,
    screen,
)
from casework.apps.sql.consistency import (
    GREEDY_CONFIDENCE,
    SAMPLES,
)
from casework.apps.sql.database import execute_read_only
from casework.apps.sql.decisions import decision_from_response
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.examples import SchemaMemory
from casework.apps.sql.models import (
    ROLES,
    AgentStateV2,
    SQLDecision,
    SQLQueryResponse,
    SQLQuestion,
)
from casework.apps.sql.paraphrase import agreed_recall
from casework.apps.sql.retrieval import retrieve_tables
from casework.apps.sql.strategies.self_consistent import run_self_consistent
from casework.apps.sql.validation import validate_sql
from casework.errors import CaseworkError
from casework.llm.roles import LOCAL_ROLE
from casework.runtime import EndReason, RunConfig, RunResult, Strategy
from casework.runtime.cascade import Cascade, Layer, LayerOutcome
from casework.runtime.memory_layer import (
    MEMORY_SOURCE,
    Demonstration,
    Recall,
    demonstration_evidence,
    demonstrations,
    memory_evidence,
    novelty_confidence,
)
from casework.runtime.usage import Usage
from casework.stores import open_stores

__all__ = [
    "STRATEGIES",
    "cascade",
    "query_memory",
    "run_consistency",
    "run_keyword",
    "run_memory",
    "run_rules",
    "run_semantic",
    "run_v1",
    "run_v2",
]


Question = str | SQLQuestion


def _decided(result: RunResult[SQLQueryResponse]) -> SQLDecision:
    assert result.decision is not None  # every sql run ends with a response
    return decision_from_response(result.decision, result)


def _on(question: Question, deps: SQLDeps) -> tuple[str, SQLDeps]:
    if isinstance(question, str):
        return question, deps
    return question.question, deps.on_database(question.db_url) if question.db_url else deps


def run_rules(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    refusal = screen(deps, question)
    if refusal is not None:
        return decision_from_response(
            refusal_response(question, refusal.reason, strategy="rules", kind=refusal.kind)
        )
    state = AgentStateV2(question=question)
    tables = retrieve_tables(deps.schema, question, deps.config.top_k, mode="keyword")
    state.step("retrieve_tables", mode="keyword", tables=[(t.table, t.score) for t in tables])
    response = SQLQueryResponse(
        question=question,
        query=None,
        explanation="No model: a person should write the query, starting from these tables: "
        + (", ".join(t.table for t in tables) or "none match"),
        confidence=0.0,
        confidence_source="no_answer",
        tables_used=[t.table for t in tables],
        reasoning_steps=state.reasoning_trace,
        strategy="rules",
        ended_by=EndReason.RULES,
    )
    return decision_from_response(response)


def run_keyword(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_single_pass(deps, config, question, "keyword"))


def run_semantic(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_single_pass(deps, config, question, "semantic"))


def run_v1(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_react(deps, config, question, use_judge=False))


def run_v2(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_react(deps, config, question, use_judge=True))


def run_consistency(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """Self-consistency, shown the database's nearest verified questions
    (``deps.config.demonstrations``; recorded as the decision's ``memory`` evidence when the
    model was asked)."""
    question, deps = _on(question, deps)
    found = demonstrations(query_memory(deps, config), question, deps.config.demonstrations)
    shown = _shown(found)
    pairs = [(d.key_text, str(d.answer["sql"])) for d in reversed(shown)]  # nearest last
    decided = _decided(run_self_consistent(deps, config, question, shown=pairs))
    if shown and decided.response.model_calls:
        decided.evidence = [*demonstration_evidence(shown), *decided.evidence]
    return decided


# -- learning from review (issue 32) -----------------------------------------------------
# A question close enough to one a person verified on the same database takes its query, run
# afresh (the ``memory`` layer, first in the cascade); the bundled model sees the nearest
# verified questions of the database as demonstrations.

SQL_MEMORY_THRESHOLD = 90.0
"""The memory layer's threshold until a policy is fitted (see the README's table)."""


def query_memory(deps: SQLDeps, config: RunConfig) -> SchemaMemory:
    """The verified questions of the deps' database, as the run's caller sees them."""
    return SchemaMemory(open_stores(deps.settings).engine, config.caller, deps.schema.name)


def _shown(found: list[Demonstration]) -> list[Demonstration]:
    """The demonstrations a prompt can show: those with a query (a verified refusal has none)."""
    return [d for d in found if isinstance(d.answer.get("sql"), str)]


def _memory_response(question: str, reason: str, **fields: Any) -> SQLQueryResponse:
    values: dict[str, Any] = {
        "query": None,
        "confidence": 0.0,
        "confidence_source": "no_answer",
        "strategy": MEMORY_SOURCE,
        "ended_by": EndReason.RULES,
    }
    return SQLQueryResponse(question=question, explanation=reason[:1200], **(values | fields))


def remembered(
    question: str, deps: SQLDeps, found: Recall | None, doubts: Sequence[str] = ()
) -> SQLDecision:
    """The memory layer's decision on what ``agreed_recall`` found (``doubts``: why the query
    may not answer the question): the verified query validated again and run read-only
    (ANSWERED with its rows), a verified refusal (REFUSED), or NEEDS_REVIEW (nothing near, or
    the query no longer validates or runs). Its confidence is the recall's; it cites them."""
    if found is None or found.answer is None:
        nearest = found.neighbours[0][1] if found and found.neighbours else None
        said = f" (the nearest at {nearest:.2f})" if nearest is not None else ""
        return decision_from_response(
            _memory_response(question, f"No verified question of this database is near{said}.")
        )
    ids = ", ".join(str(e.id) for e, _ in found.used)
    example, similarity = found.used[0]
    source = f"example {ids}: {example.key_text!r} at similarity {similarity:.2f}"
    source += f"; not sure, {doubts[0]}" if doubts else ""
    step: dict[str, Any] = {"step": 1, "kind": "memory", "examples": ids}
    if found.answer.get("refuse"):
        response = refusal_response(
            question,
            f"A person verified this question as one to refuse ({source}).",
            strategy=MEMORY_SOURCE,
            kind="memory",
        )
    else:
        response = _run_remembered(question, deps, str(found.answer["sql"]), source, step)
        if response.valid:
            response.confidence = round(found.confidence / 100, 4)
    decision = decision_from_response(response)
    if decision.verdict != "NEEDS_REVIEW":
        decision.confidence = found.confidence
    decision.evidence = [*memory_evidence(found.used), *decision.evidence]
    return decision


def _run_remembered(
    question: str, deps: SQLDeps, sql: str, source: str, step: dict[str, Any]
) -> SQLQueryResponse:
    """The remembered query, validated against today's schema and run read-only afresh (no
    database: validated only, like every other layer's answer)."""
    checked = validate_sql(sql, deps.schema, dialect=deps.dialect)
    if not checked.valid or checked.transpiled is None:
        reason = checked.errors[0].message if checked.errors else "no query to run"
        return _memory_response(
            question,
            f"The query of {source} does not validate now: {reason}",
            query=sql,
            validation_errors=checked.errors,
            reasoning_steps=[{**step, "error": reason}],
        )
    result = None
    if deps.db_url:
        try:
            result = execute_read_only(
                deps.db_url,
                checked.transpiled,
                max_rows=deps.config.max_rows,
                timeout_seconds=deps.config.timeout_seconds,
            )
        except CaseworkError as exc:
            return _memory_response(
                question,
                f"The query of {source} did not run: {exc}",
                query=sql,
                reasoning_steps=[{**step, "error": str(exc)}],
            )
    return _memory_response(
        question,
        f"The query a person verified for {source}, run afresh.",
        query=sql,
        confidence_source="memory",
        valid=True,
        validation_errors=checked.errors,
        executable_sql=checked.transpiled,
        tables_used=checked.tables,
        result=result,
        reasoning_steps=[{**step, "rows": len(result.rows) if result else None}],
    )


def run_memory(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """Answer from the verified queries of the database the question agrees with
    (``paraphrase.agreed_recall``, ``remembered``); an empty memory answers at once."""
    started = time.perf_counter()
    text, deps = _on(question, deps)
    memory = query_memory(deps, config)
    found, doubts = agreed_recall(memory, text, deps.schema) if memory.count() else (None, [])
    decision = remembered(text, deps, found, doubts)
    decision.response.seconds = round(time.perf_counter() - started, 3)
    if decision.run is not None:
        decision.run.usage = Usage(wall_seconds=decision.response.seconds)
    return decision


# -- the cascade -------------------------------------------------------------------------

CONSISTENCY_THRESHOLD = 60.0
"""Until a policy is fitted: two of three candidates agreeing decide."""


def _screen_layer(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """The screen: a refusal it is sure of (policy, not a guess); anything else passes on."""
    decided = run_rules(question, deps, config)
    if decided.verdict == "REFUSED":
        decided.confidence = 100.0  # sure of the verdict; the answer's own confidence stays 0
    return decided


def _agreement(decided: SQLDecision) -> float:
    """How sure the vote is of the verdict (0-100), from the vote step: a greedy candidate
    that settled alone has ``GREEDY_CONFIDENCE`` (measured, not an agreement); otherwise the
    share of ``SAMPLES`` candidates that agreed."""
    vote = next((s for s in decided.response.reasoning_steps if s.get("kind") == "vote"), None)
    if not vote or not vote.get("asked"):
        return 0.0
    if vote.get("alone"):
        return round(100.0 * GREEDY_CONFIDENCE, 2)
    return round(100.0 * vote.get("agreeing", 0) / SAMPLES, 2)


NOVELTY_NEAR = 0.80
"""A question whose nearest verified question of its database is this similar keeps its model
layer's confidence. Measured with MiniLM on MachineSpider dev (fec4cdd), German questions of
the 13 databases no evaluation of this app uses (789 questions; not ``poker_player``,
``singer``, ``battle_death``, ``concert_singer``, ``pets_1``, ``employee_hire_evaluation``,
``course_teach``): a question's paraphrase (the same gold query) is at 0.58 / 0.69 / 0.79 /
0.87 / 0.91 (10th / 25th / 50th / 75th / 90th percentile), the nearest of the up to 6 earlier
questions of the database with another query at 0.39 / 0.46 / 0.58 / 0.69 / 0.81; 0.80 is
about the paraphrases' median and the others' 90th percentile. English questions sit higher
(paraphrase 0.75 / 0.81 / 0.86 / 0.91 / 0.94, others 0.40 / 0.54 / 0.65 / 0.76 / 0.86): the
German values are the ones MiniLM, an English model, needs for German questions to be near."""
NOVELTY_FAR = 0.58
"""At or below this (the median nearest of the up to 6 earlier German questions of the
database with another query, above) a question is unlike every verified one of its database:
its model layer keeps ``NOVELTY_FLOOR`` of its confidence. A greedy answer (67) reaches a
person below a nearest of about 0.75, a unanimous vote (100) below about 0.62."""
NO_EXAMPLE = -1.0
"""The nearest similarity of a question whose database has no verified question (the caller
has others): as far as it gets."""


def _nearest(question: Question, deps: SQLDeps, config: RunConfig) -> float | None:
    """The similarity of the question's nearest verified question of its database (its
    ``SchemaMemory``); None when the caller has no verified sql question at all, and
    ``NO_EXAMPLE`` when it has some, but none of this database."""
    text, deps = _on(question, deps)
    memory = query_memory(deps, config)
    if memory.count() == 0:
        return None
    found = memory.nearest(text, 1)
    return found[0][1] if found else NO_EXAMPLE


def _familiar(
    decided: SQLDecision, question: Question, deps: SQLDeps, config: RunConfig
) -> SQLDecision:
    """A model layer's decision, less sure when the caller has verified questions and none of
    the question's database is near it (``novelty_confidence`` with sql's ``NOVELTY_NEAR`` and
    ``NOVELTY_FAR``): a database's early questions reach a person and become the examples its
    later paraphrases are answered from (``run_memory``).

    A caller without any verified sql question keeps the layer's confidence (the runtime's
    convention: the cascade behaves as before until someone reviews). A caller with verified
    questions, none of them of this database, gets the floor: a verified query is evidence only
    for its own database (``SchemaMemory``), so another database's questions say nothing about
    this one, and its first questions are the ones a person should see. (``SchemaMemory`` looks
    at the 100 nearest examples of every database: one of this database further down counts as
    none, which is less similar than 100 others.)"""
    nearest = _nearest(question, deps, config)
    scaled = novelty_confidence(decided.confidence, nearest, near=NOVELTY_NEAR, far=NOVELTY_FAR)
    if nearest is None or scaled == decided.confidence:
        return decided
    where = (
        f"the nearest verified question of this database is at similarity {nearest:.2f}"
        if nearest != NO_EXAMPLE
        else "no question of this database has been verified"
    )
    said = f" Confidence {decided.confidence:g} -> {scaled:g}: {where}."
    decided.reasoning = (decided.reasoning + said)[:1200]
    decided.confidence = scaled
    return decided


def _local_consistency(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """Self-consistency on the bundled (``local``) model (its prompt shows the database's
    nearest verified questions); the decision's confidence is the candidates' agreement on its
    verdict (a refusal's answer confidence stays capped), as sure as the question is familiar
    (``_familiar``)."""
    on_local = replace(config, models=config.models.routed({ROLES["agent"]: LOCAL_ROLE}))
    decided = run_consistency(question, deps, on_local)
    decided.confidence = _agreement(decided)
    return _familiar(decided, question, deps, config)


def _remote_agent(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """``v2`` on the remote model, as sure as the question is familiar (``_familiar``)."""
    return _familiar(run_v2(question, deps, config), question, deps, config)


def _no_answer(said: str, outcomes: list[LayerOutcome]) -> SQLDecision:
    """No layer answered at all: an empty answer goes to a person."""
    question = outcomes[0].output.get("response", {}).get("question", "") if outcomes else ""
    response = SQLQueryResponse(
        question=question,
        query=None,
        explanation=f"No layer could answer: {said}."[:1200],
        confidence=0.0,
        confidence_source="no_answer",
        strategy="cascade",
        ended_by=EndReason.NO_DECISION,
    )
    return decision_from_response(response)


cascade: Cascade[SQLDecision] = Cascade(
    "sql",
    [
        Layer(MEMORY_SOURCE, run_memory, default_threshold=SQL_MEMORY_THRESHOLD),
        Layer("rules", _screen_layer, default_threshold=100.0),
        Layer("consistency", _local_consistency, default_threshold=CONSISTENCY_THRESHOLD),
        Layer("agent", _remote_agent, default_threshold=CONSISTENCY_THRESHOLD, remote=True),
    ],
    decision=SQLDecision,
    role=ROLES["agent"],
    no_answer=_no_answer,
)


STRATEGIES: dict[str, Strategy[Question, SQLDeps]] = {
    "rules": run_rules,
    "keyword": run_keyword,
    "semantic": run_semantic,
    "v1": run_v1,
    "v2": run_v2,
    "consistency": run_consistency,
    "memory": run_memory,
    "cascade": cascade,
}
