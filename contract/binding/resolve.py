"""Resolve each region's module glob and methods against the model: the Binding, or CC5xx findings (and CC009 when
the document has no region at all)."""

from __future__ import annotations

import difflib
import fnmatch
import inspect
from collections.abc import Callable
from typing import Any

from torch import nn

from contract import _distributed
from contract.binding.rules import CONTAINER, NESTED, NO_MATCH, NO_METHOD, OVERLAP, UNKNOWN_ARG
from contract.binding.targets import Binding, RegionBinding, Target, inside
from contract.document.load import Contract
from contract.document.rules import NO_REGIONS
from contract.document.schema import Region
from contract.findings import Finding


def glob_match(pattern: str, name: str) -> bool:
    """Match a dotted module name: `*` is one segment, `**` zero or more, `""` only the root."""
    if pattern == "" or name == "":
        return pattern == name or pattern == "**"
    return _match_segments(tuple(pattern.split(".")), tuple(name.split(".")))


def _match_segments(pat: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not pat:
        return not parts
    if pat[0] == "**":
        return any(_match_segments(pat[1:], parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pat[0]) and _match_segments(pat[1:], parts[1:])


def bind(contract: Contract, model: nn.Module) -> tuple[Binding, list[Finding]]:
    """Resolve every region's glob and methods against the model; problems are CC5xx findings."""
    modules = claimable_modules(model)
    binding = Binding(contract=contract, model=model, regions={})
    findings: list[Finding] = []
    for region in contract.regions:
        matched = [(n, m) for n, raw, m in modules if glob_match(region.module, n) or glob_match(region.module, raw)]
        if not matched:
            findings.append(_no_match(region, [n for n, _, _ in modules]))
        rb = RegionBinding(region=region)
        for method in region.methods:
            _claim(binding, rb, matched, method, findings)
        binding.regions[region.name] = rb
    findings.extend(_nested(binding))
    if not contract.region_tables:
        findings.append(
            NO_REGIONS.finding(
                "region",
                "the contract has no [[region]]: nothing is compiled, monitored or budgeted",
                'add a [[region]] with name and module, e.g. name = "model" and module = "" for the whole model',
            )
        )
    return binding, findings


def claimable_modules(model: nn.Module) -> list[tuple[str, str, nn.Module]]:
    """(path, raw path, module) of every module a region can claim, its path as the user's model names it.

    Wrappers are seen through: DistributedDataParallel and torch.compile's OptimizedModule are transparent (the module
    they wrap stands at their path, so `module = ""` on `DDP(model)` compiles the model, not DDP's forward); an
    activation-checkpoint wrapper stands for the module it wraps (as torchtitan compiles it). FSDP2 changes no path.
    Globs match the path, or the raw `named_modules()` name (`module.layers.0`).
    """
    raw = dict(model.named_modules())
    out = []
    for path, module in raw.items():
        logical = _logical_path(path, raw)
        if logical is not None and _distributed.wrapper_kind(module) not in ("ddp", "optimized"):
            out.append((logical, path, module))
    return out


def _logical_path(path: str, raw: dict[str, nn.Module]) -> str | None:
    """A raw module name without wrapper segments; None for a module a checkpoint wrapper stands for."""
    if not path:
        return ""
    parts, kept = path.split("."), []
    for i, seg in enumerate(parts):
        kind = _distributed.wrapper_kind(raw.get(".".join(parts[:i])))
        if kind is not None and seg == _distributed.WRAPPED_ATTR[kind]:
            if kind == "checkpoint" and i == len(parts) - 1:
                return None
            continue
        kept.append(seg)
    return ".".join(kept)


def _claim(binding: Binding, rb: RegionBinding, matched: list, method: str, findings: list[Finding]) -> None:
    """Claim `method` on each matched module; missing or unreadable methods and double claims are findings."""
    region = rb.region
    for path, module in matched:
        if method == "forward" and isinstance(module, (nn.ModuleList, nn.ModuleDict)):
            findings.append(_container(region, path, module))
            continue
        fn, error = _read_method(module, method)
        if error is not None:
            findings.append(_unreadable(region, path, module, method, error))
            return
        if not callable(fn):
            findings.append(_no_method(region, path, module, method))
            return
        key = (id(module), method)
        other = binding.by_target.get(key)
        if other is not None:
            findings.append(
                OVERLAP.finding(
                    region.loc("module"),
                    f"{_shown(path)}.{method} is already claimed by region {other.region!r}",
                    "narrow one of the globs or change methods so each module method belongs to one region",
                )
            )
            continue
        unknown = _unknown_dims(region, fn)
        if unknown:
            findings.append(unknown)
            return
        target = Target(
            region=region.name,
            path=path,
            method=method,
            module=module,
            instance_attr=module.__dict__.get(method),
            via_call_impl=method == "forward" and region.enabled,
        )
        binding.by_target[key] = target
        rb.targets.append(target)


def _read_method(module: nn.Module, method: str) -> tuple[Any, Exception | None]:
    """The attribute, or the exception reading it raised (a property may raise anything; the user's code runs)."""
    try:
        return getattr(module, method, None), None
    except Exception as exc:
        return None, exc


def _unreadable(region: Region, path: str, module: nn.Module, method: str, error: Exception) -> Finding:
    """CC503 for a claimed name whose lookup raises (typically a property), naming the exception."""
    text = " ".join(str(error).split())
    raised = f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__
    return NO_METHOD.finding(
        region.loc("methods"),
        f"reading {_shown(path)}.{method} ({type(module).__name__}) raised {raised}",
        f"make {method} a plain method (a property that raises cannot be compiled), or remove it from methods",
    )


def _unknown_dims(region: Region, fn: Callable) -> Finding | None:
    """CC505 when `dynamic_dims` names an argument the method does not take."""
    params = parameters(fn)
    if params is None:
        return None
    missing = [name for name in region.dynamic_dims if name not in params]
    if not missing:
        return None
    return UNKNOWN_ARG.finding(
        region.loc("dynamic_dims"),
        f"{getattr(fn, '__qualname__', fn)} has no argument {missing[0]!r}",
        f"use one of its arguments: {', '.join(params) or '(none)'}",
    )


def parameters(fn: Callable) -> list[str] | None:
    """Parameter names of a (bound) callable, or None when it has no inspectable signature."""
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


def _container(region: Region, path: str, module: nn.Module) -> Finding:
    """CC506: a module container matched for its forward, which nothing calls."""
    children = f"{path}.*" if path else "*"
    return CONTAINER.finding(
        region.loc("module"),
        f"{_shown(path)} is an {type(module).__name__}: the model calls its children, never the container, so "
        f"region {region.name!r} compiles nothing there",
        f'match its children: module = "{children}"',
    )


def _no_match(region: Region, names: list[str]) -> Finding:
    """CC501 with the closest module names as candidates."""
    depth = len(region.module.split(".")) if region.module else 0
    close = difflib.get_close_matches(region.module, names, n=4, cutoff=0.4)
    close = close or [n for n in names if n and len(n.split(".")) == depth][:4] or names[:4]
    shown = ", ".join(_shown(n) for n in close)
    return NO_MATCH.finding(
        region.loc("module"),
        f"glob {region.module!r} matches no module of the model",
        f"use an existing module name, e.g. {shown}",
    )


def _no_method(region: Region, path: str, module: nn.Module, method: str) -> Finding:
    """CC503 with the closest public methods as candidates, else the module's own public methods."""
    return NO_METHOD.finding(
        region.loc("methods"),
        f"{_shown(path)} ({type(module).__name__}) has no method {method!r}",
        _methods_hint(module, method),
    )


MAX_LISTED_METHODS = 8
"""Candidates listed in a CC503 fix line when none is close to the name written."""


def _methods_hint(module: nn.Module, method: str) -> str:
    """`did you mean ...?`, else `use one of its methods: ...` (`forward` and what its classes add to nn.Module)."""
    public = public_methods(type(module))
    close = difflib.get_close_matches(method, public, n=3)
    if close:
        return f"did you mean {', '.join(close)}?"
    base = set(public_methods(nn.Module)) - {"forward"}
    ordered = [n for n in public if n not in base] or public
    shown = ordered[:MAX_LISTED_METHODS]
    more = ", ..." if len(ordered) > len(shown) else ""
    return f"use one of its methods: {', '.join(shown)}{more}" if shown else "define the method on the module's class"


def public_methods(cls: type) -> list[str]:
    """Public callables a class defines or inherits, sorted (class-level lookup: no property or user code runs)."""
    out = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        try:
            attr = inspect.getattr_static(cls, name)
        except AttributeError:
            continue
        if callable(attr) or isinstance(attr, (staticmethod, classmethod)):
            out.append(name)
    return sorted(out)


def _nested(binding: Binding) -> list[Finding]:
    """CC504: a compiled region inside another compiled region's forward is inlined there."""
    outers = [
        (t.path, t.region)
        for t in binding.targets()
        if t.method == "forward" and binding.regions[t.region].region.enabled
    ]
    found: dict[tuple[str, str], Finding] = {}
    for rb in binding.regions.values():
        if not rb.region.enabled:
            continue
        for t in rb.targets:
            for opath, oregion in outers:
                if oregion != t.region and inside(t.path, opath) and (t.region, oregion) not in found:
                    found[(t.region, oregion)] = NESTED.finding(
                        rb.region.loc("module"),
                        f"{_shown(t.path)} lies inside region {oregion!r} "
                        f"({_shown(opath)}), which inlines it when compiled",
                        f"compile either region, or set enabled = false on {oregion!r}",
                    )
    return list(found.values())


def _shown(path: str) -> str:
    return path or "<root>"
