"""`compile-contract doctor`: the environment and cache preflight a launcher runs before the job's Python starts.

It never imports the model, torch or torch's compiler (torch's version comes from package metadata), so it runs
in well under the two seconds a launcher can afford, and it sees exactly the environment the job will inherit.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from contract.check import CheckContext, finalize
from contract.env import EnvSnapshot
from contract.findings import Finding
from contract.load import Contract, load
from contract.rules import cc1xx, cc2xx
from contract.schema import Settings

CODES = frozenset({cc1xx.TORCH_VERSION.code, *(r.code for r in cc2xx.RULES)})
"""Codes doctor can report (besides the contract's own load errors); `[[allow]]` entries for others are skipped."""


def doctor(path: str | Path | None, *, strict: bool = False, environ: Mapping[str, str] | None = None,
           snapshot: EnvSnapshot | None = None, timeout_s: float = 1.0) -> tuple[Contract | None, list[Finding]]:
    """Load the contract (or use an empty one), then run the torch-version and cache checks only."""
    if path is None:
        contract, findings = _empty_contract(), []
    else:
        contract, findings = load(path)
    if contract is None:
        return None, finalize(findings, None, strict=strict)
    ctx = CheckContext(contract=contract) if snapshot is None else CheckContext(contract=contract, snapshot=snapshot,
                                                                                  environ=dict(snapshot.environ))
    findings += cc1xx.check_torch_version(ctx)
    findings += cc2xx.check(ctx, environ=environ, timeout_s=timeout_s)
    scoped = replace(contract, allow=tuple(a for a in contract.allow if a.code in CODES))
    return contract, finalize(findings, scoped, strict=strict)


def _empty_contract() -> Contract:
    """No contract given: torch's defaults (default `[cache]`, no version requirement)."""
    return Contract(path=Path.cwd() / "<no contract>", sha256=hashlib.sha256(b"").hexdigest(), meta=None,
                    defaults=Settings(), regions=())
