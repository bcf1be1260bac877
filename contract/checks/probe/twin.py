"""The probe's twin (`[probe] model`): a small model of the same classes that the probe runs the step on, while every
other check reads the real model (built on the meta device when it is too big to run here).

The regions bind to both. A region whose glob matches modules of the real model and none of the twin is CC410 (the
probe has no evidence for it); a region whose real instances hold a kind of module the twin's instances do not (an
MoE block, a sliding-window layer, by class and by the flags it was built with) is CC411 (that code never ran in the
probe). A twin reference that fails is CC010 at `probe.model`; a real model on the meta device with no twin is CC405
(the step cannot run on it).
"""

from __future__ import annotations

from typing import Any

from contract.checks.context import CheckContext
from contract.checks.probe.rules import PROBE_FAILED, TWIN_LACKS_KIND, TWIN_MISSES_REGION
from contract.findings import Finding

_FLAGS = (bool, str, type(None))
"""Instance attributes that tell kinds of one class apart (`is_sliding`, `attention_type`, `sliding_window = None`);
numbers are left out: they are widths and layer indices, which a twin changes by design."""


def probe_model(ctx: CheckContext) -> Any:
    """The model the probe runs the step on: the twin when one is given or named (None when it failed to build),
    else the real model."""
    if ctx.twin is None and ctx.contract.probe.model is None:
        return ctx.bound().model
    return _twin(ctx)[0]


def findings(ctx: CheckContext) -> list[Finding]:
    """CC010 for a twin that cannot be built, CC410/CC411 for regions it does not cover, CC405 for a real model on
    meta with no twin (the step cannot run on it)."""
    if ctx.binding is None or not ctx.contract.probe.enabled:
        return []
    if ctx.twin is None and ctx.contract.probe.model is None:
        return _meta_without_twin(ctx)
    return _twin(ctx)[1]


def on_meta(model: Any) -> bool:
    """The model has a tensor on the meta device: no weights, the step cannot run on it."""
    return any(t.is_meta for t in (*model.parameters(), *model.buffers()))


def _meta_without_twin(ctx: CheckContext) -> list[Finding]:
    if ctx.step is None or not on_meta(ctx.bound().model):
        return []
    return [
        PROBE_FAILED.finding(
            "contract.step",
            "the probe cannot run the step: the model was built on the meta device (module tree only, no weights)",
            'name a small twin of the model in [probe] model = "pkg.module:factory" (compile-contract init writes '
            "one for Hugging Face models), or build the model for real",
        )
    ]


def _twin(ctx: CheckContext) -> tuple[Any, list[Finding]]:
    """The twin and its findings, built and bound once per context."""
    if "twin" not in ctx.evidence:
        from contract.document.refs import load_twin

        ref = ctx.contract.probe.model
        model, out = (ctx.twin, []) if ctx.twin is not None or ref is None else load_twin(ref)
        ctx.evidence["twin"] = (model, out if model is None else out + _coverage(ctx, model))
    return ctx.evidence["twin"]


def _coverage(ctx: CheckContext, twin: Any) -> list[Finding]:
    """CC410 / CC411 per enabled region the real model binds."""
    from contract.binding.resolve import bind

    twin_binding, _ = bind(ctx.contract, twin)  # its own CC5xx repeat the real model's, or are CC410 here
    out: list[Finding] = []
    for name, rb in ctx.bound().regions.items():
        if not rb.region.enabled or not rb.targets:
            continue
        twin_targets = twin_binding.regions[name].targets
        if not twin_targets:
            out.append(_missing(name, rb, twin))
            continue
        lacking = _kinds(rb.targets) - _kinds(twin_targets).keys()
        if lacking:
            out.append(_lacking(name, rb.region.module, _kinds(rb.targets), lacking))
    return out


def _missing(region: str, rb: Any, twin: Any) -> Finding:
    paths = sorted({t.path or "<root>" for t in rb.targets})
    return TWIN_MISSES_REGION.finding(
        region,
        f"region {region!r} ({rb.region.module or '<root>'!r}) matches {_some(paths)} in the model and nothing in "
        f"the probe's twin ({type(twin).__name__}): the probe has no evidence for it",
        "give the twin the modules the glob names (the same attribute names, enough layers), or widen the glob",
    )


def _lacking(region: str, glob: str, kinds: dict[str, str], lacking: set[str]) -> Finding:
    shown = sorted(lacking)
    where = ", ".join(f"{k} at {kinds[k]}" for k in shown[:3]) + (
        f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    )
    return TWIN_LACKS_KIND.finding(
        region,
        f"region {region!r} ({glob or '<root>'!r}) holds modules the probe's twin does not: {where}; the probe "
        "never ran their code",
        "give the twin every kind of layer the model has (MoE and dense, sliding and full attention: its per-layer "
        "config), e.g. one layer of each",
    )


def _kinds(targets: list[Any]) -> dict[str, str]:
    """Kind of module (class and flags) -> the first module path holding one, over a region's instances."""
    out: dict[str, str] = {}
    for t in targets:
        for name, module in t.module.named_modules():
            out.setdefault(kind(module), ".".join(p for p in (t.path, name) if p) or "<root>")
    return out


def kind(module: Any) -> str:
    """`Class(flag=value, ...)`: the class and the flag attributes it was built with (`training` left out)."""
    flags = sorted(
        f"{k}={v!r}" for k, v in vars(module).items() if type(v) in _FLAGS and not k.startswith("_") and k != "training"
    )
    return f"{type(module).__qualname__}({', '.join(flags)})"


def _some(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
