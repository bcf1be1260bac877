"""Fixtures of the warm tests: the cache tests' real groups with real members (the kernel pack's trust rules)."""

from tests.checks.cache.conftest import unix_group  # noqa: F401  (registered here for this directory's tests)
