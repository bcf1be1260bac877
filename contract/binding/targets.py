"""The Binding: contract regions -> module instances and methods, the one object the startup side applies and the
runtime monitor attributes compiles to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from contract.document.load import Contract
from contract.document.schema import Region


@dataclass(kw_only=True, eq=False)
class Target:
    """One method of one module instance claimed by a region."""

    region: str
    """Region name."""
    path: str
    """Module path in the model (`""` is the root)."""
    method: str
    """Method name (`forward` is compiled with `nn.Module.compile`)."""
    module: nn.Module
    """The module instance."""
    instance_attr: Any = None
    """What the instance's own `__dict__` held under `method` before apply (None: the class's method)."""
    via_call_impl: bool = False
    """True for a compiled `forward`: switched through `nn.Module.compile()`'s slot, not the `forward` attribute."""
    compiled: Callable | None = None
    """The compiled (or disabled) callable installed by apply, kept to switch back after a fallback."""
    precompile: Any = None
    """What apply's `torch.compile()` found in torch's precompile cache (`contract._caches.PrecompileLoad`: hit,
    miss, bypass, error, seconds); None when precompiled entries were off. The monitor reports it as the instance's
    first compile."""
    engine: Any = None
    """For a `compiled_by = "engine"` region: the engine's compile of this method (`contract._compiled.EngineCompile`),
    found by `apply` or at its first compile; its slot is what an eager or fail breach switches. None: not found."""


@dataclass(kw_only=True, eq=False)
class RegionBinding:
    """A region and every target it claims."""

    region: Region
    """Resolved settings."""
    targets: list[Target] = field(default_factory=list)
    """Claimed (module, method) pairs, in `named_modules()` order."""
    state: str = "unapplied"
    """`unapplied`, `compiled`, `engine` (the engine compiles it), `disabled` (kept eager by contract), `eager`
    (fallback) or `guarded` (fail)."""


@dataclass(kw_only=True, eq=False)
class Binding:
    """Regions -> module instances, methods, original callables and settings; what the monitor attributes to."""

    contract: Contract
    """The loaded contract."""
    model: nn.Module
    """The root model."""
    regions: dict[str, RegionBinding]
    """By region name, in contract order."""
    by_target: dict[tuple[int, str], Target] = field(default_factory=dict)
    """(id(module), method) -> target: attribution of a compiled callable to its region instance."""

    def region_of(self, module: object, method: str) -> Target | None:
        """The target a (module instance, method) belongs to, if any."""
        return self.by_target.get((id(module), method))

    def targets(self) -> list[Target]:
        """Every target of every region."""
        return [t for rb in self.regions.values() for t in rb.targets]


def inside(path: str, outer: str) -> bool:
    """Whether module path `path` lies strictly inside module path `outer` (`""` is the root)."""
    return path != outer and (outer == "" or path.startswith(outer + "."))
