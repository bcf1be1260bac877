"""Scenario tests run the shipped contracts on real models, on the eager backend unless a scenario needs inductor."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each scenario starts from empty Dynamo caches (one code object is shared across tests' models)."""
    import torch

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def quiet_logger():
    """A real structlog logger that keeps events in a list (what the monitor logged), printing nothing."""
    import structlog

    events: list[dict] = []

    def keep(_, method, event_dict):
        events.append({"level": method, **event_dict})
        raise structlog.DropEvent

    logger = structlog.wrap_logger(None, processors=[keep])
    logger.events = events
    return logger
