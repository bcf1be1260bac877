"""CC1xx: compile settings checked against the installed torch, before anything compiles.

torch validates backend, mode and options only when `torch.compile()` is called (mode and options only for the
inductor backend); these checks run the same validation up front, for every region, so the engine never starts
half-compiled. torch is imported lazily (inside the checks) so `compile-contract rules` and `doctor` stay fast.
"""

from __future__ import annotations

import difflib
import json
import re
import typing
from collections.abc import Iterable
from typing import Any

from contract.checks.context import CheckContext
from contract.checks.settings.rules import (
    CUDAGRAPHS_DYNAMIC,
    EAGER_WITHOUT_REASON,
    FULLGRAPH_BUDGET,
    IGNORED_BY_BACKEND,
    MODE_AND_OPTIONS,
    NEEDS_NEWER_TORCH,
    OPTION_TYPE,
    TORCH_VERSION,
    UNKNOWN_BACKEND,
    UNKNOWN_MODE,
    UNKNOWN_OPTION,
    UNTESTED_TORCH,
)
from contract.document.schema import Region
from contract.findings import Finding

IGNORING_BACKENDS = frozenset({"eager", "aot_eager"})
"""Backends that drop `mode` and `options` silently."""
CUDAGRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})
"""Modes that turn on `triton.cudagraphs` (torch 2.11-2.13), used when the mode cannot be looked up."""
NEW_KWARGS = {"recompile_limit": "2.12"}
"""Region setting -> the torch version whose `torch.compile` accepts it."""
POPPED_OPTIONS = frozenset({"guard_filter_fn", "use_aoti"})
"""Keys `torch.compile` pops out of `options` before validating them."""


def check(ctx: CheckContext) -> list[Finding]:
    """All settings checks: the torch version, then each region's settings (torch is imported here)."""
    out = check_torch_version(ctx) + check_tested_torch()
    for region in ctx.contract.regions:
        out += check_region(ctx.contract.defaults, region)
    return _dedupe(out)


