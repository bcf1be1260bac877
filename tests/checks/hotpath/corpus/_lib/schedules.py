"""Schedules the training loop applies to a model between steps (reduced from temperature/adapter reports)."""
from __future__ import annotations

import contextlib


def set_temperature(model, i):
    for m in model.modules():
        if hasattr(m, "tau"):
            m.tau = max(0.5, 1.0 - 0.1 * i)


@contextlib.contextmanager
def disable_adapter(model):
    model.adapter_disabled = True
    try:
        yield
    finally:
        model.adapter_disabled = False
