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
from contract.checks.cache.artifacts import EVIDENCE as ARTIFACTS
from contract.checks.cache.artifacts import inspect as inspect_artifacts
from contract.checks.cache.rules import RULES as CACHE_RULES
from contract.checks.context import env_at_import
from contract.checks.settings.check import check_tested_torch, check_torch_version
from contract.checks.settings.rules import TORCH_VERSION, UNTESTED_TORCH
from contract.checks.warm import artifacts, kernels
from contract.checks.warm import check as warm
from contract.checks.warm.rules import RULES as WARM_RULES
from contract.document.load import Contract, load
from contract.document.schema import Settings
from contract.env import EnvSnapshot
from contract.findings import Finding, has_errors
from contract.report.allow import finalize
from contract.report.ranks import Ranks, agree, cli_ranks, job_ranks
from contract.report.render import render_text

if TYPE_CHECKING:  # the binding imports torch; `doctor` runs without it
    from contract.binding.targets import Binding

DOCTOR_CODES = frozenset(
    {TORCH_VERSION.code, UNTESTED_TORCH.code, *(r.code for r in CACHE_RULES), *(r.code for r in WARM_RULES)}
)
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
    group: Any = None,
    ranks: Ranks | None = None,
    twin: Any = None,
) -> tuple[Contract | None, Binding | None, list[Finding]]:
    """Load and check a contract against a model (None: document-level checks only); applies nothing. In a job of
    several ranks (torch.distributed initialized, or `group`), the findings are the job's one verdict. `twin`: the
    small model the probe runs the step on (default: built from `[probe] model`, else the model itself)."""
    contract, findings = load(path)
    if contract is None:
        ranks = ranks or job_ranks(None, group)
        return None, None, agree(ranks, None, finalize(findings, None, strict=strict), env_at_import())
    return check_loaded(
        contract, findings, model, step=step, strict=strict, checks=checks, group=group, ranks=ranks, twin=twin
    )


def check_loaded(
    contract: Contract,
    findings: list[Finding],
    model: Any | None,
    *,
    step: Callable | None = None,
    strict: bool = False,
    checks: Iterable[Check] = CHECKS,
    group: Any = None,
    ranks: Ranks | None = None,
    twin: Any = None,
    evidence: dict[str, Any] | None = None,
) -> tuple[Contract, Binding | None, list[Finding]]:
    """The stages after loading: bind (when there is a model), run every check, the report's allow-list, then the
    verdict of all the ranks (`ranks`: where they meet, found from `group` or torch.distributed when not given;
    `evidence`: what the caller already computed for the checks, e.g. enforce's artifacts inspection)."""
    binding = None
    findings = list(findings)
    if model is not None:
        from contract.binding.resolve import bind

        binding, bound = bind(contract, model)
        findings += bound
    ranks = ranks or job_ranks(contract, group)
    ctx = CheckContext(
        contract=contract,
        binding=binding,
        step=step,
        twin=twin,
        world=ranks.world,
        exchanged=bool(ranks.channel),
        strict=strict,
        evidence=dict(evidence or {}),
    )
    findings = finalize(findings + run_checks(ctx, checks), contract, strict=strict)
    return contract, binding, agree(ranks, contract, findings, ctx.snapshot)


def run_checks(ctx: CheckContext, checks: Iterable[Check] = CHECKS) -> list[Finding]:
    """Run checks and collect their findings (each check reports everything it finds)."""
    out: list[Finding] = []
    for one in checks:
        out.extend(one(ctx))
    return out


