"""Regions for a model an engine has already compiled: one `compiled_by = "engine"` region per group of compiles
that share a container, a method and their settings, with the settings the engine used (so `check` verifies them).

The cut follows the engine, not our own proposal: torchtitan's per-block compiles are `layers.*`, a whole-model
`torch.compile` is the root, Lightning's compiled step methods are the root's `methods`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from torch import nn

from contract.binding.resolve import claimable_modules
from contract.init.propose import Proposal, Proposed, _names, _snake

EngineKey = tuple[str, str, Any]
"""(parent path or the module's own path, method, settings) of compiles that become one region."""


def propose_engine(model: nn.Module) -> Proposal | None:
    """The engine's compiles as regions, or None when nothing in the model is compiled."""
    from contract.binding.apply import engine_compiles

    found = engine_compiles(model)
    if not found:
        return None
    paths = {id(m): p for p, _, m in claimable_modules(model)}
    groups: dict[EngineKey, list[tuple[str, Any]]] = defaultdict(list)
    for comp in found.values():
        path = paths.get(id(comp.module))
        if path is not None:
            groups[_key(model, path, comp)].append((path, comp))
    cuts = [_region(key, members) for key, members in groups.items()]
    order = {p: i for i, (p, _, _) in enumerate(claimable_modules(model))}
    cuts.sort(key=lambda cut: order.get(cut[1].paths[0], len(order)))
    names = _names([base for base, _ in cuts], type(model).__name__)
    regions = tuple(_named(r, n) for n, (_, r) in zip(names, cuts, strict=True))
    root = any(r.module == "" for r in regions)
    return Proposal(regions=regions, left_out=(), spine=() if root else (("", type(model).__name__),))


def _key(model: nn.Module, path: str, comp: Any) -> EngineKey:
    """Compiles of the children of one container, with one method and one setting, share a glob."""
    parent = path.rpartition(".")[0] if "." in path else ("" if path else None)
    container = model.get_submodule(parent) if parent is not None and parent else None
    if parent is not None and isinstance(container, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
        return (parent + ".*", comp.method, comp.settings)
    return (path, comp.method, comp.settings)


def _region(key: EngineKey, members: list[tuple[str, Any]]) -> tuple[str, Proposed]:
    """(naming base, region) for one group: a glob when the whole container is compiled alike, else one path."""
    glob, method, settings = key
    paths = tuple(sorted(p for p, _ in members))
    comp = members[0][1]
    how = {"wrapper": "torch.compile(module)", "compile": "module.compile()", "method": f"a compiled {method}"}
    why = (
        f"compiled by the engine ({how.get(comp.kind, comp.kind)}, {len(paths)} module"
        f"{'s' if len(paths) != 1 else ''}): the contract verifies the engine's settings and compiles nothing"
    )
    base = glob[:-2] if glob.endswith(".*") else glob
    region = Proposed(
        name="",
        module=glob,
        why=why,
        paths=paths,
        cls=type(comp.module).__name__,
        engine=_settings_lines(settings),
        methods=() if method == "forward" else (method,),
    )
    return base or _snake(type(comp.module).__name__), region


def _named(region: Proposed, name: str) -> Proposed:
    import dataclasses

    return dataclasses.replace(region, name=name)


def _settings_lines(settings: Any) -> tuple[str, ...]:
    """The TOML lines of the settings the engine compiled with (options as one inline table)."""
    if settings is None:
        return ('compiled_by = "engine"', 'verify_at = "first_compile"  # its settings could not be read at start')
    dynamic = {None: '"auto"', True: "true", False: "false"}[settings.dynamic]
    lines = ['compiled_by = "engine"', f"backend = {_toml(settings.backend)}", f"dynamic = {dynamic}"]
    if settings.fullgraph is not None:
        lines.append(f"fullgraph = {'true' if settings.fullgraph else 'false'}")
    options = dict(settings.options)
    mode = options.pop("mode", None) if settings.backend != "inductor" else None  # other backends keep the mode
    if mode is not None:
        lines.append(f"mode = {_toml(mode)}")
    if options:  # Inductor's mode comes back expanded into its options: written as what it is
        lines.append("# the engine's mode, if any, comes back expanded into these options (compared the same way)")
        lines.append("options = { " + ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in options.items()) + " }")
    return tuple(lines)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
