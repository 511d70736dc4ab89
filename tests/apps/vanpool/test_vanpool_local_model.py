"""The Shift Specialist end to end on the bundled local model, on one easy case (slow)."""

from __future__ import annotations

import pytest

from casework.apps.vanpool import agent as vp_agent
from casework.apps.vanpool.evalsuite import DATASETS
from casework.evals import load_dataset
from casework.llm import RoleModels
from casework.runtime import RunConfig


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_finds_a_night_worker_in_a_day_group(deps) -> None:
    pytest.importorskip("xllamacpp")
    from casework.llm import resolve_model

    model = resolve_model("local:qwen2.5-coder-1.5b", settings=deps.settings)
    local = RunConfig(models=RoleModels.given(model))
    case = next(
        c
        for c in load_dataset(DATASETS["shift"])
        if c.metadata["scenario_type"] == "night_with_morning_vanpool"
    )
    decision = vp_agent.run_shift_specialist(deps, local, case.inputs["employee_ids"])
    assert decision.run.ended_by == "submit", decision.run.ended_by  # a real decision
    assert decision.run.tool_names[0] == "get_employee_shifts"
    assert decision.verdict == "fail"
    # Not asserted: which employee it names. In the first two measured runs (541 s and 412 s
    # on the shared 2 cores; 2 model calls, ~1,950 prompt tokens) the verdict was right but
    # failed_employees came back empty; the third run (592 s, prompt naming below_rule)
    # passed these assertions, its employee list was not recorded.
