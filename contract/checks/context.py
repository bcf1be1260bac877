"""What every check is given: the contract, the binding, the user's step and the environment at import."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contract.document.load import Contract
from contract.env import EnvSnapshot
from contract.findings import Finding

if TYPE_CHECKING:  # the binding imports torch; `doctor` builds a context without it
    from contract.binding.targets import Binding


def env_at_import() -> EnvSnapshot:
    """The snapshot `contract/__init__.py` took at import."""
    from contract import ENV_AT_IMPORT

    return ENV_AT_IMPORT


@dataclass(kw_only=True)
class CheckContext:
    """Everything a check may look at; checks never import the model or read globals themselves."""

    contract: Contract
    """The loaded contract."""
    binding: Binding | None = None
    """Regions bound to the model (None for `doctor`, which does not import the model)."""
    step: Callable[[Any, int], Any] | None = None
    """The user's `step(model, i)`, for the dynamic probe."""
    twin: Any = None
    """The probe's twin when the caller built it (`init`); None: built from `[probe] model` when it names one."""
    snapshot: EnvSnapshot = field(default_factory=env_at_import)
    """The environment as it was before torch's compiler was imported, and whether it already was."""
    world: int = 1
    """Ranks in the job this process is one of (the group's size, else `WORLD_SIZE`); 1 for a single process."""
    exchanged: bool = False
    """The verdict is exchanged with the other ranks (a process group exists and `[distributed] enabled`)."""
    strict: bool = False
    """`--strict`: warnings refuse the start, and the hardening checks that only make sense then report (CC213)."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """What one check computed that another weighs, computed once (the probe's run: `probe.check.observed`; the static
    scan's hazards: `hotpath.check.scanned`)."""

    def bound(self) -> Binding:
        """The binding, for the parts of a check that run only once a model is bound (the check returns early
        without one); a caller that breaks that order gets a clear error, not an AttributeError on None."""
        if self.binding is None:
            raise RuntimeError("this check needs a bound model (CheckContext.binding is None): bind the model first")
        return self.binding


Check = Callable[[CheckContext], Iterable[Finding]]
"""A check: reads the context, returns every finding it has (never raises for what it checks)."""
