"""The vanpool tests' fixtures; the helpers live in vanpool_helpers (a plain module, so test
files import them by a name no other test folder's conftest shadows)."""

from vanpool_helpers import clock, deps, sink, truth  # noqa: F401  (fixtures)
