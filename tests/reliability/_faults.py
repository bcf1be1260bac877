"""Shared pieces of the monitor fault tests: a recording logger, distinct region classes, bind-and-apply."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from contract.binding.apply import apply
from contract.binding.targets import Binding
from contract.findings import has_errors
from contract.pipeline import check

HEADER = '[contract]\nname = "faults"\n[defaults]\nbackend = "eager"\ndynamic = false\n'


class Events:
    """A structlog-shaped logger that keeps every event, so tests assert on what the monitor logged."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __getattr__(self, level: str) -> Callable[..., None]:
        if level not in ("debug", "info", "warning", "error", "critical"):
            raise AttributeError(level)
        return lambda event, **kw: self.events.append({"event": event, "level": level, **kw})

    def named(self, event: str) -> list[dict[str, Any]]:
        """Events with that name."""
        return [e for e in self.events if e["event"] == event]


class Block(nn.Module):
    """One compiled region: a Linear and a ReLU."""

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x))


def block_class(tag: int) -> type[Block]:
    """A Block subclass with its own forward code object, so Dynamo's per-code-object cache and recompile limit
    are not shared between regions (all instances of one class share both)."""
    fn = Block.forward
    code = fn.__code__.replace(co_name=f"forward_{tag}")
    forward = types.FunctionType(code, fn.__globals__, "forward", fn.__defaults__, fn.__closure__)
    return type(f"Block{tag}", (Block,), {"forward": forward})


class Tower(nn.Module):
    """`n` blocks, each of its own class; region `b{i}` is `blocks.{i}`."""

    def __init__(self, n: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(block_class(i)() for i in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


class Adder(nn.Module):
    """The cheapest region Dynamo still compiles (one add): for runs of thousands of compiles."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


def retained_bytes(obj: Any, _seen: set[int] | None = None) -> int:
    """Bytes reachable from obj through containers and instance dicts (contract Region objects excluded)."""
    from collections import deque

    from contract.document.schema import Region

    seen = set() if _seen is None else _seen
    if id(obj) in seen or isinstance(obj, (Region, type)):
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(retained_bytes(k, seen) + retained_bytes(v, seen) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset, deque)):
        size += sum(retained_bytes(v, seen) for v in obj)
    elif hasattr(obj, "__dict__"):
        size += retained_bytes(vars(obj), seen)
    return size


def regions(n: int, extra: str = "") -> str:
    """One `[[region]]` per block."""
    return "".join(f'[[region]]\nname = "b{i}"\nmodule = "blocks.{i}"\n{extra}' for i in range(n))


def bind(path: Path, body: str, model: nn.Module) -> Binding:
    """Write HEADER + body, check it against the model (no error allowed), apply it."""
    path.write_text(HEADER + body)
    _, binding, findings = check(path, model)
    assert binding is not None and not has_errors(findings), findings
    return apply(binding)