def enforce(
    model: Any,
    path: str | Path,
    *,
    step: Callable | str | None = None,
    strict: bool = False,
    group: Any = None,
) -> Binding:
    """The engine's startup gate: load `[cache] artifacts` (before anything compiles; with torch's precompile on where
    the warm manifest verified it for this torch), check, then apply in place; raises ContractViolation on any error. On several ranks (after `init_process_group`, or with `group`), every rank
    starts, or every rank raises the same report.

    `model` is the module, or None to build it from `[contract] model` (then `[contract] step` is used too, as the
    CLI does); `step` may be a callable or a `"pkg.module:attr"` reference. A reference that fails, or a model that
    is not an `nn.Module`, is a CC010 finding in the violation, with every other finding of the document."""
    from contract.binding.apply import apply

    contract, findings = load(path)
    if contract is None:
        local = finalize(findings, None, strict=strict)
        raise ContractViolation(agree(job_ranks(None, group), None, local, env_at_import()), path)
    found = inspect_artifacts(contract, strict=strict)  # read and checked once: what loads is what the checks judge
    pack = kernels.inspect(contract)  # the C++ kernels, in the cache dir before anything compiles (CPU)
    kernels.install_into_cache(contract, pack)
    precompile = artifacts.precompile_wanted(contract, found)
    findings += artifacts.load(contract, found=found)
    model, step_fn, unbuilt = _resolve_refs(contract, model, step)
    bad_model = any(f.location == "contract.model" for f in unbuilt)
    with artifacts.precompile_paused():
        _, binding, findings = check_loaded(
            contract,
            [*findings, *unbuilt],
            None if bad_model else model,
            step=step_fn,
            strict=strict,
            group=group,
            evidence={ARTIFACTS: replace(found, data=None), kernels.EVIDENCE: replace(pack, files=None)},
        )
    if binding is None or has_errors(findings):
        raise ContractViolation(findings, path)
    artifacts.switch_precompile(precompile)  # apply's torch.compile() installs the bundle's entries
    return apply(binding)


def _resolve_refs(contract: Contract, model: Any, step: Callable | str | None) -> tuple[Any, Callable | None, list]:
    """The model and step `enforce` checks: the ones given, else those `[contract]` names (built here); CC010
    findings for references that fail and for a model that is not an nn.Module."""
    from contract.document.refs import check_model, load_refs

    meta = contract.meta
    model_ref = meta.model if meta and model is None else None
    step_ref = step if isinstance(step, str) else (meta.step if meta and model is None and step is None else None)
    built, resolved, unbuilt = load_refs(model_ref, step_ref)
    step_fn = resolved if step_ref else step if callable(step) else None
    model = built if model is None else model
    unbuilt += check_model(model) if model is not None or not model_ref else []
    return model, step_fn, unbuilt


def doctor(
    path: str | Path | None,
    *,
    strict: bool = False,
    environ: Mapping[str, str] | None = None,
    snapshot: EnvSnapshot | None = None,
    timeout_s: float = 1.0,
    job: str | None = None,
) -> tuple[Contract | None, list[Finding]]:
    """Load the contract (or use an empty one), then run the torch-version (CC109, CC112) and cache checks only. With
    `job` (the CLI command's name), run by every rank of a job, the findings are the job's one verdict."""
    findings: list[Finding] = []
    contract: Contract | None = _empty_contract()
    if path is not None:
        contract, findings = load(path)
    ranks = cli_ranks(contract, job, environ) if job else Ranks()
    if contract is None:
        return None, agree(ranks, None, finalize(findings, None, strict=strict), snapshot or env_at_import(), environ)
    ctx = CheckContext(contract=contract, strict=strict)
    if snapshot is not None:
        ctx.snapshot = snapshot
    findings += check_torch_version(ctx) + check_tested_torch()
    findings += cache.check(ctx, environ=environ, timeout_s=timeout_s)
    findings += warm.doctor_check(ctx, environ=environ)
    scoped = replace(contract, allow=tuple(a for a in contract.allow if a.code in DOCTOR_CODES))
    return contract, agree(ranks, contract, finalize(findings, scoped, strict=strict), ctx.snapshot, environ)


def _empty_contract() -> Contract:
    """No contract given: torch's defaults (default `[cache]`, no version requirement)."""
    return Contract(
        path=Path.cwd() / "<no contract>",
        sha256=hashlib.sha256(b"").hexdigest(),
        meta=None,
        defaults=Settings(),
        regions=(),
    )
