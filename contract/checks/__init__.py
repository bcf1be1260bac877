"""Stage 3, the checks: one folder per family, each with its rule records (`rules`) and the code that produces their
findings (`check`). `CHECKS` runs them in code-range order on one `CheckContext`; none imports torch at import."""

from __future__ import annotations

from contract.checks.cache import check as cache
from contract.checks.context import Check, CheckContext
from contract.checks.custom_ops import check as custom_ops
from contract.checks.engine import check as engine
from contract.checks.hotpath import check as hotpath
from contract.checks.probe import check as probe
from contract.checks.ranks import check as ranks
from contract.checks.settings import check as settings
from contract.checks.warm import check as warm

CHECKS: tuple[Check, ...] = (
    settings.check,
    engine.check,
    cache.check,
    hotpath.check,
    probe.check,
    custom_ops.check,
    warm.check,
    ranks.check,
)
"""Checks run after binding, in code-range order (CC1xx settings ... CC6xx custom operators, CC7xx warm start, CC8xx
ranks), except CC9xx, the engine's own compiles, read right after the settings: before the probe runs the model)."""

__all__ = ["CHECKS", "Check", "CheckContext"]
