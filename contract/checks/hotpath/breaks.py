"""Calls and `with` statements that break the graph, recognised from the real callee and its arguments: clocks,
`print`, `next` on an iterator, logger methods, `.item()` and number casts of tensors, autograd calls, operators with
data-dependent output shapes, boolean-mask indexing, and context managers Dynamo cannot enter."""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import logging
import types
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from contract import _torch_scan
from contract.checks.hotpath.conditions import walk_expr
from contract.checks.hotpath.model import MISSING, Prop
from contract.checks.hotpath.resolve import Env, resolve
from contract.checks.hotpath.tensors import tensor_valued

_BREAK_CALLS: dict[int, str] = {}


def break_calls() -> dict[int, str]:
    """Callables that graph-break when called from compiled code, by identity."""
    if not _BREAK_CALLS:
        import random
        import time

        named = {
            "time.time": time.time,
            "time.perf_counter": time.perf_counter,
            "time.monotonic": time.monotonic,
            "time.time_ns": time.time_ns,
            "time.process_time": time.process_time,
            "print": print,
            "input": input,
            "breakpoint": breakpoint,
            "next": next,
        }
        named.update(
            {
                f"random.{n}": getattr(random, n)
                for n in ("random", "randint", "uniform", "choice", "shuffle", "gauss", "randrange", "sample")
            }
        )
        _BREAK_CALLS.update({id(v): k for k, v in named.items()})
    return _BREAK_CALLS


def random_pattern(function: ast.AST, call: ast.Call, name: str, loops: int) -> str:
    """The measured pattern a `random.random()` call is (`versions.PATTERNS`): a number in arithmetic (outside any
    test or Python loop), or a condition's operand; "" for other draws and other places (not measured per torch)."""
    if name != "random.random":
        return ""
    chain = _ancestors(function, call)
    if any(isinstance(a, (ast.Compare, ast.BoolOp)) or _tests(a, chain) for a in chain):
        return "random-in-test"
    arithmetic = bool(chain) and isinstance(chain[0], (ast.BinOp, ast.UnaryOp))
    return "random-value" if arithmetic and not loops else ""


def _tests(node: ast.AST, chain: list[ast.AST]) -> bool:
    """Whether `node` holds the call in its test (`if`, `while`, conditional expression, `assert`)."""
    test = getattr(node, "test", None) if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) else None
    return test is not None and any(test is a for a in chain)


def _ancestors(function: ast.AST, node: ast.AST) -> list[ast.AST]:
    """The nodes enclosing `node` in `function`, innermost first, up to the statement that holds it."""
    parents = _parents(function)
    out: list[ast.AST] = []
    current = parents.get(id(node))
    while current is not None:
        out.append(current)
        if isinstance(current, ast.stmt):
            break
        current = parents.get(id(current))
    return out


@functools.lru_cache(maxsize=256)
def _parents(function: ast.AST) -> dict[int, ast.AST]:
    """id() of each node of a parsed function -> the node that holds it (cached per parsed function)."""
    return {id(child): parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}


LOCK_MODULES = frozenset({"threading", "multiprocessing.synchronize"})
"""Synchronisation primitives: their Python `__enter__` acquires a C lock (`Semaphore`, `Condition`, a
multiprocessing `Lock`)."""


UNTRACED_CONTEXTS = (contextlib.suppress, contextlib.ExitStack)
"""Standard-library context managers Dynamo does not enter (each measured breaking the graph on torch 2.13)."""


def untraceable_context(env: Env, expr: ast.expr) -> str | None:
    """`with self.lock:` on an object Dynamo cannot enter (gb0142): one whose `__enter__` is C code outside torch
    (`threading.Lock`, a file), a lock of `threading`/`multiprocessing`, `contextlib.suppress`/`ExitStack`. It breaks
    the graph in a function the region calls and runs the region's own frame eager (measured on torch 2.13). torch's
    context managers (grad modes, autocast) and `contextlib.nullcontext` are known to Dynamo."""
    obj = resolve(env, expr)
    if obj is MISSING or isinstance(obj, Prop):
        return None
    cls = type(obj)
    enter = getattr(cls, "__enter__", None)
    module = str(getattr(cls, "__module__", "") or "")
    in_c = enter is not None and not isinstance(enter, types.FunctionType) and module.split(".")[0] != "torch"
    if not (in_c or module in LOCK_MODULES and enter is not None or isinstance(obj, UNTRACED_CONTEXTS)):
        return None
    return f"with {ast.unparse(expr)} (a {module}.{cls.__name__}: Dynamo cannot enter it)"


def logger_call(env: Env, func: ast.expr, callee: Any) -> bool:
    """A method of a `logging.Logger` instance: Dynamo breaks the graph on every one it was not told to ignore."""
    name = getattr(callee, "__name__", None)
    if not isinstance(func, ast.Attribute) or not name or getattr(logging.Logger, name, None) is not callee:
        return False  # not a Logger method: decided without resolving the receiver again
    owner = resolve(env, func.value)
    if not isinstance(owner, logging.Logger):
        return False
    ignored = _torch_scan.ignored_logging_functions()
    return not {callee, getattr(owner, func.attr, None)} & ignored


def io_call(env: Env, func: ast.expr) -> bool:
    """A method of an I/O object (`io.StringIO`, a file, `sys.stdout`): C code Dynamo cannot trace, a graph break
    (measured on torch 2.13 for `write`, `flush` and `getvalue`)."""
    return isinstance(func, ast.Attribute) and isinstance(resolve(env, func.value), io.IOBase)


