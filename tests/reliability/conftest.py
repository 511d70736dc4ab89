"""Attack and fault fixtures (helpers in ``attack_helpers``)."""

from __future__ import annotations

import pytest
from attack_helpers import Served, make_served


@pytest.fixture
def served(tmp_path) -> Served:
    """The app on a fresh home: ana (reviewer, with an API token) and bob (user)."""
    return make_served(tmp_path / "home")
