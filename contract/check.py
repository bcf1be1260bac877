"""The startup check: load, bind, run every check, apply the allow-list, and refuse on errors."""
from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from contract.env import EnvSnapshot
from contract.findings import Finding, has_errors
from contract.load import Contract, load
from contract.rules import cc0xx, cc1xx, cc2xx, cc3xx, cc4xx, cc6xx

if TYPE_CHECKING:  # binding imports torch; `doctor` uses this module without it
    from contract.binding import Binding


@dataclass(kw_only=True)
class CheckContext:
    """Everything a check may look at; checks never import the model or read globals themselves."""

    contract: Contract
    """The loaded contract."""
    binding: Binding | None = None
    """Regions bound to the model (None for `doctor`, which does not import the model)."""
    step: Callable[[Any, int], Any] | None = None
    """The user's `step(model, i)`, for the dynamic probe."""
    environ: Mapping[str, str] = field(default_factory=lambda: dict(_env_at_import().environ))
    """Environment as it was before torch's compiler was imported."""
    snapshot: EnvSnapshot = field(default_factory=lambda: _env_at_import())
    """That snapshot, with whether torch's compiler was already imported when it was taken."""


def _env_at_import() -> EnvSnapshot:
    """The snapshot `contract/__init__.py` took at import."""
    from contract import ENV_AT_IMPORT

    return ENV_AT_IMPORT


Check = Callable[[CheckContext], Iterable[Finding]]
CHECKS: tuple[Check, ...] = (cc0xx.check_has_regions, cc1xx.check, cc2xx.check, cc3xx.check, cc4xx.check, cc6xx.check)
"""Checks run after binding, in code-range order."""


class ContractViolation(Exception):
    """The engine must not start: carries every finding; `str()` is the human report."""

    def __init__(self, findings: list[Finding], path: Path | str) -> None:
        super().__init__(f"{len(findings)} findings")
        self.findings = list(findings)
        self.path = str(path)

    def __str__(self) -> str:
        from contract.report import render_text

        return render_text(self.findings, self.path)


def run_checks(ctx: CheckContext, checks: Iterable[Check] = CHECKS) -> list[Finding]:
    """Run checks and collect their findings (each check reports everything it finds)."""
    out: list[Finding] = []
    for check in checks:
        out.extend(check(ctx))
    return out


def finalize(findings: list[Finding], contract: Contract | None, *, strict: bool = False) -> list[Finding]:
    """Apply `[[allow]]`, report unused entries, and escalate warnings under `--strict`."""
    kept = _allow(findings, contract) if contract else list(findings)
    if strict:
        kept = [replace(f, severity="error") for f in kept]
    return sorted(kept, key=lambda f: (f.severity != "error", f.code, f.location))


def _allow(findings: list[Finding], contract: Contract) -> list[Finding]:
    """Each allow entry silences the findings with its code at a matching location.

    `where` (globs allowed) matches a location it equals or is a path suffix of at a `/` boundary; a `file:line`
    location is also tried as an absolute path, so an entry does not depend on the working directory (scan locations
    are relative to it, else to a `sys.path` entry).
    """
    def forms(location: str) -> list[str]:
        file, sep, line = location.rpartition(":")
        if sep and line.isdigit() and file:
            for root in (Path.cwd(), *(Path(p) for p in sys.path if p)):
                candidate = root / file
                if candidate.is_file():
                    return [location, f"{candidate.resolve().as_posix()}:{line}"]
        return [location]

    def matches(where: str, location: str) -> bool:
        return fnmatch.fnmatchcase(location, where) or fnmatch.fnmatchcase(location, "*/" + where.lstrip("/"))

    used = [False] * len(contract.allow)
    kept = []
    for f in findings:
        locations = forms(f.location)
        hit = next((i for i, a in enumerate(contract.allow)
                    if a.code == f.code and any(matches(a.where, loc) for loc in locations)), None)
        if hit is None:
            kept.append(f)
        else:
            used[hit] = True
    for i, a in enumerate(contract.allow):
        if not used[i]:
            kept.append(cc0xx.UNUSED_ALLOW.finding(f"allow[{i}]", f"no {a.code} finding at {a.where!r} to silence",
                                                   "delete the entry or correct its code and where"))
    return kept


def check(path: str | Path, model: Any | None, *, step: Callable | None = None, strict: bool = False,
          checks: Iterable[Check] = CHECKS) -> tuple[Contract | None, Binding | None, list[Finding]]:
    """Load and check a contract against a model (None: document-level checks only); applies nothing."""
    from contract.binding import bind

    contract, findings = load(path)
    binding = None
    if contract is not None and model is not None:
        binding, bound = bind(contract, model)
        findings += bound
    if contract is not None:
        findings += run_checks(CheckContext(contract=contract, binding=binding, step=step), checks)
    return contract, binding, finalize(findings, contract, strict=strict)


def enforce(model: Any, path: str | Path, *, step: Callable | None = None, strict: bool = False) -> Binding:
    """The engine's startup gate: check, then apply in place; raises ContractViolation on any error."""
    from contract.apply import apply

    _, binding, findings = check(path, model, step=step, strict=strict)
    if binding is None or has_errors(findings):
        raise ContractViolation(findings, path)
    return apply(binding)