def scalar_pull(env: Env, node: ast.Call) -> bool:
    """`t.item()` / `t.tolist()` on a value computed on the hot path (or a real tensor): a graph break wherever it
    stands (a condition is reported by the walk's test), unless Dynamo captures scalar outputs."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("item", "tolist") and not node.args):
        return False
    receiver = resolve(env, func.value)
    return (receiver is MISSING or isinstance(receiver, torch.Tensor)) and not _torch_scan.captures_scalar_outputs()


def scalar_cast(env: Env, node: ast.Call, callee: Any) -> bool:
    """`int(t.max())`, `float(loss.sum())`: a certain tensor value turned into a Python number calls `.item()`, so it
    breaks the graph wherever it stands, unless Dynamo captures scalar outputs."""
    if len(node.args) != 1 or node.keywords or not any(callee is f for f in (int, float, bool)):
        return False
    return tensor_valued(env, node.args[0]) and not _torch_scan.captures_scalar_outputs()


AUTOGRAD_METHODS = frozenset({"backward", "requires_grad_"})
"""Methods Dynamo does not trace (measured on 2.13: "Unsupported Tensor.backward() call"; `requires_grad_` on a tensor
or a module breaks too)."""


def autograd_call(env: Env, node: ast.Call) -> bool:
    """`loss.backward()`, `x.requires_grad_()` or `frozen.requires_grad_(False)` in compiled code (a training step
    compiled whole, a gradient penalty): a graph break. Counted on a tensor, a module or a local the scan cannot see."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in AUTOGRAD_METHODS:
        return False
    receiver = resolve(env, func.value)
    owners = (torch.Tensor, nn.Module) if func.attr == "requires_grad_" else torch.Tensor
    return receiver is MISSING or isinstance(receiver, owners)


DYNAMIC_SHAPE_OPS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount"})
"""Torch functions and tensor methods whose output shape depends on tensor values (Dynamo: "Dynamic shape operator")."""


MASK_FUNCTIONS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "logical_not", "logical_and"})
"""Torch functions that return a boolean tensor for certain."""


def dynamic_shape_op(env: Env, node: ast.Call, callee: Any) -> bool:
    """`torch.nonzero(m)`, `m.nonzero()`, `torch.unique(ids)`, one-argument `torch.where(m)`: the graph breaks there
    unless Dynamo captures dynamic output shapes. A method counts on a tensor or on a local the scan cannot see."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if _torch_scan.captures_dynamic_output_shapes():
        return False
    if name == "where":
        return callee is torch.where and len(node.args) == 1 and not node.keywords
    if name not in DYNAMIC_SHAPE_OPS:
        return False
    if callee is getattr(torch, name, None) or callee is getattr(torch.Tensor, name, None):
        return True
    receiver = resolve(env, func.value) if isinstance(func, ast.Attribute) else None
    return receiver is MISSING or isinstance(receiver, torch.Tensor)


def mask_index(env: Env, node: ast.Subscript, container: Any) -> bool:
    """`y[y > 0]`, `x[mask.bool()]`, `x[~torch.isnan(x)]`: reading through a boolean tensor mask has a data-dependent
    shape. Only a mask that is certainly a tensor counts (a comparison with a tensor or with the indexed value)."""
    if not isinstance(node.ctx, ast.Load) or _torch_scan.captures_dynamic_output_shapes():
        return False
    if isinstance(container, (dict, list, tuple, str)):
        return False
    return _bool_mask(env, node.slice, node.value)


def tensor_bound_slice(env: Env, node: ast.Subscript, container: Any) -> str | None:
    """`x[i, :, : seq_len[i]]`: a slice bound read from a tensor is turned into a Python int (`__index__`, an
    `.item()`), a graph break wherever it stands unless Dynamo captures scalar outputs (measured on torch 2.13). The
    bound given, when it is certainly a tensor."""
    if isinstance(container, (dict, list, tuple, str)) or _torch_scan.captures_scalar_outputs():
        return None
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    bounds = [b for p in parts if isinstance(p, ast.Slice) for b in (p.lower, p.upper, p.step) if b is not None]
    return next((ast.unparse(b) for b in bounds if tensor_valued(env, b)), None)


def _derived(side: ast.expr, value: ast.expr) -> bool:
    """A comparison side computed from the indexed value itself (`y`, `y.abs()`, `y.sum(-1)` for `y[...]`): the same
    kind of object, so when indexing it by a comparison is valid at all, the comparison is a tensor mask."""
    same = ast.dump(value)
    return any(ast.dump(sub) == same for sub in walk_expr(side))


def _bool_mask(env: Env, index: ast.expr, value: ast.expr) -> bool:
    """An index expression that is a boolean tensor for certain."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _bool_mask(env, index.operand, value)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return _bool_mask(env, index.left, value) or _bool_mask(env, index.right, value)
    if isinstance(index, ast.Compare) and len(index.ops) == 1:
        if isinstance(index.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            return False
        return any(tensor_valued(env, side) or _derived(side, value) for side in (index.left, *index.comparators))
    if isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute):
        if index.func.attr == "bool" and not index.args and not index.keywords:
            return True
        name = index.func.attr
        return name in MASK_FUNCTIONS and resolve(env, index.func) is getattr(torch, name, None)
    return False


def iterator_arg(env: Env, node: ast.Call) -> bool:
    """`next(x)` breaks the graph when x is a Python iterator/generator kept on an object."""
    if not node.args:
        return False
    value = resolve(env, node.args[0])
    return isinstance(value, (types.GeneratorType, Iterator)) and not isinstance(value, (list, tuple, dict, str))
