"""Receipts, learning from review: the examples hook, the memory layer first in the cascade,
verified words as the choice layer's demonstrations, an inbox decision becoming an example,
and deleting an example restoring the answer it changed. Scripted models; the examples are
embedded with the bundled MiniLM. Every test writes to a fresh store (``small``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from casework.apps.receipts.classify import NONE_LABEL, SIMILAR_SHOWN
from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.labels import resolve_input
from casework.apps.receipts.memory import EXAMPLES, label_memory, word_inputs, word_kind
from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelInput, ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.review import ReceiptsReview
from casework.apps.receipts.strategies import cascade, choice
from casework.examples import learn_from_review, memory_for
from casework.llm import RoleModels
from casework.llm.choice import ScriptedChooser
from casework.llm.local import LocalChatModel
from casework.llm.roles import LOCAL_ROLE
from casework.runtime import RunConfig
from casework.runtime.context import Caller, Role
from casework.runtime.memory_layer import examples_used

ANA = Caller(1, "ana", Role.REVIEWER)
# bluebottle line 7 word 1 is the date "05/02/2026"
DATE_WORD = LabelInput(receipt="bluebottle", line_id=7, word_id=1, suggested_label="DATE")
DATE_AS_TIME = LabelInput(receipt="bluebottle", line_id=7, word_id=1, suggested_label="TIME")


def _scores(winner: str, p: float = 0.9) -> dict[str, float]:
    options = [*LABEL_DEFINITIONS, NONE_LABEL]
    rest = (1 - p) / (len(options) - 1)
    return {o: math.log(p if o == winner else rest) for o in options}


def _config(chooser: ScriptedChooser) -> RunConfig:
    def models(role: str) -> Any:
        if role == "specialist":  # the bundled model: no remote layer (never asked here)
            return LocalChatModel(model_path=Path("/nonexistent.gguf"))
        assert role == LOCAL_ROLE, f"role {role!r} was not expected"
        return chooser

    return RunConfig(models=RoleModels.given(models))


def _verify(deps: ReceiptsDeps, input: LabelInput, answer: dict[str, str]) -> int:
    inputs = word_inputs(deps, resolve_input(deps, input))
    memory = label_memory(deps, _config(ScriptedChooser()))
    key = EXAMPLES.key_text(inputs)
    return memory.add(key, inputs, answer, verified_by="ana", source="api").id


def test_an_example_is_the_word_its_merchant_and_line_and_its_right_label() -> None:
    inputs = {"word": "25.25", "merchant": "In-N-Out Burger", "line": "SUBTOTAL 25.25"}
    assert EXAMPLES.key_text(inputs) == "In-N-Out Burger | SUBTOTAL [25.25] | 25.25"
    assert EXAMPLES.key_text({"word": "25.25"}) == "unknown merchant | 25.25"
    assert EXAMPLES.answer_of({"verdict": "INVALID", "gold_label": "SUBTOTAL"}) == {
        "label": "SUBTOTAL"
    }
    assert EXAMPLES.answer_of({"verdict": "INVALID", "not_label": "tax"}) == {"not": "TAX"}
    # the unit price and the line total, the same number side by side: told apart by place
    price = {"word": "1.32", "merchant": "Vons", "line": "BANANAS 1.32 1.32 S", "word_id": 2}
    total = {**price, "word_id": 3}
    assert EXAMPLES.key_text(price) == "Vons | BANANAS [1.32] 1.32 S | 1.32"
    assert EXAMPLES.key_text(total) == "Vons | BANANAS 1.32 [1.32] S | 1.32"
    assert (word_kind(price), word_kind(total)) == (("amount", 2), ("amount", 1))
    assert word_kind({**price, "word": "BANANAS", "word_id": 1}) == ("alpha", None)
    with pytest.raises(ValueError, match="inputs need its 'word'"):
        EXAMPLES.key_text({"merchant": "Vons"})
    with pytest.raises(ValueError, match="gold_label must be the word's right label"):
        EXAMPLES.answer_of({"verdict": "VALID"})


def test_a_repeated_word_at_a_known_merchant_is_answered_from_memory_with_no_model_call(
    small: ReceiptsDeps,
) -> None:
    example = _verify(small, DATE_WORD, {"label": "DATE"})
    chooser = ScriptedChooser()  # fails if asked
    as_time = cascade(DATE_AS_TIME, small, _config(chooser))
    as_date = cascade(DATE_WORD, small, _config(chooser))
    assert (as_time.verdict, as_date.verdict) == ("INVALID", "VALID")
    for decision in (as_time, as_date):
        assert decision.run is not None and decision.run.decided_by == "memory"
        assert [o.layer for o in decision.run.layers] == ["memory"]
        assert decision.confidence == 100.0 and examples_used(decision) == [example]
        assert decision.run.usage.model_calls == 0
    assert chooser.calls == []
    assert f"example(s) {example} of words like '05/02/2026' say DATE" in as_time.reasoning


def test_deleting_an_example_restores_the_answer_it_changed(small: ReceiptsDeps) -> None:
    config = _config(ScriptedChooser(_scores("DATE"), repeat=True))
    before = cascade(DATE_WORD, small, config)
    wrong = _verify(small, DATE_WORD, {"label": "TIME"})  # a reviewer's mistake
    misled = cascade(DATE_WORD, small, config)
    assert before.verdict == "VALID" and misled.verdict == "INVALID"
    assert misled.run is not None and misled.run.decided_by == "memory"
    label_memory(small, config).delete(wrong)
    after = cascade(DATE_WORD, small, config)
    assert (after.verdict, after.confidence) == (before.verdict, before.confidence)
    assert after.run is not None and before.run is not None
    assert after.run.decided_by == before.run.decided_by != "memory"
    assert examples_used(after) == []


def test_a_rejection_settles_only_the_label_it_rejected(small: ReceiptsDeps) -> None:
    _verify(small, DATE_WORD, {"not": "TIME"})
    chooser = ScriptedChooser(_scores("DATE"), repeat=True)
    rejected = cascade(DATE_AS_TIME, small, _config(chooser))
    assert rejected.verdict == "INVALID" and rejected.run is not None
    assert rejected.run.decided_by == "memory"
    other = cascade(DATE_WORD, small, _config(chooser))
    assert other.run is not None and other.run.layers[0].layer == "memory"
    assert other.run.decided_by != "memory"


def test_verified_words_come_first_in_the_choice_prompt_without_lengthening_it(
    small: ReceiptsDeps,
) -> None:
    near = _verify(small, DATE_WORD, {"label": "DATE"})
    # a verified word of another receipt, not near enough to the date to be shown
    far = _verify(
        small,
        LabelInput(receipt="chevron", line_id=1, word_id=1, suggested_label="MERCHANT_NAME"),
        {"label": "MERCHANT_NAME"},
    )
    chooser = ScriptedChooser(_scores("DATE"))
    decision = choice(DATE_WORD, small, _config(chooser))
    asked = str(chooser.calls[0][0][1].content)
    shown = asked.split("Similar words on other receipts and their labels:\n")[1].splitlines()
    shown = [line for line in shown if " -> " in line]
    assert len(shown) == SIMILAR_SHOWN
    assert shown[0] == "  '05/02/2026' on '05/02/2026 9:41 AM' -> DATE (verified)"
    assert sum("(verified)" in line for line in shown) == 1
    assert examples_used(decision) == [near] and far not in examples_used(decision)
    assert decision.evidence[0].fields["shown"] is True


def test_an_inbox_decision_becomes_an_example_through_the_shared_path(
    small: ReceiptsDeps,
) -> None:
    rid = small.repo.resolve_receipt("chevron").id
    words = {(w.line_id, w.word_id): w for w in small.repo.words(rid)}
    items = []
    for key, label in (((9, 3), "GRAND_TOTAL"), ((8, 1), "UNIT_PRICE")):
        [old] = small.repo.labels_for_word(words[key].id)
        items += small.repo.append_labels(
            [
                LabelChange(
                    word_pk=old.word_pk,
                    label_type=label,
                    status=ValidationStatus.NEEDS_REVIEW,
                    proposed_by="harmonizer",
                    consolidated_from_id=old.id,
                )
            ]
        )
    review = ReceiptsReview(small.settings, deps=small)
    accepted = review.decide(str(items[0].id), "approve", note="", edit=None, caller=ANA)
    rejected = review.decide(str(items[1].id), "reject", note="", edit=None, caller=ANA)
    assert accepted.example is not None and rejected.example is not None
    assert accepted.example.answer == {"label": "GRAND_TOTAL"}
    assert rejected.example.answer == {"not": "UNIT_PRICE"}
    assert accepted.example.inputs["merchant"] == "Chevron"
    assert accepted.example.inputs["line"] and accepted.example.inputs["word"]
    stored = [learn_from_review(small.settings, "receipts", o, ANA) for o in (accepted, rejected)]
    memory = memory_for(small.settings, "receipts", ANA)
    assert memory.count() == 2 and all(e is not None for e in stored)
    assert {e.source for e in memory.list()} == {"review"}


def test_the_eval_jsonl_imports_as_examples(settings, tmp_path: Path, capsys) -> None:
    from casework import cli

    line = {
        "id": "c1",
        "inputs": {"word": "TOTAL", "merchant": "Vons", "line": "BALANCE TOTAL 12.00"},
        "expected": {"verdict": "INVALID", "gold_label": "GRAND_TOTAL"},
    }
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(line) + "\n", encoding="utf-8")
    cli.main(["receipts", "examples", "import", str(cases), "--json"])  # exits only on error
    [stored] = json.loads(capsys.readouterr().out)
    assert stored["key_text"] == "Vons | BALANCE [TOTAL] 12.00 | TOTAL"
    assert stored["answer"] == {"label": "GRAND_TOTAL"} and stored["source"] == "import"
    assert memory_for(settings, "receipts", None).count() == 1


def test_a_word_of_another_shape_on_the_same_line_is_no_evidence(small: ReceiptsDeps) -> None:
    # "9:41" sits on the date's line: alike as key text, but a time is no evidence for a date
    the_time = LabelInput(receipt="bluebottle", line_id=7, word_id=2, suggested_label="TIME")
    assert resolve_input(small, the_time).word_text == "9:41"
    _verify(small, the_time, {"label": "TIME"})
    decision = cascade(DATE_AS_TIME, small, _config(ScriptedChooser(_scores("DATE"), repeat=True)))
    assert decision.run is not None and decision.run.decided_by != "memory"
    assert decision.run.layers[0].layer == "memory" and examples_used(decision) == []


@pytest.mark.slow
@pytest.mark.local_model
def test_the_bundled_model_chooses_with_a_verified_word_in_its_prompt(small: ReceiptsDeps) -> None:
    pytest.importorskip("xllamacpp")
    example = _verify(small, DATE_WORD, {"label": "DATE"})
    config = RunConfig.of(small.settings)
    decision = choice(DATE_AS_TIME, small, config)
    assert decision.raw_verdict == "INVALID" and examples_used(decision) == [example]
    probabilities = decision.evidence[-1].fields
    assert max(probabilities, key=probabilities.get) == "DATE"
    assert decision.run is not None and decision.run.model == "local:qwen2.5-coder-1.5b"


def test_a_learn_run_on_your_receipts_reads_them_and_keeps_its_examples_apart(
    small: ReceiptsDeps, tmp_path: Path
) -> None:
    from casework.apps.receipts.evalsuite import _Store

    store = _Store()
    assert store.cases(small.settings, {"receipts": ["chevron"]})
    own = small.settings.model_copy(
        update={"database_url": f"sqlite:///{(tmp_path / 'own.db').as_posix()}"}
    )
    deps = store.deps(own)
    assert deps.repo.resolve_receipt("chevron").merchant_name == "Chevron"
    memory = label_memory(deps, _config(ScriptedChooser()))
    assert str(memory.engine.url) == own.db_url != small.settings.db_url
