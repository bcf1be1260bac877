"""Classifying writes into hazards: how an assignment rewrites its target (`step`, `selfref`, `assign`), and which
writes on the hot path, with the real current values, make Dynamo recompile."""

from __future__ import annotations

import ast
import collections
import functools
from dataclasses import replace
from typing import Any

import torch
from torch import nn

from contract import _torch_scan
from contract.checks.hotpath.conditions import is_scalar
from contract.checks.hotpath.model import MISSING, Hazard, ScanState, Write

SHOWN = {int: "int", bool: "bool", str: "str", float: "float", type(None): "None"}


@functools.lru_cache(maxsize=8192)
def aug_form(node: ast.AugAssign) -> str:
    """`+= k`/`-= k` (k not 0) and `^= True` change the value every call; other operators may settle (`*= 1`)."""
    if isinstance(node.op, (ast.Add, ast.Sub)) and not is_zero(node.value):
        return "step"
    if isinstance(node.op, ast.BitXor) and isinstance(node.value, ast.Constant) and node.value.value:
        return "step"
    return "settle" if isinstance(node.op, (ast.BitOr, ast.BitAnd)) else "selfref"


@functools.lru_cache(maxsize=8192)
def form_of(value: ast.expr, target: ast.expr) -> str:
    """(Cached per parsed node: every instance of a layer walks the same assignments.) How an assignment rewrites its
    target: `step` changes it every call (`x = x + 1`, `x = not x`), `settle`
    normalises or bounds it and stops changing (`max(x, n)`, `x or d`, `Mode(x)`), `selfref` reads it otherwise,
    `assign` does not read it (the walk marks a tensor assigned `tensor`, and a saved value put back `restore`)."""
    text = ast.unparse(target)
    if not reads_same(value, target):
        return "assign"
    if settles(value, text):
        return "settle"
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not) and ast.unparse(value.operand) == text:
        return "step"
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.BitXor)):
        left = as_item(value.left) or ast.unparse(value.left)
        right = as_item(value.right) or ast.unparse(value.right)
        other = (
            value.right if left == text else value.left if right == text and not isinstance(value.op, ast.Sub) else None
        )
        if (
            other is not None
            and ast.unparse(other) != text
            and not is_zero(other)
            and (not isinstance(value.op, ast.BitXor) or isinstance(other, ast.Constant) and other.value)
        ):
            return "step"
    return "selfref"


def settles(value: ast.expr, text: str) -> bool:
    """`max(x, n)`/`min(x, n)` (a high-water mark), `x or d`/`x and d` (a default kept), `Mode(x)`/`int(x)` (a
    conversion of itself), `x if x is not None else d`: the value stops changing once it holds what they produce."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("max", "min"):
        return any(ast.unparse(a) == text for a in value.args)
    if isinstance(value, ast.BoolOp):
        return ast.unparse(value.values[0]) == text
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        return ast.unparse(value.args[0]) == text and _type_name(value.func)
    return (
        isinstance(value, ast.IfExp)
        and ast.unparse(value.test) in (f"{text} is None", f"{text} is not None")
        and text in (ast.unparse(value.body), ast.unparse(value.orelse))
    )


def _type_name(func: ast.expr) -> bool:
    """A call that converts rather than computes: a builtin type or a class (capitalised by convention)."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("int", "str", "bool", "float") or name[:1].isupper()


def literal(node: ast.expr) -> Any:
    """The value of a constant expression (`False`, `0`, `"x"`), else MISSING."""
    return node.value if isinstance(node, ast.Constant) else MISSING


def is_zero(node: ast.expr) -> bool:
    """A literal that leaves a value unchanged when added (0, "", False)."""
    return isinstance(node, ast.Constant) and not node.value


