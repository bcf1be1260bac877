"""Every rule of the checker, one module per code range; `RULES` is the plain tuple ordered by code."""
from __future__ import annotations

from contract.findings import Rule
from contract.rules import cc0xx, cc1xx, cc2xx, cc3xx, cc4xx, cc5xx, cc6xx

RULES: tuple[Rule, ...] = tuple(sorted((*cc0xx.RULES, *cc1xx.RULES, *cc2xx.RULES, *cc3xx.RULES, *cc4xx.RULES, *cc5xx.RULES, *cc6xx.RULES), key=lambda r: r.code))
_BY_CODE = {r.code: r for r in RULES}


def get(code: str) -> Rule | None:
    """Look a rule up by code (case-insensitive)."""
    return _BY_CODE.get(code.upper())
