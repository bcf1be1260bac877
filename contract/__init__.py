"""torch-compile-contract, startup side: `enforce(model, path)` checks a model against its contract and applies it.

Imports are lazy so `compile-contract doctor` and `rules` start without importing torch.
"""
from __future__ import annotations

from typing import Any

from contract.env import EnvSnapshot, take_snapshot

ENV_AT_IMPORT: EnvSnapshot = take_snapshot()
"""The environment before torch's compiler read it (import `contract` first to tell user-set cache variables)."""

__all__ = ["enforce", "check", "ContractViolation", "ContractFileError", "load", "Binding"]


def __getattr__(name: str) -> Any:
    if name in ("enforce", "check", "ContractViolation"):
        from contract import check as _check

        return getattr(_check, name)
    if name in ("load", "ContractFileError"):
        from contract import load as _load

        return getattr(_load, name)
    if name == "Binding":
        from contract.binding import Binding

        return Binding
    raise AttributeError(name)
