"""A vendored metrics library written like torchmetrics (reduced from Lightning-AI/torchmetrics#1780): `update` is
wrapped per instance in `__init__`, and the wrapper counts calls in a Python int."""
from __future__ import annotations

import functools

import torch
from torch import nn


class Metric(nn.Module):
    def __init__(self):
        super().__init__()
        self._update_count = 0
        self._computed = None
        self.update = self._wrap_update(self.update)

    def _wrap_update(self, update):
        @functools.wraps(update)
        def wrapped_func(*args, **kwargs):
            self._computed = None
            self._update_count += 1
            with torch.no_grad():
                update(*args, **kwargs)

        return wrapped_func


class MeanValue(Metric):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(()), persistent=False)
        self.register_buffer("count", torch.zeros(()), persistent=False)

    def update(self, value):
        self.total.add_(value.sum())
        self.count.add_(value.numel())


class PureStat(nn.Module):
    """The clean look-alike: state kept in buffers, updated in place; no Python counters."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(()), persistent=False)

    def update(self, value):
        with torch.no_grad():
            self.total.add_(value.sum())
