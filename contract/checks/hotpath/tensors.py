"""Which expressions certainly hold a tensor: a local type inference over one function, so that Python control flow on
a tensor's value (`if torch.rand(1) < self.p:`, `int(scores[0])`, `while (err > tol).any():`) is found whatever the
tensor was computed with, not only behind a list of reduction names.

A value is a tensor when it comes from torch's own operators (a builtin of the `torch` namespaces, `torch.nn.functional`),
from a tensor method, attribute, index, arithmetic or comparison on a tensor, from a torch layer (`self.proj(x)`),
from user code annotated to return one, or from a local last assigned such a value. Unknown stays unknown: precision
first, nothing is a tensor by guess except a reduction method on a value the scan cannot see (`y.sum()`).
"""

from __future__ import annotations

import ast
import types
from typing import Any

import torch
from torch import nn

from contract.checks.hotpath.fields import hints, tensor_hint
from contract.checks.hotpath.model import MISSING
from contract.checks.hotpath.resolve import Env, chain, resolve

TENSOR, TENSORS = "tensor", "tensors"
"""Kinds: one tensor, or a tuple of tensors (`x.chunk(2)`, `torch.topk(...)`) whose items are tensors."""

REDUCTIONS = frozenset(
    {
        "sum",
        "any",
        "all",
        "max",
        "min",
        "mean",
        "amax",
        "amin",
        "prod",
        "norm",
        "count_nonzero",
        "argmax",
        "argmin",
        "std",
        "var",
        "median",
        "nonzero",
    }
)
"""Tensor methods whose result, read by Python control flow, is data-dependent (a graph break): counted also on a
receiver the scan cannot see (no Python builtin type has them)."""

NOT_TENSOR_METHODS = frozenset(
    {
        "item",
        "tolist",
        "size",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "element_size",
        "stride",
        "storage_offset",
        "data_ptr",
        "get_device",
        "type",
        "untyped_storage",
        "storage",
        "numpy",
        "equal",
        "allclose",
        "dim_order",
        "__len__",
    }
)
"""Tensor methods returning Python values (metadata, or a value pulled out: `item`/`tolist` are reported apart)."""

MULTI = frozenset(
    {
        "split",
        "chunk",
        "unbind",
        "tensor_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "split_with_sizes",
        "meshgrid",
        "broadcast_tensors",
        "sort",
        "topk",
        "kthvalue",
        "mode",
        "aminmax",
        "frexp",
        "std_mean",
        "var_mean",
        "cummax",
        "cummin",
        "slogdet",
        "qr",
        "svd",
        "eig",
        "eigh",
        "lu",
        "histogram",
        "unique",
        "unique_consecutive",
    }
)
"""Operators returning a tuple of tensors."""

WITH_DIM_MULTI = frozenset({"max", "min", "median", "nanmedian"})
"""Reductions that return (values, indices) when given a dim."""

TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag", "grad", "values", "indices"})
"""Attributes of a tensor (or of a tuple of tensors: `.values`, `.indices`) that are tensors themselves."""

TORCH_NAMESPACES = frozenset(
    {"torch", "torch.functional", "torch.nn.functional", "torch._C._nn", "torch._C._linalg", "torch._C._special"}
    | {"torch._C._fft", "torch.special", "torch.linalg", "torch.fft"}
)
"""Modules whose functions are torch operators."""

NOT_TENSOR_PREFIXES = ("is_", "get_", "set_", "has_", "are_", "can_", "use_", "_")
NOT_TENSOR_FUNCTIONS = frozenset(
    {"numel", "result_type", "promote_types", "equal", "allclose", "typename", "manual_seed", "seed", "initial_seed"}
)
"""torch functions returning Python values or None."""

PASSTHROUGH_MODULES: tuple[type, ...] = (
    nn.RNNBase,
    nn.MultiheadAttention,
    nn.Identity,
    nn.Sequential,
    nn.ModuleList,
    nn.ModuleDict,
    nn.AdaptiveLogSoftmaxWithLoss,
)
"""torch layers that return a tuple, or whatever they are given: not counted as tensors."""


def tensor_valued(env: Env, node: ast.expr) -> bool:
    """Certainly a tensor (see the module docstring)."""
    return kind_of(env, node) == TENSOR


