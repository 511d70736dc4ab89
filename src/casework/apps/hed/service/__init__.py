"""What the app's faces (CLI, API, demo, evaluation) call, one module per job: ``schema``
(validate HED strings, with a dataset's definitions, a BIDS sidecar and events file, the
vocabulary), ``annotating`` (one description, also as a stream of the run's events, and with
an image the vision agent describes first), ``batch`` (a CSV, resumable), ``events`` (an
events file's categorical levels into a sidecar) and ``reviews`` (a person's decision). This
package exports them all, so a face imports from ``service`` alone.
"""

from __future__ import annotations

from casework.apps.hed.service.annotating import (
    annotate,
    annotation_input,
    annotation_stream,
    check_request,
    load_annotation_model,
    next_node,
)
from casework.apps.hed.service.batch import BatchTask, check_batch, run_batch
from casework.apps.hed.service.events import annotate_events, check_events_annotation
from casework.apps.hed.service.reviews import decide_review, settled_outcome
from casework.apps.hed.service.schema import (
    VocabularyListing,
    bench_validators,
    read_definitions,
    remediation_hint,
    validate_dataset,
    validate_strings,
    vocabulary_listing,
)
from casework.apps.hed.sidecar import EventsAnnotation
from casework.apps.hed.strategies import STRATEGIES

__all__ = [
    "STRATEGIES",
    "BatchTask",
    "EventsAnnotation",
    "VocabularyListing",
    "annotate",
    "annotate_events",
    "annotation_input",
    "annotation_stream",
    "bench_validators",
    "check_batch",
    "check_events_annotation",
    "check_request",
    "decide_review",
    "load_annotation_model",
    "next_node",
    "read_definitions",
    "remediation_hint",
    "run_batch",
    "settled_outcome",
    "validate_dataset",
    "validate_strings",
    "vocabulary_listing",
]
