"""Helpers in another module than the model: a module-global call counter, counters on objects passed in."""
from __future__ import annotations

CALLS = 0


def record_call():
    global CALLS
    CALLS += 1


def bump(module):
    module.calls += 1


def advance(state):
    state["step"] += 1


def scale_of(x, factor=2):
    return x * factor