def check_torch_version(ctx: CheckContext, installed: str | None = None) -> list[Finding]:
    """CC109 from package metadata; needs no torch import, so `doctor` runs it too."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    from contract.env import torch_version

    meta = ctx.contract.meta
    if meta is None or meta.torch is None:
        return []
    installed = installed or torch_version()
    if installed is None:
        return [
            TORCH_VERSION.finding(
                "contract.torch",
                f"torch is not installed (contract requires {meta.torch})",
                f'pip install "torch{meta.torch}" in this environment',
            )
        ]
    try:
        public = Version(installed).public
    except InvalidVersion:
        return []
    if SpecifierSet(meta.torch).contains(public, prereleases=True):
        return []
    return [
        TORCH_VERSION.finding(
            "contract.torch",
            f"installed torch {installed} does not satisfy {meta.torch!r}",
            f"install torch{meta.torch}, or re-validate the contract and update [contract] torch",
        )
    ]


def check_tested_torch(installed: str | None = None) -> list[Finding]:
    """CC112: the installed torch is outside the range this release is tested on (package metadata, no torch import,
    so `doctor` runs it too; no torch installed is CC109's business)."""
    from contract.env import is_tested_torch, torch_range_specifier, torch_range_text, torch_version

    installed = installed or torch_version()
    if installed is None or is_tested_torch(installed):
        return []
    minor = re.match(r"\d+\.\d+", installed)
    where = f"torch=={minor.group(0)}.*" if minor else f"torch=={installed}"
    return [
        UNTESTED_TORCH.finding(
            f"torch=={installed}",
            f"torch {installed} is outside the tested range (torch {torch_range_text()}): the checks and the "
            "monitor read torch internals that may have changed",
            f'install a tested torch: pip install "torch{torch_range_specifier()}" (or, once validated on it: '
            f'[[allow]] code = "CC112", where = "{where}", reason = "...")',
        )
    ]


def check_region(defaults: Any, region: Region) -> list[Finding]:
    """Every settings check of one region (only CC111 for regions kept eager: the rest never compile)."""
    if not region.enabled:
        return _eager_reason(defaults, region)
    out = _document_checks(defaults, region)
    out += _backend(defaults, region)
    if region.backend == "inductor":
        out += _inductor_mode(defaults, region) + _inductor_options(defaults, region)
    out += _new_kwargs(defaults, region)
    return out


def _document_checks(defaults: Any, region: Region) -> list[Finding]:
    """Checks that need nothing but the contract (CC105, CC106, CC107, CC108)."""
    out = []
    if region.mode is not None and region.options:
        out.append(
            MODE_AND_OPTIONS.finding(
                _loc(defaults, region, "mode"),
                "mode and options are both set; torch.compile accepts only one",
                "keep one: express the mode as options, or drop the options",
            )
        )
    if region.backend in IGNORING_BACKENDS and (region.mode not in (None, "default") or region.options):
        key = "mode" if region.mode not in (None, "default") else "options"
        out.append(
            IGNORED_BY_BACKEND.finding(
                _loc(defaults, region, key),
                f"backend {region.backend!r} silently ignores {key}",
                'remove it, or use backend = "inductor"',
            )
        )
    if _uses_cudagraphs(region) and (region.dynamic is True or region.dynamic_dims):
        key = "dynamic" if region.dynamic is True else "dynamic_dims"
        out.append(
            CUDAGRAPHS_DYNAMIC.finding(
                _loc(defaults, region, key),
                "CUDA graphs with dynamic shapes re-record a graph for every new shape",
                "pad inputs to a few static shapes and set dynamic = false, or drop CUDA graphs here",
            )
        )
    if region.fullgraph and region.graph_break_budget > 0:
        out.append(
            FULLGRAPH_BUDGET.finding(
                _loc(defaults, region, "graph_break_budget"),
                f"fullgraph = true allows no graph break, but graph_break_budget = {region.graph_break_budget}",
                "set graph_break_budget = 0, or fullgraph = false",
            )
        )
    return out


def _uses_cudagraphs(region: Region) -> bool:
    """CUDA graphs through the backend, the mode or the `triton.cudagraphs` option."""
    if region.backend == "cudagraphs":
        return True
    return region.backend == "inductor" and (
        region.mode in CUDAGRAPH_MODES or region.options.get("triton.cudagraphs") is True
    )


def _eager_reason(defaults: Any, region: Region) -> list[Finding]:
    """CC111: a region kept eager needs a reason."""
    if region.reason and region.reason.strip():
        return []
    return [
        EAGER_WITHOUT_REASON.finding(
            region.loc("reason"),
            f"region {region.name!r} is kept eager without a reason",
            'add reason = "..." (e.g. an issue link), or remove enabled = false',
        )
    ]


def _backend(defaults: Any, region: Region) -> list[Finding]:
    """CC101 against the backends torch knows now."""
    from contract import _torch

    known = _torch.compile_backends()
    if region.backend in known:
        return []
    return [
        UNKNOWN_BACKEND.finding(
            _loc(defaults, region, "backend"),
            f"unknown backend {region.backend!r}",
            _suggest(region.backend, known, "register the backend before the check, or use"),
        )
    ]


def _inductor_mode(defaults: Any, region: Region) -> list[Finding]:
    """CC102 (inductor only: other backends interpret their own modes)."""
    from contract import _torch

    modes = _torch.inductor_modes()
    if region.mode is None or region.mode in modes:
        return []
    return [
        UNKNOWN_MODE.finding(
            _loc(defaults, region, "mode"),
            f"unknown inductor mode {region.mode!r}",
            _suggest(region.mode, modes, "use"),
        )
    ]


def _inductor_options(defaults: Any, region: Region) -> list[Finding]:
    """CC103/CC104, mirroring `_TorchCompileInductorWrapper.apply_options`."""
    from contract import _torch

    types = _torch.inductor_option_types()
    out = []
    for key, value in region.options.items():
        if key in POPPED_OPTIONS:
            continue
        loc = _loc(defaults, region, "options", key)
        name = key.replace("-", "_")
        if name not in types and isinstance(value, dict):
            out.append(_nested_options(loc, key, value, types))
        elif name not in types:
            out.append(
                UNKNOWN_OPTION.finding(
                    loc,
                    f"unknown inductor option {key!r}",
                    _suggest(name, _public(types), "check torch._inductor.list_options(); use"),
                )
            )
        elif _wrong_type(value, types[name]):
            out.append(
                OPTION_TYPE.finding(
                    loc,
                    f"option {key!r} must be {_type_name(types[name])}, got {type(value).__name__} {value!r}",
                    f"write {key} as a {_type_name(types[name])}",
                )
            )
    return out


def _nested_options(loc: str, key: str, value: dict, types: dict[str, Any]) -> Finding:
    """CC103 for `options.triton.cudagraphs = true`: TOML reads dotted keys as nested tables, torch wants flat names."""
    flat = _flatten(key, value)
    if not flat:
        return UNKNOWN_OPTION.finding(
            loc, f"options.{key} is an empty table, not an inductor option", f"remove options.{key}"
        )
    table = "{ " + ", ".join(f"{json.dumps(name)} = {json.dumps(v, default=str)}" for name, v in flat) + " }"
    return UNKNOWN_OPTION.finding(
        loc,
        f"options.{key} is a nested table, not an inductor option (the dotted key "
        f"options.{flat[0][0]} makes nested tables)",
        f"write options = {table} (quote keys that contain dots){_unknown_note(flat, types)}",
    )


def _unknown_note(flat: list[tuple[str, Any]], types: dict[str, Any]) -> str:
    """`; 'x.y' is not an option either: ...` when a flattened name is unknown too, so one run shows both."""
    unknown = [name.replace("-", "_") for name, _ in flat if name.replace("-", "_") not in types]
    if not unknown:
        return ""
    return f"; {unknown[0]!r} is not an option either: {_suggest(unknown[0], _public(types), 'use')}"


def _flatten(prefix: str, table: dict) -> list[tuple[str, Any]]:
    """Nested tables back to dotted option names: {"triton": {"cudagraphs": True}} -> [("triton.cudagraphs", True)]."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        name = f"{prefix}.{key}"
        out += _flatten(name, value) if isinstance(value, dict) and value else [(name, value)]
    return out


def _public(names: Iterable[str]) -> list[str]:
    """Names worth suggesting: no private (`_x`) or constant (`TYPE_CHECKING`) names of torch's config modules."""
    return [n for n in names if not n.startswith("_") and not n.isupper()]


def _wrong_type(value: Any, declared: Any) -> bool:
    """torch's rule: plain types are checked with isinstance, generic ones (`int | None`, `list[str]`) are not."""
    return typing.get_origin(declared) is None and isinstance(declared, type) and not isinstance(value, declared)


def _type_name(declared: Any) -> str:
    return getattr(declared, "__name__", str(declared))


def _new_kwargs(defaults: Any, region: Region) -> list[Finding]:
    """CC110: settings that map to `torch.compile` arguments newer than the installed torch."""
    from contract import _torch
    from contract.env import torch_version

    out = []
    for key, since in NEW_KWARGS.items():
        if getattr(region, key) is not None and not _torch.supports_compile_kwarg(key):
            out.append(
                NEEDS_NEWER_TORCH.finding(
                    _loc(defaults, region, key),
                    f"{key} needs torch >= {since} (installed {torch_version() or 'unknown'})",
                    f"upgrade torch to >= {since}, or remove {key}",
                )
            )
    return out


def _loc(defaults: Any, region: Region, key: str, sub: str | None = None) -> str:
    """`defaults.key` when the value comes from `[defaults]` unchanged, else `region[i].key` (plus option key)."""
    from contract.document.load import format_loc  # load imports the rules: import at use

    own = getattr(region, key)
    from_defaults = key in defaults.model_fields_set and _same(getattr(defaults, key), own, sub)
    base: tuple = ("defaults", key) if from_defaults else ("region", region.index, key)
    return format_loc(base + ((sub,) if sub is not None else ()))


def _same(inherited: Any, own: Any, sub: str | None) -> bool:
    """Whether the region's value (or one option of it) is the one `[defaults]` gives."""
    if sub is None:
        return inherited == own
    return isinstance(inherited, dict) and sub in inherited and inherited[sub] == own.get(sub)


def _suggest(value: str, known: Iterable[str], verb: str) -> str:
    """A fix line with the closest known name, else the list."""
    known = sorted(known)
    close = difflib.get_close_matches(value, known, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
    return f"{verb} one of: {shown}"


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """A bad `[defaults]` value is reported once, not once per region."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in findings:
        key = (f.code, f.location, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
