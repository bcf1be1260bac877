"""Tensors the step builds with a size that changes between calls (`torch.randn(2, 3 + i, 8)`, `tokens[:, :n]`)
and hands to a compiled region: Dynamo recompiles for the first new shape, then compiles a dynamic graph (with
`dynamic = false`, one graph per shape). The most common recompile report there is: variable sequence lengths."""

from __future__ import annotations

import ast
from collections.abc import Callable

import torch

from contract.checks.hotpath.flow import change
from contract.checks.hotpath.model import MISSING
from contract.checks.hotpath.resolve import Env, resolve

FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "full", "randint", "arange", "randperm"})
"""Torch factories whose size comes from their arguments."""


def changing_shape(env: Env, node: ast.expr, scalar: Callable[[ast.expr], bool], shaped: set[str]) -> bool:
    """A tensor whose size the step computes from what changes between calls: a factory call with a changing size
    argument, a slice with a changing bound, or a local bound to either (`shaped`)."""
    if isinstance(node, ast.Name):
        return node.id in shaped
    if isinstance(node, ast.Subscript):
        return any(_moves(env, b, scalar) for s in _slices(node.slice) for b in (s.lower, s.upper) if b is not None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FACTORIES:
        if resolve(env, node.func) is not getattr(torch, node.func.attr, None):
            return False
        sizes = [*_size_args(node), *(k.value for k in node.keywords if k.arg == "size")]
        return any(_moves(env, s, scalar) for s in sizes)
    return False


def _slices(index: ast.expr) -> list[ast.Slice]:
    """The slices of an index (`x[:, :n]` has two parts, one a slice)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return [p for p in parts if isinstance(p, ast.Slice)]


def _size_args(node: ast.Call) -> list[ast.expr]:
    """Size expressions of a factory call: its ints, or the elements of a tuple/list size (`randint(0, V, (B, L))`)."""
    out: list[ast.expr] = []
    for arg in node.args:
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
