"""What the app's faces (CLI, API, review, demo, evaluation) call, one module per job:
``files`` (adding files, reading one's text), ``runs`` (starting recorded runs: extractions
and corrections; following them; opening the deps, which closes the runs a dead process left
open), ``failed`` (a person's decision on a failed extraction), ``stack_builds`` (stacks,
their table built as a recorded run, their export) and ``evaluation`` (what the evaluation
and the demo take). This package exports them all, so a face imports from ``service`` alone.
"""

from __future__ import annotations

from casework.apps.documents.ocr import boxes_to_text
from casework.apps.documents.service.evaluation import (
    DEMO_OWNER,
    EVAL_OWNER,
    record_model_readings,
    tenancy_doors,
)
from casework.apps.documents.service.failed import (
    decide_failed_extraction,
    extraction_owner,
    settled_review,
)
from casework.apps.documents.service.files import (
    ENGINE_NAMES,
    add_file,
    add_files,
    ocr_engine,
    read_file,
)
from casework.apps.documents.service.runs import (
    build_deps,
    follow_run,
    recover_stale_runs,
    start_correction,
    start_extraction,
)
from casework.apps.documents.service.stack_builds import (
    add_to_stack,
    create_stack,
    run_stack_build,
    stack_csv,
    start_stack_build,
)
from casework.apps.documents.strategies import STRATEGIES

__all__ = [
    "DEMO_OWNER",
    "ENGINE_NAMES",
    "EVAL_OWNER",
    "STRATEGIES",
    "add_file",
    "add_files",
    "add_to_stack",
    "boxes_to_text",
    "build_deps",
    "create_stack",
    "decide_failed_extraction",
    "extraction_owner",
    "follow_run",
    "ocr_engine",
    "read_file",
    "record_model_readings",
    "recover_stale_runs",
    "run_stack_build",
    "settled_review",
    "stack_csv",
    "start_correction",
    "start_extraction",
    "start_stack_build",
    "tenancy_doors",
]
