"""torch-compile-contract, startup side: `enforce(model, path)` checks a model against its contract and applies it.

The pipeline (`contract.pipeline`) runs four stages, one folder each: `document` (schema, load, references),
`binding` (resolve regions, apply), `checks` (settings, cache, hot path, probe, custom ops) and `report` (allow-list,
renderers, the rule catalog); `init` (`compile-contract init`: a contract generated from the model, budgets recorded
with the monitor) sits on top of the pipeline, `cli` on top of both. Imports are lazy so `compile-contract doctor` and `rules` start
without importing torch.
"""

from __future__ import annotations

import importlib
from typing import Any

from contract.env import EnvSnapshot, take_snapshot

ENV_AT_IMPORT: EnvSnapshot = take_snapshot()
"""The environment before torch's compiler read it (import `contract` first to tell user-set cache variables)."""

__all__ = ["enforce", "ContractViolation", "ContractFileError", "Binding"]

_LAZY = {
    "enforce": "contract.pipeline",
    "ContractViolation": "contract.pipeline",
    "ContractFileError": "contract.document.load",
    "Binding": "contract.binding.targets",
}
"""Exported name -> the submodule defining it (imported on first access: the binding imports torch)."""


def __getattr__(name: str) -> Any:
    """Resolve an exported name on first access; `importlib` never re-enters this hook (a `from contract` would)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contract' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    """Module attributes plus the lazily exported names."""
    return sorted({*globals(), *__all__})