def kind_of(env: Env, node: ast.expr) -> str | None:
    """TENSOR, TENSORS or None (not a tensor, or unknown)."""
    if isinstance(node, ast.Name):
        return TENSOR if node.id in env.tensors else _real(env, node)
    if isinstance(node, ast.Attribute):
        return _attribute(env, node)
    if isinstance(node, ast.Subscript):
        return TENSOR if kind_of(env, node.value) in (TENSOR, TENSORS) else None
    if isinstance(node, ast.BinOp):
        return TENSOR if TENSOR in (kind_of(env, node.left), kind_of(env, node.right)) else None
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return kind_of(env, node.operand) if kind_of(env, node.operand) == TENSOR else None
    if isinstance(node, ast.Compare):
        return _compare(env, node)
    if isinstance(node, ast.Call):
        return _call(env, node)
    return None


def _real(env: Env, node: ast.expr) -> str | None:
    """A name or attribute chain on the real objects that holds a tensor now."""
    value = resolve(env, node) if chain(node) is not None else MISSING
    return TENSOR if isinstance(value, torch.Tensor) else None


def _attribute(env: Env, node: ast.Attribute) -> str | None:
    if _real(env, node):
        return TENSOR
    if node.attr in TENSOR_ATTRIBUTES and kind_of(env, node.value) in (TENSOR, TENSORS):
        return TENSOR
    return None


def _compare(env: Env, node: ast.Compare) -> str | None:
    """`a < b` with a tensor side is a bool tensor; `is`/`in` are Python tests."""
    if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
        return None
    sides = (node.left, *node.comparators)
    return TENSOR if any(kind_of(env, s) == TENSOR for s in sides) else None


def _call(env: Env, node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        receiver = kind_of(env, func.value)
        if receiver == TENSOR:
            return _method(func.attr, node)
        if receiver is None and func.attr in REDUCTIONS and resolve(env, func.value) is MISSING:
            return TENSOR  # `y.sum()` on a value the scan cannot see: only tensors have these
    callee = resolve(env, func)
    if callee is MISSING:
        return None
    if isinstance(callee, nn.Module):
        return _layer(callee)
    if torch_operator(callee):
        return _operator(getattr(callee, "__name__", ""), node)
    return TENSOR if _returns_tensor(callee) else None


def _method(name: str, node: ast.Call) -> str | None:
    """A tensor method's result."""
    if name in NOT_TENSOR_METHODS or name.startswith(NOT_TENSOR_PREFIXES) or not hasattr(torch.Tensor, name):
        return None
    return _operator(name, node, method=True)


def _operator(name: str, node: ast.Call, method: bool = False) -> str | None:
    """A torch operator's result: a tuple for the splitting and (values, indices) ones, else a tensor."""
    if name in NOT_TENSOR_FUNCTIONS or name.startswith(NOT_TENSOR_PREFIXES):
        return None
    given = len(node.args) + len(node.keywords)
    if name in MULTI or name in WITH_DIM_MULTI and given > (0 if method else 1):
        return TENSORS
    return TENSOR


def torch_operator(fn: Any) -> bool:
    """A function of torch's operator namespaces (`torch.rand`, `torch.nn.functional.softmax`), not a class."""
    if isinstance(fn, type) or not callable(fn):
        return False
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, types.BuiltinFunctionType):
        return module in TORCH_NAMESPACES
    return module in TORCH_NAMESPACES - {"torch"}  # torch's own Python functions there: `compile`, `cond`, ...


def _layer(module: nn.Module) -> str | None:
    """A torch layer called on the hot path returns a tensor (not the containers or tuple-returning ones)."""
    cls = type(module)
    if cls.__module__.startswith("torch.nn.modules") and not isinstance(module, PASSTHROUGH_MODULES):
        return None if getattr(module, "return_indices", False) else TENSOR
    forward = getattr(cls, "forward", None)
    return TENSOR if forward is not None and _returns_tensor(forward) else None


def _returns_tensor(fn: Any) -> bool:
    """User code annotated to return a tensor (`def forward(self, x) -> torch.Tensor:`)."""
    target = getattr(fn, "__func__", fn)
    if not isinstance(target, types.FunctionType):
        return False
    return tensor_hint(hints(target).get("return"))


def assigned_kinds(env: Env, target: ast.expr, value: ast.expr) -> dict[str, str | None]:
    """What an assignment leaves in each local it binds: `q, k = x.chunk(2)` makes both tensors."""
    if isinstance(target, ast.Name):
        return {target.id: kind_of(env, value)}
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            return {
                k: v for t, e in zip(target.elts, value.elts, strict=True) for k, v in assigned_kinds(env, t, e).items()
            }
        whole = kind_of(env, value)
        names = [t.id for t in target.elts if isinstance(t, ast.Name)]
        return dict.fromkeys(names, TENSOR if whole == TENSORS else None)
    return {}
