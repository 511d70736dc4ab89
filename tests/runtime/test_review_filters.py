"""The review inbox's status filter, shared by every app's review provider."""

from __future__ import annotations

import pytest

from casework.errors import InputError
from casework.runtime.review_provider import WAITING, ReviewFilters, known_status


def test_a_known_status_passes_and_an_unknown_one_is_one_sentence_naming_the_choices():
    assert known_status(ReviewFilters(status="decided"), [WAITING, "decided"]) == "decided"
    with pytest.raises(InputError) as raised:
        known_status(ReviewFilters(status="done"), [WAITING, "decided"])
    assert str(raised.value) == "Unknown status 'done'; use one of: waiting, decided."
