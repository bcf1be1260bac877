"""Hooks that run as a Dynamo frame of their own and trace no graph: Python bookkeeping between compiled calls.

A compiled module's own forward (pre-)hooks are not inlined into its `forward`: `nn.Module.compile()` and
`torch.compile(module)` both leave `_call_impl` to Python, so each such hook is a frame Dynamo compiles by itself.
A frame with no tensor work yields an empty graph, and Dynamo installs no guards for it (measured on torch 2.13:
a root pre-hook doing `module.n += 1` compiles once in 8 calls; the same hook returning `args[0] * 2.0` recompiles on
every call). Such a hook is eager code that runs before each compiled call, the way the step does: what it changes
matters only where a compiled frame reads it. Hooks on submodules are inlined into the compiled frame and stay hot.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from torch import nn

from contract.checks.hotpath.model import ScanState
from contract.checks.hotpath.source import source_of

PLAIN_CALLS = frozenset({"len", "min", "max", "int", "float", "bool", "str", "abs", "round"})
"""Builtins a bookkeeping hook may call without touching a tensor."""
SCALARS = (bool, int, float, str, type(None))


def graphless(state: ScanState, hook: Any, module: nn.Module) -> bool:
    """Whether `hook(module, ...)` certainly does no tensor work: it reads and writes only scalar attributes of
    `module`, never its other arguments, and calls nothing but plain builtins. Unsure is False (walked as hot)."""
    if isinstance(hook, functools.partial) or not callable(hook):
        return False
    src = source_of(state, hook)
    if src is None or not isinstance(src.node, (ast.FunctionDef, ast.Lambda)):
        return False
    params = [a.arg for a in src.node.args.posonlyargs + src.node.args.args]
    if not params:
        return False
    body = src.node.body if isinstance(src.node.body, list) else [src.node.body]  # annotations are not run
    return all(_plain(node, params[0], module) for stmt in body for node in ast.walk(stmt))


def _plain(node: ast.AST, first: str, module: nn.Module) -> bool:
    """One node of a bookkeeping hook: no call beyond plain builtins, no other argument, only scalar attributes."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in PLAIN_CALLS
    if isinstance(node, ast.Attribute):
        owner = node.value
        return isinstance(owner, ast.Name) and owner.id == first and _scalar(module, node.attr)
    if isinstance(node, ast.Name):
        return node.id == first or node.id in PLAIN_CALLS or node.id in ("True", "False", "None")
    return not isinstance(node, (ast.Subscript, ast.Lambda, ast.With, ast.Yield, ast.Await, ast.Global, ast.Nonlocal))


def _scalar(module: nn.Module, attr: str) -> bool:
    """The attribute holds a Python scalar now (or is not set yet: the hook creates it)."""
    value = module.__dict__.get(attr, getattr(type(module), attr, None))
    return isinstance(value, SCALARS) and attr not in module._parameters and attr not in module._buffers
