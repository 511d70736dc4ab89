"""What a sql example is (``AppSpec.examples``): a question (the key it is found by) and its
verified query (or that it is refused); the evaluation's JSONL cases import as they are."""

from __future__ import annotations

from typing import Any

__all__ = ["EXAMPLES", "QueryExamples"]


class QueryExamples:
    def key_text(self, inputs: dict[str, Any]) -> str:
        question = inputs.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError("a sql example is a question: inputs need a 'question' text")
        return question.strip()

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        sql = expected.get("sql")
        if isinstance(sql, str) and sql.strip():
            return {"sql": sql.strip()}
        if expected.get("refuse") is True or expected.get("verdict") == "REFUSED":
            return {"refuse": True}  # a question verified as one to refuse
        raise ValueError("expected.sql must be the verified query (or expected.refuse true)")


EXAMPLES = QueryExamples()
