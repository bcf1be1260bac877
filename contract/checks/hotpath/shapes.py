"""Tensors the step builds with a size that changes between calls (`torch.randn(2, 3 + i, 8)`, `tokens[:, :n]`)
and hands to a compiled region: Dynamo recompiles for the first new shape, then compiles a dynamic graph (with
`dynamic = false`, one graph per shape). The most common recompile report there is: variable sequence lengths."""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable
from typing import Any

import torch

from contract.checks.hotpath.breaks import DYNAMIC_SHAPE_OPS
from contract.checks.hotpath.flow import change
from contract.checks.hotpath.model import MISSING
from contract.checks.hotpath.resolve import Env, resolve
from contract.checks.hotpath.source import call_method, own_nodes, parse_source, user_code

FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "full", "randint", "arange", "randperm"})
"""Torch factories whose size comes from their arguments."""


def changing_shape(
    env: Env,
    node: ast.expr,
    scalar: Callable[[ast.expr], bool],
    shaped: set[str],
    lists: frozenset[str] = frozenset(),
) -> bool:
    """A tensor whose size the step computes from what changes between calls: a factory call with a changing size
    argument, a slice with a changing bound, a list of such tensors, an item a helper's dict of them holds
    (`batch["input_ids"]`), or a local bound to any of these (`shaped`; `lists` are the step's list displays)."""
    if isinstance(node, ast.Name):
        return node.id in shaped
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(changing_shape(env, e, scalar, shaped, lists) for e in node.elts)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return changing_shape(env, node.value, scalar, shaped, lists)
    if isinstance(node, ast.Subscript):
        return any(_moves(env, b, scalar) for s in _slices(node.slice) for b in (s.lower, s.upper) if b is not None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FACTORIES:
        if resolve(env, node.func) is not getattr(torch, node.func.attr, None) or _fixed_range(node):
            return False
        sizes = [*_size_args(node), *(k.value for k in node.keywords if k.arg == "size")]
        return any(_moves(env, s, scalar) for s in sizes)
    if isinstance(node, ast.Call):
        return helper_shape(
            env,
            node,
            lambda e: _moves(env, e, scalar),
            lambda e: changing_shape(env, e, scalar, shaped, lists),
            lambda e: isinstance(e, (ast.List, ast.Tuple)) or isinstance(e, ast.Name) and e.id in lists,
        )
    return False


def _fixed_range(node: ast.Call) -> bool:
    """`torch.arange(i, i + 6)`: a window that moves but keeps its length (its end is its start plus a constant, the
    step absent or constant)."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "arange" and len(node.args) in (2, 3)):
        return False
    start, end = node.args[0], node.args[1]
    if len(node.args) == 3 and not isinstance(node.args[2], ast.Constant):
        return False
    if not (isinstance(end, ast.BinOp) and isinstance(end.op, ast.Add)):
        return False
    shown = ast.unparse(start)
    return any(
        ast.unparse(a) == shown and isinstance(b, ast.Constant)
        for a, b in ((end.left, end.right), (end.right, end.left))
    )


RESHAPES = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty", "new_full"})
"""Tensor methods whose result's size comes from their arguments."""


def helper_shape(
    env: Env,
    call: ast.Call,
    moving: Callable[[ast.expr], bool],
    shaped: Callable[[ast.expr], bool],
    listed: Callable[[ast.expr], bool] = lambda e: False,
) -> bool:
    """A helper of the step's own code called with changing sizes or tensors (`pack_latents(noise, 1, 4, h, w)`,
    `prepare_ids(h // 2, w // 2)`, a collator given the batch's examples) returns a tensor whose size follows them:
    it builds its result with a factory, a view or a reshape from those parameters, or from a tensor they sized. The
    helper's body is read in order; the length of a list it is given is fixed, and a setting of its object
    (`self.max_length or longest`) is a constant."""
    fn, owner = call_method(resolve(env, call.func), MISSING)
    src = parse_source(fn) if user_code(fn) else None
    if src is None or not isinstance(src.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    bound = 1 if owner is not MISSING else _bound(env, call.func)
    params = [a.arg for a in (*src.node.args.posonlyargs, *src.node.args.args)]
    given = {**dict(zip(params[bound:], call.args, strict=False)), **{k.arg: k.value for k in call.keywords if k.arg}}
    passed = {name: arg for name, arg in given.items() if not isinstance(arg, ast.Starred)}
    sizes = {name for name, arg in passed.items() if moving(arg)}
    tensors = {name for name, arg in passed.items() if shaped(arg)}
    lists = {name for name, arg in passed.items() if name in tensors and listed(arg)}
    data = {name for name, arg in passed.items() if resolve(env, arg) is MISSING}  # fresh every call
    if owner is MISSING and bound and isinstance(call.func, ast.Attribute):
        owner = resolve(env, call.func.value)  # `collator.pad(examples)`: the method's object
    setting = _setting(owner, params)
    for node in sorted(_statements(src.node), key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Return):
            return node.value is not None and _sized(node.value, sizes, tensors, data, lists)
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and setting(node.value):
            continue
        if isinstance(target, ast.Name) and _sized(node.value, sizes, tensors, data, lists):
            tensors.add(target.id)
        elif isinstance(target, ast.Name) and _reads(node.value, sizes):
            sizes.add(target.id)
        elif isinstance(target, ast.Name) and _reads(node.value, data):
            data.add(target.id)
    return False


def _setting(owner: Any, params: list[str]) -> Callable[[ast.expr], bool]:
    """Whether an expression is a number set on the helper's object (`self.max_length`, or `self.max_length or
    longest` with the setting on): the same on every call, whatever the call is given."""
    me = params[0] if params else None

    def known(node: ast.expr) -> bool:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return known(node.values[0]) and bool(_value(node.values[0]))
        return type(_value(node)) is int

    def _value(node: ast.expr) -> Any:
        if owner is MISSING or not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return MISSING
        return getattr(owner, node.attr, MISSING) if node.value.id == me else MISSING

    return known


def _bound(env: Env, func: ast.expr) -> int:
    """1 when the call is a method of an object (`info.nest(n)`: `self` takes no argument of the call), else 0."""
    if not isinstance(func, ast.Attribute):
        return 0
    owner = resolve(env, func.value)
    if owner is MISSING or isinstance(owner, (types.ModuleType, type)):
        return 0
    return 0 if isinstance(inspect.getattr_static(type(owner), func.attr, None), staticmethod) else 1


def _statements(fn: ast.AST) -> list[ast.Assign | ast.Return]:
    """The helper's assignments and returns (nested definitions are other scopes)."""
    return [n for n in own_nodes(fn) if isinstance(n, (ast.Assign, ast.Return))]


def _reads_sized(node: ast.AST, tensors: set[str], lists: set[str]) -> bool:
    """Reads a sized tensor, other than through `len()` of a list of them (how many there are does not change)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.Name) and arg.id in lists:
            return False
    if isinstance(node, ast.Name):
        return node.id in tensors
    return any(_reads_sized(child, tensors, lists) for child in ast.iter_child_nodes(node))


def _reads(node: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _sized(node: ast.expr, sizes: set[str], tensors: set[str], data: set[str], lists: set[str]) -> bool:
    """A tensor whose size follows the changing sizes: built from them, computed from a tensor that does (the
    length of a list of them excepted), or cut by a data-dependent op (`mask.nonzero()`, `x.unique()`) from data that
    is new every call."""
    if _reads_sized(node, tensors, lists):
        return True
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if name in FACTORIES | RESHAPES and any(_reads(a, sizes) for a in _size_args(call)):
            return True
        if name in DYNAMIC_SHAPE_OPS and _reads(call, data):
            return True
    return False


def _slices(index: ast.expr) -> list[ast.Slice]:
    """The slices of an index (`x[:, :n]` has two parts, one a slice)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return [p for p in parts if isinstance(p, ast.Slice)]


def _size_args(node: ast.Call) -> list[ast.expr]:
    """Size expressions of a factory or reshape call: its ints, or the elements of a tuple/list size; `full`'s fill
    value and `randint`'s bounds are not sizes (`randint(0, V, (B, L))`)."""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    args = node.args[:1] if name in ("full", "new_full") else node.args
    if name == "randint":
        args = [a for a in node.args if isinstance(a, (ast.Tuple, ast.List))]
    out: list[ast.expr] = []
    for arg in args:
        out += arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]
    return out


def _moves(env: Env, node: ast.expr, scalar: Callable[[ast.expr], bool]) -> bool:
    """A Python number the step changes between calls."""
    return scalar(node) and change(env, node) is not None


def grows_by_concat(env: Env, target: ast.expr, value: ast.expr) -> bool:
    """`self.k = torch.cat([self.k, k_new], dim=-2)` (a KV cache that grows by concatenation): tensor state on a
    real object replaced by itself plus more, so its size changes on every call that runs it."""
    if not (isinstance(value, ast.Call) and value.args and isinstance(value.args[0], (ast.List, ast.Tuple))):
        return False
    if not any(resolve(env, value.func) is f for f in (torch.cat, torch.concat, torch.concatenate)):
        return False
    if not isinstance(target, (ast.Attribute, ast.Subscript)) or resolve(env, target.value) is MISSING:
        return False
    shown = ast.unparse(target)
    return any(ast.unparse(e) == shown for e in value.args[0].elts)


def ragged_loader(value: Any) -> str:
    """A `DataLoader` that keeps a smaller last batch (`drop_last=False` over a dataset its batch size does not
    divide): the batch the step draws changes size at every epoch's end, a recompile there (a batch of one is
    specialized on its own). Only datasets whose length torch or Python computes are measured (no user code runs)."""
    from torch.utils.data import DataLoader

    if not isinstance(value, DataLoader) or value.drop_last or not isinstance(value.batch_size, int):
        return ""
    data = value.dataset
    if not (isinstance(data, (list, tuple)) or type(data).__module__.startswith("torch.")):
        return ""
    try:
        size = len(data)  # type: ignore[arg-type]
    except TypeError:  # an iterable dataset
        return ""
    last = size % value.batch_size
    if not last or size < value.batch_size:
        return ""
    return f"batches of a DataLoader ({size} samples, batch_size={value.batch_size}, drop_last=False: the last one of each epoch has {last})"
