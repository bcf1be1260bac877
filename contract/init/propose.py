"""Regions from the module tree, cut the way a PyTorch engineer would: each stack of repeated blocks is one glob
region, the remaining modules with parameters are a few named regions, glue stays eager; each choice explained.

A *repeated block* is a `ModuleList`/`ModuleDict` (or an `nn.Sequential` of two or more) whose children all share one
class: `model.layers.*`. Only the outermost such container counts (the experts inside a layer are compiled with the
layer). The modules on the way down to the blocks (the root, `model`) are not regions: compiling them would inline the
blocks (CC504). Their other children are the *rest*: a module with parameters and its own forward (a final RMSNorm, a
projection) or a `Linear` (the LM head) becomes a named region; one without parameters (rotary embeddings, dropout,
activations) or a single torch.nn kernel (Embedding, LayerNorm) is left eager, with the reason in a comment. A model
with no repeated block and nothing else to cut is one root region (`module = ""`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from torch import nn

CONTAINERS = (nn.ModuleList, nn.ModuleDict, nn.Sequential)
KEPT_BUILTINS = (nn.Linear,)
"""torch.nn classes worth a region of their own: a matmul Inductor can tune (mode) and fuse its epilogue into."""


@dataclass(frozen=True, kw_only=True)
class Proposed:
    """One proposed region."""

    name: str
    """Region name (the glob's last meaningful segment, made unique)."""
    module: str
    """Module glob."""
    why: str
    """Why this cut, for the comment above the region."""
    paths: tuple[str, ...]
    """Module paths it matches."""
    cls: str
    """Class name of the matched modules."""
    engine: tuple[str, ...] = ()
    """For a region the engine compiles: its TOML lines (`compiled_by = "engine"` and the settings it used)."""
    methods: tuple[str, ...] = ()
    """Methods other than `forward` (an engine's compiled step methods)."""


@dataclass(frozen=True, kw_only=True)
class LeftOut:
    """A module deliberately not compiled, and why."""

    path: str
    cls: str
    why: str


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """The regions, the modules left eager, and the containers above the regions."""

    regions: tuple[Proposed, ...]
    left_out: tuple[LeftOut, ...]
    spine: tuple[tuple[str, str], ...]
    """(path, class) of the modules that contain regions (not compiled themselves)."""


def propose(model: nn.Module) -> Proposal:
    """Cut the model into regions (see the module docstring)."""
    blocks = _blocks(model)
    spine = _spine(model, [path for path, _ in blocks])
    cuts = [_block_region(path, container) for path, container in blocks]
    left: list[LeftOut] = []
    for path, module in _rest(model, spine, {p for p, _ in blocks}):
        reason = _left_out_reason(module)
        if reason:
            left.append(LeftOut(path=path, cls=type(module).__name__, why=reason))
        else:
            cuts.append((path, _region(path, _kept_reason(module, bool(blocks)), (path,), module)))
    if not cuts:
        cuts.append(("", _region("", _root_reason(model, left), ("",), model)))
        spine = []
    order = {p: i for i, (p, _) in enumerate(model.named_modules())}
    cuts.sort(key=lambda cut: order.get(cut[1].paths[0], len(order)))
    names = _names([base for base, _ in cuts], type(model).__name__)
    return Proposal(
        regions=tuple(dataclasses.replace(r, name=n) for n, (_, r) in zip(names, cuts, strict=True)),
        left_out=tuple(left),
        spine=tuple((p, type(m).__name__) for p, m in spine),
    )


def _block_region(path: str, container: nn.Module) -> tuple[str, Proposed]:
    """(naming base, region) for a repeated-block container: one glob over its children."""
    children = list(container.named_children())
    cls = type(children[0][1]).__name__
    shown = ", ".join(_join(path, n) for n, _ in children[:2]) + (", ..." if len(children) > 2 else "")
    why = (
        f"{len(children)} {cls} block{'s' if len(children) != 1 else ''} ({shown}) in one "
        f"{type(container).__name__}: one glob region, compiled per block from one code object, "
        "budgets counted per block"
    )
    paths = tuple(_join(path, n) for n, _ in children)
    return path or _snake(cls), _region(f"{path}.*" if path else "*", why, paths, children[0][1])


def _region(glob: str, why: str, paths: tuple[str, ...], module: nn.Module) -> Proposed:
    """A region not named yet (names are made unique across all regions at the end)."""
    return Proposed(name="", module=glob, why=why, paths=paths, cls=type(module).__name__)


def _blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """Outermost repeated-block containers worth compiling, in module order."""
    out: list[tuple[str, nn.Module]] = []

    def visit(path: str, module: nn.Module) -> None:
        if _repeated(module):
            out.append((path, module))
            return
        for name, child in module.named_children():
            visit(_join(path, name), child)

    visit("", model)
    return out


def _repeated(module: nn.Module) -> bool:
    """A container whose children share one class that is worth compiling (not glue, not one torch.nn kernel)."""
    if not isinstance(module, CONTAINERS):
        return False
    children = list(module.children())
    minimum = 2 if isinstance(module, nn.Sequential) else 1
    if len(children) < minimum or len({type(c) for c in children}) != 1:
        return False
    return _left_out_reason(children[0]) is None


def _spine(model: nn.Module, blocks: list[str]) -> list[tuple[str, nn.Module]]:
    """The modules on the way from the root down to each block container (the containers excluded)."""
    wanted = {""}
    for path in blocks:
        parts = path.split(".") if path else []
        wanted.update(".".join(parts[:i]) for i in range(len(parts)))
    wanted -= set(blocks)
    return [(p, m) for p, m in model.named_modules() if p in wanted]


def _rest(model: nn.Module, spine: list[tuple[str, nn.Module]], blocks: set[str]) -> list[tuple[str, nn.Module]]:
    """Children of spine modules that are neither on the spine nor block containers."""
    on_spine = {p for p, _ in spine}
    out: list[tuple[str, nn.Module]] = []

    def visit(path: str, module: nn.Module) -> None:
        for name, child in module.named_children():
            full = _join(path, name)
            if full in on_spine or full in blocks:
                continue
            if isinstance(child, (nn.ModuleList, nn.ModuleDict)):  # no forward of its own: its children are the rest
                visit(full, child)
            else:
                out.append((full, child))

    for path, module in spine:
        visit(path, module)
    order = {p: i for i, (p, _) in enumerate(model.named_modules())}
    return sorted(out, key=lambda item: order.get(item[0], len(order)))


def _left_out_reason(module: nn.Module) -> str | None:
    """Why a module is not worth a region of its own, or None when it is."""
    cls = type(module).__name__
    if next(module.parameters(), None) is None:
        return f"no parameters ({cls}): glue or position math, cheap eager; add a region if a profile says it is hot"
    if _is_builtin(module) and not isinstance(module, KEPT_BUILTINS) and not list(module.children()):
        return (
            f"one torch.nn kernel ({cls}): compiled alone it adds a compile and a graph boundary with nothing to fuse"
        )
    return None


def _kept_reason(module: nn.Module, blocks: bool) -> str:
    """Why a module outside the repeated blocks gets its own region."""
    cls = type(module).__name__
    where = "outside the repeated blocks" if blocks else "a part of the model"
    if isinstance(module, KEPT_BUILTINS):
        return (
            f"{cls} {where} (as an LM head, the vocabulary projection: the largest single matmul): "
            "its own region, so its mode and budgets can be set apart"
        )
    return f"{cls} has parameters and its own forward, {where}: one named region"


def _root_reason(model: nn.Module, left: list[LeftOut]) -> str:
    """Why the whole model is one region."""
    cls = type(model).__name__
    if left:
        return f"{cls} has no repeated blocks and no part worth compiling alone: the whole model is one region"
    return f"{cls} has no repeated blocks and no submodules to cut: the whole model is one region"


def _is_builtin(module: nn.Module) -> bool:
    """A class defined by torch.nn itself (one eager kernel, or a container)."""
    return type(module).__module__.startswith("torch.nn.")


def _names(bases: list[str], root_cls: str) -> list[str]:
    """Region names: a path's last meaningful segment, widened with its parents until unique and >= 3 characters."""
    parts = [[s for s in base.split(".") if s and not s.isdigit()] or [_snake(root_cls)] for base in bases]
    width = [1] * len(parts)
    while True:
        names = [_clean("_".join(p[-w:])) for p, w in zip(parts, width, strict=True)]
        grow = [
            i
            for i, n in enumerate(names)
            if (names.count(n) > 1 or len(n) < 3) and width[i] < len(parts[i])  # widen what can be widened
        ]
        if not grow:
            return _dedupe(names)
        for i in grow:
            width[i] += 1


def _dedupe(names: list[str]) -> list[str]:
    """Suffix `_2`, `_3`... to names still equal after widening."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}"[:64])
    return out


def _clean(name: str) -> str:
    """A valid region name: letters, digits, `_ . : -`, starting with a letter or `_`, at most 64."""
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", name)
    return (name if re.match(r"^[A-Za-z_]", name) else "_" + name)[:64]


def _snake(cls: str) -> str:
    """`TinyDecoder` -> `tiny_decoder`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cls).lower()


def _join(path: str, name: str) -> str:
    """`model` + `layers` -> `model.layers` (the root is ``)."""
    return f"{path}.{name}" if path else name
