"""Numeric drift between the step's outputs under the two torches: per output tensor, the largest absolute and
relative difference, and any dtype or shape change or output only one side returned.

`max_rel` is the largest absolute difference over the largest magnitude of the current output (an elementwise
ratio explodes on values near zero, which logits and activations are full of).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHOWN = 8
"""Output changes kept in the report (the worst first); the counts cover every output."""


@dataclass(frozen=True, kw_only=True)
class OutputChange:
    """One output that differs: `values` (both the same dtype and shape), `dtype`, `shape`, `missing` (only the
    current torch returned it) or `new` (only the candidate did)."""

    name: str
    change: str
    current: str
    candidate: str
    max_abs: float | None = None
    max_rel: float | None = None


@dataclass(frozen=True, kw_only=True)
class Drift:
    """What the candidate changes in the step's outputs."""

    compared: int
    """Outputs present under both torches with the same dtype and shape."""
    max_abs: float | None
    max_rel: float | None
    changes: tuple[OutputChange, ...]
    """Dtype, shape, missing and new outputs, then the largest value differences (at most `SHOWN`)."""
    note: str = ""
    """Why nothing was compared, when nothing was."""


def compare_files(current: Path, candidate: Path) -> Drift:
    """Compare the two workers' `outputs.pt`."""
    if not current.is_file() or not candidate.is_file():
        return Drift(compared=0, max_abs=None, max_rel=None, changes=(), note="the step returned no tensors")
    return compare(_load(current), _load(candidate))


def _load(path: Path) -> dict[str, Any]:
    """A worker's saved outputs. Trust: both files were written by our own worker processes (contract.upgrade.worker)
    into a private temp dir this process created (mode 0700) moments ago; nothing from elsewhere is unpickled. Even
    so the load is `weights_only` (tensors and containers only), and anything but a name -> tensor dict is refused."""
    import torch

    data = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or not all(isinstance(v, torch.Tensor) for v in data.values()):
        raise ValueError(f"{path}: not a name -> tensor dict")
    return data


def compare(current: dict[str, Any], candidate: dict[str, Any]) -> Drift:
    """Per output: dtype, shape, presence, then values."""
    changes: list[OutputChange] = []
    values: list[OutputChange] = []
    for name in sorted(set(current) | set(candidate)):
        one = _one(name, current.get(name), candidate.get(name))
        (values if one.change == "values" else changes).append(one)
    values.sort(key=lambda c: -(c.max_abs or 0.0))
    worst_abs = max((c.max_abs for c in values if c.max_abs is not None), default=None)
    worst_rel = max((c.max_rel for c in values if c.max_rel is not None), default=None)
    shown = (changes + [v for v in values if v.max_abs])[:SHOWN]
    return Drift(compared=len(values), max_abs=worst_abs, max_rel=worst_rel, changes=tuple(shown))


def _one(name: str, a: Any, b: Any) -> OutputChange:
    """The change of one output."""
    if a is None or b is None:
        change, cur, cand = ("new", "-", _describe(b)) if a is None else ("missing", _describe(a), "-")
        return OutputChange(name=name, change=change, current=cur, candidate=cand)
    if a.dtype != b.dtype or a.shape != b.shape:
        change = "dtype" if a.dtype != b.dtype else "shape"
        return OutputChange(name=name, change=change, current=_describe(a), candidate=_describe(b))
    max_abs, max_rel = differences(a, b)
    return OutputChange(
        name=name, change="values", current=_describe(a), candidate=_describe(b), max_abs=max_abs, max_rel=max_rel
    )


def differences(a: Any, b: Any) -> tuple[float, float]:
    """(largest |a - b|, that over the largest |a|), in float64; equal NaNs and equal infinities count as equal,
    any other mismatch with a non-finite value is infinite."""
    import torch

    x, y = a.to(_wide(a)), b.to(_wide(a))
    if x.numel() == 0:
        return 0.0, 0.0
    same = (x == y) | (torch.isnan(x) & torch.isnan(y))
    diff = torch.where(same, torch.zeros_like(x, dtype=torch.float64), (x - y).abs().nan_to_num(nan=math.inf))
    max_abs = float(diff.max())
    scale = float(x.abs().nan_to_num(nan=0.0, posinf=0.0, neginf=0.0).max())
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
    return max_abs, max_rel


def _wide(a: Any) -> Any:
    """The dtype values are compared in (float64, or complex128 for complex outputs)."""
    import torch

    return torch.complex128 if a.is_complex() else torch.float64


def _describe(t: Any) -> str:
    """`float32[2, 8]`."""
    return f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"
