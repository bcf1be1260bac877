"""CC8xx findings one rank can tell alone: its verdict will not reach its peers (CC808), automatic dynamic shapes
without the features that make ranks decide alike (CC809), a region compiled over FSDP2-sharded blocks (CC810)."""

from __future__ import annotations

from typing import Any

from contract.checks.context import CheckContext
from contract.checks.ranks.rules import DYNAMIC_WITHOUT_AGREEMENT, LOCAL_VERDICT, THROUGH_FSDP_SHARDS
from contract.findings import Finding


def check(ctx: CheckContext) -> list[Finding]:
    """The local multi-rank checks (nothing for a single process)."""
    out = _through_fsdp_shards(ctx)
    if ctx.world <= 1:
        return out
    if not ctx.exchanged:
        out.append(
            LOCAL_VERDICT.finding(
                "distributed",
                f"this is one rank of {ctx.world} (WORLD_SIZE) but torch.distributed is not initialized: the startup "
                "verdict is this rank's alone, and a peer that refuses leaves this one waiting in its first collective",
                "call torch.distributed.init_process_group(...) before contract.enforce(...), or pass group=",
            )
        )
    return out + _dynamic_without_agreement(ctx)


def _dynamic_without_agreement(ctx: CheckContext) -> list[Finding]:
    """CC809 once, naming the automatic-dynamic regions and which of the two features is missing."""
    if ctx.binding is None:
        return []
    regions = [r.name for r in ctx.contract.regions if r.enabled and r.dynamic == "auto"]
    if not regions:
        return []
    from contract import _torch

    missing = [
        what
        for what, present in (
            ("compiler collectives (TORCH_COMPILER_COLLECTIVES=1)", _torch.compiler_collectives()),
            ("a job id (TORCH_COMPILE_JOB_ID)", _torch.pgo_job_id() is not None),
        )
        if not present
    ]
    if not missing:
        return []
    return [
        DYNAMIC_WITHOUT_AGREEMENT.finding(
            "distributed",
            f"{len(regions)} region(s) with automatic dynamic shapes ({', '.join(regions[:4])}) on {ctx.world} ranks "
            f"without {' and without '.join(missing)}: each rank decides alone which dimensions become dynamic",
            "export TORCH_COMPILER_COLLECTIVES=1 and TORCH_COMPILE_JOB_ID=<job> on every rank, or declare the dynamic "
            "dimensions (dynamic_dims, or dynamic = true)",
        )
    ]


def _through_fsdp_shards(ctx: CheckContext) -> list[Finding]:
    """CC810 per region whose module is not itself sharded but contains FSDP2-sharded submodules."""
    from contract import _distributed

    if ctx.binding is None:
        return []
    out = []
    for rb in ctx.binding.regions.values():
        for target in rb.targets[:1] if rb.region.enabled else ():
            shards = [n for n, m in target.module.named_modules() if n and _distributed.is_fsdp_sharded(m)]
            if shards and not _distributed.is_fsdp_sharded(target.module):
                out.append(_fsdp_finding(rb.region, target.path, shards))
    return out


def _fsdp_finding(region: Any, path: str, shards: list[str]) -> Finding:
    shown = ", ".join(shards[:3]) + (f", ... ({len(shards)})" if len(shards) > 3 else "")
    return THROUGH_FSDP_SHARDS.finding(
        region.loc("module"),
        f"region {region.name!r} compiles {path or '<root>'}, whose FSDP2-sharded submodules ({shown}) break its "
        "graph at each call (FSDP's hooks run eager); a loop over them makes Dynamo skip the frame",
        'compile each sharded block as its own region (module = "layers.*"), as torchtitan does',
    )
