"""The startup pipeline, top to bottom: load the document, bind it to the model, run the checks, report.

`check()` applies nothing; `enforce()` is the engine's gate (load the portable cache artifacts, check, then apply in
place); `doctor()` is the launcher's preflight (the document, the torch version, the cache checks and the warm-start
prediction that needs no torch: no model, no torch import).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract.checks import CHECKS, Check, CheckContext
from contract.checks.cache import check as cache
from contract.checks.cache.rules import RULES as CACHE_RULES
from contract.checks.settings.check import check_torch_version
from contract.checks.settings.rules import TORCH_VERSION
from contract.checks.warm import artifacts
from contract.checks.warm import check as warm
from contract.checks.warm.rules import RULES as WARM_RULES
from contract.document.load import Contract, load
from contract.document.schema import Settings
from contract.env import EnvSnapshot
from contract.findings import Finding, has_errors
from contract.report.allow import finalize
from contract.report.render import render_text

if TYPE_CHECKING:  # the binding imports torch; `doctor` runs without it
    from contract.binding.targets import Binding

DOCTOR_CODES = frozenset({TORCH_VERSION.code, *(r.code for r in CACHE_RULES), *(r.code for r in WARM_RULES)})
"""Codes doctor can report (besides the contract's own load errors); `[[allow]]` entries for others are skipped."""


class ContractViolation(Exception):
    """The engine must not start: carries every finding; `str()` is the human report."""

    def __init__(self, findings: list[Finding], path: Path | str) -> None:
        super().__init__(f"{len(findings)} findings")
        self.findings = list(findings)
        self.path = str(path)

    def __str__(self) -> str:
        return render_text(self.findings, self.path)


def check(
    path: str | Path,
    model: Any | None,
    *,
    step: Callable | None = None,
    strict: bool = False,
    checks: Iterable[Check] = CHECKS,
) -> tuple[Contract | None, Binding | None, list[Finding]]:
    """Load and check a contract against a model (None: document-level checks only); applies nothing."""
    contract, findings = load(path)
    if contract is None:
        return None, None, finalize(findings, None, strict=strict)
    return check_loaded(contract, findings, model, step=step, strict=strict, checks=checks)


def check_loaded(
    contract: Contract,
    findings: list[Finding],
    model: Any | None,
    *,
    step: Callable | None = None,
    strict: bool = False,
    checks: Iterable[Check] = CHECKS,
) -> tuple[Contract, Binding | None, list[Finding]]:
    """The stages after loading: bind (when there is a model), run every check, then the report's allow-list."""
    binding = None
    findings = list(findings)
    if model is not None:
        from contract.binding.resolve import bind

        binding, bound = bind(contract, model)
        findings += bound
    findings += run_checks(CheckContext(contract=contract, binding=binding, step=step), checks)
    return contract, binding, finalize(findings, contract, strict=strict)


def run_checks(ctx: CheckContext, checks: Iterable[Check] = CHECKS) -> list[Finding]:
    """Run checks and collect their findings (each check reports everything it finds)."""
    out: list[Finding] = []
    for one in checks:
        out.extend(one(ctx))
    return out


def enforce(model: Any, path: str | Path, *, step: Callable | None = None, strict: bool = False) -> Binding:
    """The engine's startup gate: load `[cache] artifacts` (before anything compiles), check, then apply in place;
    raises ContractViolation on any error."""
    from contract.binding.apply import apply

    contract, findings = load(path)
    if contract is None:
        raise ContractViolation(finalize(findings, None, strict=strict), path)
    findings += artifacts.load(contract)
    _, binding, findings = check_loaded(contract, findings, model, step=step, strict=strict)
    if binding is None or has_errors(findings):
        raise ContractViolation(findings, path)
    return apply(binding)


def doctor(
    path: str | Path | None,
    *,
    strict: bool = False,
    environ: Mapping[str, str] | None = None,
    snapshot: EnvSnapshot | None = None,
    timeout_s: float = 1.0,
) -> tuple[Contract | None, list[Finding]]:
    """Load the contract (or use an empty one), then run the torch-version and cache checks only."""
    findings: list[Finding] = []
    contract: Contract | None = _empty_contract()
    if path is not None:
        contract, findings = load(path)
    if contract is None:
        return None, finalize(findings, None, strict=strict)
    ctx = CheckContext(contract=contract) if snapshot is None else CheckContext(contract=contract, snapshot=snapshot)
    findings += check_torch_version(ctx)
    findings += cache.check(ctx, environ=environ, timeout_s=timeout_s)
    findings += warm.doctor_check(ctx, environ=environ)
    scoped = replace(contract, allow=tuple(a for a in contract.allow if a.code in DOCTOR_CODES))
    return contract, finalize(findings, scoped, strict=strict)


def _empty_contract() -> Contract:
    """No contract given: torch's defaults (default `[cache]`, no version requirement)."""
    return Contract(
        path=Path.cwd() / "<no contract>",
        sha256=hashlib.sha256(b"").hexdigest(),
        meta=None,
        defaults=Settings(),
        regions=(),
    )
