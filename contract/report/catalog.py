"""Every rule of the checker as one tuple ordered by code, for `compile-contract rules` and `explain` (the records
live with their stage: `document`, `binding` and each `checks` family)."""

from __future__ import annotations

from contract.binding import rules as binding
from contract.checks.cache import rules as cache
from contract.checks.custom_ops import rules as custom_ops
from contract.checks.engine import rules as engine
from contract.checks.hotpath import rules as hotpath
from contract.checks.probe import rules as probe
from contract.checks.ranks import rules as ranks
from contract.checks.settings import rules as settings
from contract.checks.warm import rules as warm
from contract.document import rules as document
from contract.findings import Rule

RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            *document.RULES,
            *settings.RULES,
            *cache.RULES,
            *hotpath.RULES,
            *probe.RULES,
            *binding.RULES,
            *custom_ops.RULES,
            *warm.RULES,
            *ranks.RULES,
            *engine.RULES,
        ),
        key=lambda r: r.code,
    )
)
_BY_CODE = {r.code: r for r in RULES}


def get(code: str) -> Rule | None:
    """Look a rule up by code (case-insensitive)."""
    return _BY_CODE.get(code.upper())
