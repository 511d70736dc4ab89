"""What the evaluation and the demo take from the service: the owners of the documents they
add, the bundled model's readings per field recorded, and the doors the tenancy attacks
go through."""

from __future__ import annotations

from casework.apps.documents.adversarial import Doors
from casework.apps.documents.agent import run_extraction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.fields import Readings, save_readings, stored_readings
from casework.apps.documents.models import ExtractionDecision, ExtractionInput
from casework.apps.documents.repository import DocumentsRepository
from casework.apps.documents.tools import create_tools
from casework.config import Settings, get_settings
from casework.runtime.context import Caller, Role
from casework.runtime.runconfig import RunConfig

__all__ = ["DEMO_OWNER", "EVAL_OWNER", "record_model_readings", "tenancy_doors"]


EVAL_OWNER = Caller(user_id=-1, name="documents-eval", role=Role.USER)
"""Owner of the documents an evaluation adds: no user has a negative id, so nobody sees them."""
DEMO_OWNER = Caller(user_id=-2, name="documents-demo", role=Role.USER)
"""Owner of the demo's documents, apart from every real user's."""


def record_model_readings(
    readings: list[tuple[str, bool]], settings: Settings, source: str
) -> str | None:
    """Store the bundled model's record per field from (field, right) readings, for the field
    layer; a field these readings do not cover keeps the record in force (the layer stops
    asking for a field it reads badly, so a later run cannot read it again). Returns what was
    stored, in a sentence; None when there was nothing to count."""
    if not readings:
        return None
    fitted = Readings.counted(readings, source)
    merged = {**stored_readings(settings.home).by_field, **fitted.by_field}
    record = Readings(dict(sorted(merged.items())), source)
    path = save_readings(record, settings.home)
    off = [n for n in record.by_field if not record.trusted(n)]
    return (
        f"the model's readings of {len(fitted.by_field)} fields counted ({len(readings)} "
        f"readings); it is not asked for {', '.join(off) if off else 'no field'}; stored: {path}"
    )


def _extraction_on(
    given: ExtractionInput, repo: DocumentsRepository, config: RunConfig
) -> ExtractionDecision:
    """The extraction agent on ``repo`` (no OCR: the attacks' documents carry their text)."""
    deps = DocumentsDeps(repo=repo, settings=get_settings(), ocr=None)  # type: ignore[arg-type]
    return run_extraction(given, deps, config)


def tenancy_doors() -> Doors:
    """The tools and the agent the tenancy attacks (``adversarial``) go through."""
    return Doors(tools=create_tools, agent=_extraction_on)