def reads_same(value: ast.expr, target: ast.expr) -> bool:
    """Whether the assigned expression reads the target it is assigned to (`x.n = x.n + 1`, `f = not f`,
    `d[k] = d.get(k, 0) + 1`)."""
    text = ast.unparse(target)
    kind = type(target)
    tail = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and as_item(n) == text:
            return True
        if type(n) is not kind or not isinstance(getattr(n, "ctx", None), ast.Load):
            continue
        if tail is not None and (n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None)) != tail:
            continue  # cheap pre-check before unparsing
        if ast.unparse(n) == text:
            return True
    return False


def as_item(node: ast.AST) -> str:
    """`d.get(k, ...)` read as the item `d[k]` (its text), else ""."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return ast.unparse(ast.Subscript(value=node.func.value, slice=node.args[0], ctx=ast.Load()))
    return ""


def classify_writes(
    state: ScanState,
    step_keys: frozenset[tuple[int, str]] = frozenset(),
    pinned: frozenset[tuple[int, str]] = frozenset(),
) -> list[Hazard]:
    """Decide, with the real current values, which writes on the hot path are hazards. A write behind a dormant guard
    counts only when something flips that guard: the hot path itself (then it is certain) or the step (a warning).
    A write of the value the state holds changes nothing while nothing else changes it; state the step sets to one
    constant before every compiled call (`pinned`) looks the same to every call, whatever the hot path wrote."""
    hot = {w.key for w in state.writes if w.guard is None and not keeps_value(w)}
    temporary = restored_keys(state)
    out = []
    for w in state.writes:
        if w.key in temporary or w.key in pinned or w.form in ("once", "restore"):
            continue
        if keeps_value(w) and w.key not in hot and w.key not in step_keys:
            continue
        hazard = write_hazard(w, state.reads)
        if hazard is not None and hazard.kind == "container" and w.key in state.loop_resets:
            continue  # the step empties it before every call: the same length at every call
        if hazard is not None and hazard.kind == "counter":
            hazard = replace(hazard, pattern=counter_pattern(w, state))
        if hazard is not None and w.guard is not None and not w.guard.keys & hot:
            if w.guard.keys and not w.guard.keys & step_keys:
                continue  # nothing turns the guard on: the code never runs compiled
            hazard = replace(hazard, certain=False, guard=", ".join(w.guard.guards))
        if hazard is not None:
            out.append(hazard)
    return out


def restored_keys(state: ScanState) -> set[tuple[int, str]]:
    """State the hot path sets for the duration of a call and puts back, so Dynamo sees the same value at every
    call's entry: written back from a saved copy (`old = self.x; ...; self.x = old`, `del self.x`); set and reset
    with constants that include its current value (`self.compiling = True` ... `self.compiling = False`); set, then
    last written with the constant it holds now (a context's exit: `cls.enabled = flag` ... `cls.enabled = False`);
    or a nesting depth whose enter and exit add up to nothing (`cls.depth += 1` ... `cls.depth -= 1`)."""
    keys = {w.key for w in state.writes if w.form == "restore"}
    by_key: dict[tuple[int, str], list[Write]] = {}
    for w in state.writes:
        by_key.setdefault(w.key, []).append(w)
    for key, writes in by_key.items():
        values = {repr(w.literal) for w in writes if w.literal is not MISSING}
        if len(values) > 1 and all(w.literal is not MISSING for w in writes) and repr(writes[0].value) in values:
            keys.add(key)
        elif len({w.where for w in writes}) > 1 and (_reset_last(writes) or _balanced(writes)):
            keys.add(key)
    return keys


def _reset_last(writes: list[Write]) -> bool:
    """The last write, in the order the walk met them, puts back the constant the state holds now."""
    last = writes[-1]
    return last.literal is not MISSING and type(last.literal) is type(last.value) and last.literal == last.value


def _balanced(writes: list[Write]) -> bool:
    """Constant increments at different sites that add up to nothing: each call leaves the value as it found it."""
    sites = {w.where: w.delta for w in writes}
    return all(d is not None for d in sites.values()) and sum(d for d in sites.values() if d is not None) == 0


def written_keys(state: ScanState) -> frozenset[tuple[int, str]]:
    """State the hot path rewrites (to a value it may not hold now)."""
    temporary = restored_keys(state)
    return frozenset(
        w.key
        for w in state.writes
        if w.guard is None and not keeps_value(w) and w.key not in temporary and w.form not in ("once", "restore")
    )


def write_hazard(w: Write, reads: dict[tuple[int, str], Any]) -> Hazard | None:
    """The hazard one write is: a certain counter/toggle (`step`), assigned or self-referencing state, a float."""
    value, read = w.value, w.key in reads or w.form != "assign"
    if isinstance(value, (torch.Tensor, nn.Module)) or not read or callable(value) and not is_scalar(value):
        return None
    if value is MISSING and serves_missing_attributes(w.owner):
        return None  # its value lives where user code keeps it: "not set before the first call" would be a guess
    shown = (
        f"{w.what} ({SHOWN.get(type(value), type(value).__name__)})"
        if value is not MISSING
        else f"{w.what} (not set before the first call)"
    )
    if isinstance(value, (list, dict, set, collections.deque)):
        return (
            Hazard(kind="container", what=shown, certain=False, where=w.where, region=w.region)
            if w.form != "assign"
            else None
        )
    if w.form == "settle" or w.form == "tensor" and (isinstance(value, torch.Tensor) or not w.read_before):
        return None  # a tensor set before anything reads it (`state.CB = self.CB`) is no guard at the call's entry
    if isinstance(value, float) or dropout_p(w):
        return Hazard(kind="float", what=shown, where=w.where, region=w.region)
    if is_scalar(value) and w.form == "step":
        return Hazard(kind="counter", what=shown, where=w.where, region=w.region)
    if is_scalar(value) and w.form == "selfref":
        return Hazard(kind="assigned", what=f"{shown}, rewritten from its own value,", where=w.where, region=w.region)
    if is_scalar(value) or value is None or value is MISSING:
        return Hazard(kind="assigned", what=shown, certain=value is not MISSING, where=w.where, region=w.region)
    return None


def counter_pattern(w: Write, state: ScanState) -> str:
    """The measured pattern a counter is (`versions.PATTERNS`): torch minors treat a class attribute, a closure cell
    and a module global differently, the last two also by whether anything but the update reads them."""
    if w.via == "class":
        return "class-counter"
    if w.via in ("cell", "global"):
        return f"{w.via}-counter-{'read' if read_elsewhere(state, w.key) else 'unread'}"
    return ""


def read_elsewhere(state: ScanState, key: tuple[int, str]) -> bool:
    """Whether the hot path reads the value other than to update it: a read off every line that writes it, or a
    bare `return n` some caller uses (a call made as a statement drops it)."""
    writes = {w.where for w in state.writes if w.key == key}
    for where, returned in state.value_reads.get(key, ()):
        dropped = returned in state.dropped_results and returned not in state.used_results
        if where not in writes and not dropped:
            return True
    return False


def serves_missing_attributes(owner: Any) -> bool:
    """The owner's class defines a `__getattr__` of its own (not torch's `nn.Module.__getattr__`, which serves
    parameters, buffers and submodules): an attribute its instance dict lacks may still be set, kept in a store the
    class reads (spikingjelly's `_memories`), and the scan runs no user code to read it."""
    for cls in type(owner).__mro__:
        if "__getattr__" in vars(cls):
            return not str(cls.__module__).startswith("torch.")
    return False


def keeps_value(w: Write) -> bool:
    """A write of the constant the state already holds (`self.debug = False` while it is False)."""
    return w.literal is not MISSING and type(w.literal) is type(w.value) and w.literal == w.value


def dropout_p(w: Write) -> bool:
    """A write to a Dropout's `p` (Dynamo specializes it like a float, always)."""
    return _torch_scan.is_dropout(w.owner) and w.key[1] == "p"


def per_instance(state: ScanState, binding: Any) -> list[Hazard]:
    """A Python int/str read on `self` that differs between the instances of one region: they share one code object,
    so each value is one more compile (the reuse regional compilation is for is lost), and past the recompile limit
    the rest run eager. Values read inside one target (a model compiled whole) are constants of its one graph: only
    the distinct sets of values across the region's targets count. A read under a test the scan cannot decide may
    never run: it counts only past the limit, and not at all when the calls the step makes never reach it."""
    out = []
    for (region, where, what), by_target in state.scalar_reads.items():
        key = (region, where, what)
        if key in state.branch_reads and region in state.called and key not in state.confirmed:
            continue
        distinct = {frozenset(values) for values in by_target.values()}
        limit = binding.regions[region].region.recompile_limit or default_recompile_limit()
        if len(distinct) > (limit if key in state.branch_reads else 1):
            beyond = f", beyond the recompile limit {limit}" if len(distinct) > limit else ""
            out.append(
                Hazard(
                    kind="per-instance",
                    where=where,
                    region=region,
                    what=f"{what} ({len(distinct)} distinct values across {len(by_target)} instances{beyond})",
                )
            )
    return out


def per_instance_shapes(binding: Any) -> list[Hazard]:
    """Instances of one structure (the same module classes, in order) under one region whose parameters and buffers
    differ in shape or dtype (quantized weights packed per tensor type): they share one compiled code object and
    Dynamo keeps parameter shapes static, so each distinct set is one more compile (measured on torch 2.13)."""
    if not _torch_scan.static_parameter_shapes():
        return []
    out = []
    for name, rb in binding.regions.items():
        groups: dict[str, dict[tuple, str]] = collections.defaultdict(dict)
        for t in rb.targets if rb.region.enabled and len(rb.targets) > 1 else ():
            structure = ",".join(type(m).__qualname__ for m in t.module.modules())
            groups[structure].setdefault(_tensor_shapes(t.module), t.path)
        for structure, paths in groups.items():
            if len(paths) > 1:
                what = f"the parameter and buffer shapes of {structure.split(',')[0]} ({len(paths)} distinct sets)"
                out.append(Hazard(kind="per-instance-shape", where=list(paths.values())[1], region=name, what=what))
    return out


def per_instance_classes(binding: Any) -> list[Hazard]:
    """Instances of different classes under one region whose compiled method is one inherited function (augmentation
    ops sharing their base class's `forward`): Dynamo keeps one cache per code object and guards `self`'s type, so
    each class is one more compile of that frame, and past the recompile limit the other classes run eager
    (measured on torch 2.13: ten classes, eight compiles)."""
    out = []
    for name, rb in binding.regions.items():
        by_code: dict[Any, dict[type, str]] = collections.defaultdict(dict)
        for t in rb.targets if rb.region.enabled else ():
            code = getattr(getattr(type(t.module), t.method, None), "__code__", None)
            if code is not None:
                by_code[code].setdefault(type(t.module), t.path)
        limit = rb.region.recompile_limit or default_recompile_limit()
        for code, paths in by_code.items():
            if len(paths) > 1:
                beyond = f", beyond the recompile limit {limit}" if len(paths) > limit else ""
                what = f"the class of `self` in {code.co_qualname} ({len(paths)} classes share it{beyond})"
                out.append(Hazard(kind="per-instance-class", where=list(paths.values())[1], region=name, what=what))
    return out


def _tensor_shapes(module: nn.Module) -> tuple:
    """(name, shape, dtype) of a module's parameters and buffers, in order."""
    tensors = [*module.named_parameters(), *module.named_buffers()]
    return tuple((n, tuple(t.shape), str(t.dtype)) for n, t in tensors)


def default_recompile_limit() -> int:
    """torch's global recompile limit (a region without its own `recompile_limit` gets this one)."""
    return _torch_scan.recompile_limit()
