"""LLM-as-judge with a rubric, its own model and a call cap.

The judge answers through a single structured tool call, so it works with any model that
binds tools (including the bundled one). It never raises for a weak answer: a judge that
ran out of calls or could not produce a verdict returns ``None`` and the caller decides.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

__all__ = ["JudgeVerdict", "LLMJudge"]

JUDGE_SYSTEM = """You are a strict evaluator. Score the answer against the rubric.

Rubric:
{rubric}

Call submit_judgement once with a score from 0 to 1 (1 = fully meets the rubric), whether it
passes, and one or two sentences of reasoning."""


class JudgeVerdict(BaseModel):
    """Your judgement of the answer."""

    score: float = Field(ge=0, le=1, description="0 to 1; 1 fully meets the rubric.")
    passed: bool = Field(description="Whether the answer is acceptable.")
    reasoning: str = Field(max_length=600, description="One or two sentences.")


class LLMJudge:
    def __init__(
        self, model: BaseChatModel, rubric: str, *, max_calls: int = 50, pass_threshold: float = 0.5
    ) -> None:
        self.model = model.bind_tools(
            [JudgeVerdict.model_json_schema() | {"title": "submit_judgement"}],
            tool_choice="submit_judgement",
        )
        self.rubric = rubric
        self.max_calls = max_calls
        self.pass_threshold = pass_threshold
        self.calls = 0
        self._lock = threading.Lock()

    def _messages(self, subject: str, answer: str) -> list[Any]:
        return [
            SystemMessage(JUDGE_SYSTEM.format(rubric=self.rubric)),
            HumanMessage(f"Task:\n{subject}\n\nAnswer to judge:\n{answer}"),
        ]

    def _take_call(self) -> bool:
        with self._lock:
            if self.calls >= self.max_calls:
                return False
            self.calls += 1
            return True

    @staticmethod
    def _parse(message: Any) -> JudgeVerdict | None:
        for call in getattr(message, "tool_calls", []) or []:
            try:
                return JudgeVerdict.model_validate(call["args"])
            except ValidationError:
                return None
        return None

    def judge(self, subject: str, answer: str) -> JudgeVerdict | None:
        if not self._take_call():
            return None
        return self._parse(self.model.invoke(self._messages(subject, answer)))

    async def ajudge(self, subject: str, answer: str) -> JudgeVerdict | None:
        if not self._take_call():
            return None
        return self._parse(await self.model.ainvoke(self._messages(subject, answer)))
