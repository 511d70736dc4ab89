"""What a hed example is (``AppSpec.examples``): an event description (the key it is found by)
and its verified HED annotation; the evaluation's JSONL cases import as they are."""

from __future__ import annotations

from typing import Any

__all__ = ["EXAMPLES", "AnnotationExamples"]


class AnnotationExamples:
    def key_text(self, inputs: dict[str, Any]) -> str:
        description = inputs.get("description")
        if not isinstance(description, str) or not description.strip():
            raise ValueError("a hed example is an event: inputs need a 'description' text")
        return description.strip()

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        hed = expected.get("hed")
        if not isinstance(hed, str) or not hed.strip():
            raise ValueError("expected.hed must be the verified HED annotation")
        return {"hed": hed.strip()}


EXAMPLES = AnnotationExamples()
