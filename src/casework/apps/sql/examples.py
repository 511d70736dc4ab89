"""What a sql example is (``AppSpec.examples``): a question (the key it is found by), the
database it was asked of (``inputs.schema``, the schema's name: a review item's database, or a
benchmark's ``db_id``), and its verified query (or that it is refused); the evaluation's JSONL
cases import as they are.

A verified query is only evidence for the database it was verified on: ``SchemaMemory`` is
the app's memory narrowed to one database (an example naming no database counts for every
one: its query is validated and run afresh before it answers anything)."""

from __future__ import annotations

import builtins
from typing import Any

from sqlalchemy import Engine

from casework.runtime.context import Caller
from casework.runtime.memory import Example, Memory

__all__ = ["EXAMPLES", "MEMORY_WINDOW", "QueryExamples", "SchemaMemory", "example_schema"]

MEMORY_WINDOW = 100
"""How many nearest examples of every database are looked at before keeping one database's:
an example of this database further down than that is less similar than 100 others."""


def example_schema(inputs: dict[str, Any]) -> str | None:
    """The database an example was verified on (``schema``, else a benchmark's ``db_id``)."""
    name = inputs.get("schema") or inputs.get("db_id")
    return str(name) if name else None


class QueryExamples:
    def key_text(self, inputs: dict[str, Any]) -> str:
        question = inputs.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError("a sql example is a question: inputs need a 'question' text")
        return question.strip()

    def scope(self, inputs: dict[str, Any]) -> str:
        """The same question asked of two databases is two examples."""
        return example_schema(inputs) or ""

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        from casework.apps.sql.validation import write_keywords

        sql = expected.get("sql")
        if isinstance(sql, str) and sql.strip():
            if writes := write_keywords(sql):
                raise ValueError(
                    f"expected.sql writes ({', '.join(writes)}); a verified query only reads "
                    "(SELECT, or WITH ... SELECT)"
                )
            return {"sql": sql.strip()}
        if expected.get("refuse") is True or expected.get("verdict") == "REFUSED":
            return {"refuse": True}  # a question verified as one to refuse
        raise ValueError("expected.sql must be the verified query (or expected.refuse true)")


EXAMPLES = QueryExamples()


class SchemaMemory(Memory):
    """The sql examples verified on one database (``schema``: its name), as ``tenant`` sees
    them; ``nearest`` leaves the other databases' out."""

    def __init__(self, engine: Engine, tenant: Caller | None, schema: str, **kw: Any) -> None:
        super().__init__(engine, "sql", tenant, **kw)
        self.schema = schema

    def nearest(self, text: str, k: int = 5) -> builtins.list[tuple[Example, float]]:
        found = super().nearest(text, max(k, MEMORY_WINDOW))
        return [(e, s) for e, s in found if example_schema(e.inputs) in (None, self.schema)][:k]
