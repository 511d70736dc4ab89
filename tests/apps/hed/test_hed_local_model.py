"""One annotation end to end with the bundled local model (slow: 937 s once on 2 cores shared
with three other local-model runs; about a minute on a quiet machine)."""

from __future__ import annotations

import pytest

from casework.apps.hed.deps import build_deps
from casework.apps.hed.models import HedInput
from casework.apps.hed.service import annotate
from casework.apps.hed.validation import validate
from casework.runtime import RunConfig


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_annotates_an_easy_event(settings) -> None:
    pytest.importorskip("xllamacpp")
    deps = build_deps(settings)
    d = annotate(
        HedInput(description="A red circle appears on the screen."),
        deps,
        RunConfig.of(settings, "local:qwen2.5-coder-1.5b"),
        strategy="loop-no-eval",
    )
    assert d.run.ended_by in ("submit", "limit:model_calls"), d.run.detail
    assert d.run.model == "local:qwen2.5-coder-1.5b" and d.run.usage.input_tokens > 0
    assert 1 <= d.validation_attempts <= 5 and d.total_iterations == d.validation_attempts
    # Whatever the model wrote, the verdict is the validators' verdict on it.
    assert d.is_valid == validate(d.annotation, validator="python").valid
    assert d.is_valid, d.validation_errors  # an easy event: valid within five attempts
    assert "red" in d.annotation.lower() and "circle" in d.annotation.lower()
    assert len(deps.repo.recent()) == 1


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_writes_only_schema_tags_under_the_grammar(settings) -> None:
    """The grammar makes the first answer use tags that exist: valid on the first try."""
    pytest.importorskip("xllamacpp")
    from casework.apps.hed.rules import flatten_tags
    from casework.apps.hed.vocabulary import load_vocabulary

    deps = build_deps(settings, with_repo=False)
    d = annotate(
        HedInput(description="A checkerboard pattern fills the screen."),
        deps,
        RunConfig.of(settings, "local:qwen2.5-coder-1.5b"),
        strategy="one-shot",
    )
    vocab = load_vocabulary("8.3.0")
    tags = flatten_tags(d.annotation)
    assert tags and all(vocab.get(t) is not None for t in tags), d.annotation
    assert d.first_try_valid is True and d.is_valid, d.validation_errors
