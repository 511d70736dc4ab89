"""The separate judge: its own model (the ``judge`` role), its own instructions with the
spec's rubric, answering ``LLMJudgeOutput`` through one structured tool call."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import ValidationError

from casework.apps.sql.models import DatabaseSchema, LLMJudgeOutput
from casework.apps.sql.retrieval import describe_table
from casework.errors import ModelError
from casework.runtime.prompts import load_prompt

__all__ = ["JUDGE_TOOL", "PROMPTS", "SQLJudge"]

JUDGE_TOOL = "submit_evaluation"
PROMPTS = "casework.apps.sql"
"""The package whose ``prompts/`` folder holds the app's prompt files."""


class SQLJudge:
    """Scores whether a query answers a question; never sees the agent's conversation."""

    def __init__(self, model: BaseChatModel, schema: DatabaseSchema) -> None:
        self.model = model.bind_tools(
            [LLMJudgeOutput.model_json_schema() | {"title": JUDGE_TOOL}], tool_choice=JUDGE_TOOL
        )
        self.schema = schema
        self.system = load_prompt(PROMPTS, "judge")

    def messages(self, question: str, query: str, tables: list[str]) -> list:
        specs = [self.schema.table(t) for t in tables]
        described = "\n".join(describe_table(t) for t in specs if t is not None) or "(none)"
        task = load_prompt(PROMPTS, "judge_task", question=question, query=query, tables=described)
        return [SystemMessage(self.system), HumanMessage(task)]

    def evaluate(self, question: str, query: str, tables: list[str]) -> LLMJudgeOutput | None:
        """The judge's evaluation, or None when its answer is unusable."""
        try:
            reply = self.model.invoke(self.messages(question, query, tables))
        except ModelError:
            return None
        for call in getattr(reply, "tool_calls", None) or []:
            try:
                return LLMJudgeOutput.model_validate(call["args"])
            except ValidationError:
                return None
        return None
