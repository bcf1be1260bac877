"""The AST walk: one visit of one function for one (function, instance) pair on a region's hot path, following what
it reaches (methods, submodules' forward, hooks, properties) and recording reads, writes and hazards."""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from torch import nn

from contract.checks.hotpath import breaks, calls
from contract.checks.hotpath.access import Access
from contract.checks.hotpath.classify import aug_form, form_of, literal
from contract.checks.hotpath.conditions import cond, may_leave, non_empty, tested_values, walk_expr
from contract.checks.hotpath.locals import Locals, in_order_assignments, single_assignments
from contract.checks.hotpath.model import MISSING, Cond, Hazard, ScanState, Skips, Source
from contract.checks.hotpath.resolve import (
    ANY_KEY,
    ENTRY,
    CallArgs,
    Env,
    getter_slot,
    getter_value,
    resolve,
    static_key,
)
from contract.checks.hotpath.shapes import grows_by_concat
from contract.checks.hotpath.source import loop_item, user_code
from contract.checks.hotpath.tensors import tensor_valued
from contract.checks.hotpath.visit import visit_callable, visit_module


def _calls_in(stmts: list[ast.stmt]) -> set[str]:
    """The calls a block makes in its own statements (not under a nested test, loop or definition), as written."""
    out: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
            out |= {ast.unparse(n) for n in ast.walk(stmt) if isinstance(n, ast.Call)}
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            out |= _calls_in(stmt.body)
    return out


BREAK_KINDS = frozenset({"graph-break", "item-branch", "dynamic-shape"})
"""Hazards that are a graph break where they stand."""
LOOP_SKIP = (
    "it stands inside a Python loop, so Dynamo skips the whole compiled frame and the region runs eager, silently; "
    "measured on torch 2.13"
)
"""Dynamo does not resume after a break inside a loop: "graph break in loop ... Skipping the frame"."""


class Walker(Access, Locals, ast.NodeVisitor):
    """Walks one function's body once for one (function, instance) visit, emitting hazards and further visits."""

    MODE = "hot"
    """`hot`: code that runs compiled; the loop walker (`loop.LoopWalker`) walks the step instead."""

    def __init__(
        self, state: ScanState, src: Source, env: Env, region: str, depth: int, guard: Cond | None = None
    ) -> None:
        self.state, self.src, self.env, self.region, self.depth = state, src, env, region, depth
        self.guard = guard
        """The dormant guard the code walked now sits behind (None: it runs compiled)."""
        self.flags: dict[str, Cond] = {}
        """Locals holding a compile check (`eager = not is_compiling()`)."""
        self.nested: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        """Functions defined in this body, visited where they are called."""
        self.items: dict[str, list[Any]] = {}
        """Loop variables bound to the real objects the loop runs over (`for layer in self.layers:`)."""
        self.saved: dict[str, str] = {}
        """Locals holding a state's value read earlier (`old = self.config.x`): writing it back restores the state."""
        self.once_assigned = single_assignments(src.node)
        """Locals assigned exactly once in this function: one that gets a constant is bound to it (`_constant`)."""
        self.both_arms: list[set[str]] = []
        """Per enclosing undecided `if`: the calls both its arms make (`_calls_in`)."""
        self.in_order = in_order_assignments(src.node)
        """Assignments in the function's own body, outside any block: bound in the order the walk meets them."""
        self.dropped: ast.Call | None = None
        """The call of the expression statement walked now (`self.bump()`): its result is dropped."""
        self.returned: ast.Name | None = None
        """The bare name of the `return` statement walked now (`return n`), in a function visited on its own."""
        self.inline = False
        """Walking a function defined in another one's body (`walk_nested`): its returns are not its own visit's."""

    def run(self) -> None:
        """Walk the function's body (a lambda's expression as one statement)."""
        body = self.src.node.body
        self._block(body if isinstance(body, list) else [ast.Expr(body)])

    def where(self, node: ast.AST) -> str:
        """`file:line` of a node, for locations."""
        return f"{self.src.file}:{self.src.offset + getattr(node, 'lineno', 0)}"

    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True, pattern: str = "") -> None:
        """Record one raw hazard at a node (dormant when the walk sits behind a guard)."""
        guard = ", ".join(self.guard.guards) if self.guard else ""
        keys = self.guard.keys if self.guard else frozenset()
        in_loop = self.state.loops and kind in BREAK_KINDS
        self.state.hazards.append(
            Hazard(
                kind=kind,
                where=self.where(node),
                region=self.region,
                what=what,
                certain=certain,
                guard=guard,
                note=LOOP_SKIP if in_loop else "",
                guard_keys=keys,
                pattern=pattern,
            )
        )

    def enter(self, fn: Any, owner: Any, call: CallArgs | None = None) -> None:
        """Follow a callee reached from here (one level deeper, behind the same guard)."""
        visit_callable(self.state, fn, owner, self.region, self.depth + 1, self.guard, call, walker=type(self))

    def walk_nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A function defined in this body and called here: walk its body with its own locals."""
        self.state.dropping = False  # what the nested function returns is not followed
        key = (self.env.fn.__code__, node.lineno, id(self.env.owner), self.region, self.guard is None, self.MODE)
        if key in self.state.visited:
            return
        self.state.visited.add(key)
        src = Source(node=node, file=self.src.file, offset=self.src.offset)
        inner = type(self)(self.state, src, self.env.nested(node), self.region, self.depth + 1, self.guard)
        inner.inline = True
        inner.run()

    def enter_module(self, module: nn.Module, method: str = "forward", call: CallArgs | None = None) -> None:
        """Follow a submodule (or one of its methods) called from here; torch's containers call their children in
        turn (the first with what the container is given), each through this walker (a compiled child is a
        compiled call for the loop walker)."""
        if method == "forward" and isinstance(module, calls.CONTAINERS):
            for n, child in enumerate(module.children()):
                self.enter_module(child, call=call if n == 0 else ENTRY)
            return
        visit_module(self.state, module, self.region, self.depth, method, self.guard, call, walker=type(self))

    def marks_of(self, node: ast.Call, skip: int = 0) -> tuple[tuple[int | str, str], ...]:
        """What the hot walk passes on about arguments: nothing (the loop walker marks the step's values)."""
        return ()

    def special_call(self, node: ast.Call, callee: Any) -> bool:
        """Calls a walker handles itself (the loop walker: `train()`/`eval()`, hook registration); True if handled."""
        return False

    def child_call(self, node: ast.Call, child: nn.Module) -> None:
        """A call of one child through a container (the loop walker checks what it passes a compiled child)."""

    def note_read(self, key: tuple[int, str], node: ast.AST) -> None:
        """Remember state read on the hot path (the loop walker reads nothing hot)."""
        self.note_value_read(key, node)
        self.state.reads.setdefault(key, (self.where(node), self.region))
        self.state.call_reads.add(key)
        if self.guard is None:
            self.state.live_reads.add(key)
        else:
            self.state.read_guards.setdefault(key, set()).update(self.guard.keys)

    # ------------------------------------------------------------------------------------------ control flow

    def generic_visit(self, node: ast.AST) -> None:
        """As NodeVisitor's, but statement lists go through `_block` (early exits under `is_compiling()`)."""
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._block(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def _block(self, stmts: list[ast.stmt]) -> None:
        """Visit statements in order; after `if is_compiling(): return`, the rest runs only eagerly; after
        `if self.done: return`, the rest is one-time initialisation when it sets `self.done` (see `_once`)."""
        with self._maybe(False) as skippable:
            for i, stmt in enumerate(stmts):
                self.visit(stmt)
                exit_cond = self._exit_cond(stmt)
                if exit_cond is None:
                    keys = self._once_keys(stmt)
                    if keys:
                        with self._maybe():
                            self._once(keys, stmts[i + 1 :])
                        return
                    if may_leave(self.env, self.flags, stmt):
                        skippable.add()  # an undecided early exit: the rest may not run
                    continue
                if not exit_cond.eager:
                    with self._dormant(exit_cond):
                        self._block(stmts[i + 1 :])
                return

    @contextmanager
    def _dormant(self, cond: Cond) -> Iterator[None]:
        """Walk a branch that Python state keeps from running compiled now."""
        outer = self.guard
        self.guard = cond if outer is None else Cond(False, False, outer.guards + cond.guards, outer.keys | cond.keys)
        try:
            yield
        finally:
            self.guard = outer

    def _cond(self, test: ast.expr) -> Cond:
        return cond(self.env, self.flags, test)

    # nested definitions run later (or never): their bodies are visited only when called
    def visit_FunctionDef(self, node: ast.AST) -> None:
        """Remember a nested function (walked where it is called); classes and lambdas are not walked."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.nested[node.name] = node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """A class statement in compiled code: Dynamo cannot build a class (LOAD_BUILD_CLASS), and the frame resumed
        after the break guards on the new class object, so it recompiles on every call (measured on torch 2.13)."""
        if not self.state.branches:
            self.hazard("graph-break", node, f"class {node.name} defined in the compiled code")

    def visit_If(self, node: ast.If) -> None:
        cond = self._cond(node.test)
        if cond.value is None and cond.guards:
            with self._dormant(cond):
                self._block(node.body)
                self._block(node.orelse)
            return
        if cond.value is None:
            self._test(node.test)
            self.visit(node.test)
            self.both_arms.append(_calls_in(node.body) & _calls_in(node.orelse))
            try:
                with self._branch():
                    self._block(node.body)
                    self._block(node.orelse)
            finally:
                self.both_arms.pop()
            return
        taken, other = (node.body, node.orelse) if cond.value else (node.orelse, node.body)
        if not cond.eager:
            self.visit(node.test)
        self._block(taken)
        if not cond.eager:
            with self._dormant(cond):
                self._block(other)

    def visit_With(self, node: ast.With) -> None:
        """A context manager runs its `__enter__` before the body and its `__exit__` after it, both traced."""
        for item in node.items:
            what = breaks.untraceable_context(self.env, item.context_expr)
            if what is not None and not self.state.branches:
                self.hazard("graph-break", item.context_expr, what)
        self.generic_visit(node)
        for item in node.items:
            self._enter_context(item.context_expr)

    def _enter_context(self, expr: ast.expr) -> None:
        """Walk a user class's `__enter__`/`__exit__` (`with timeit("fwd"):`, `with self.timer:`); a
        `@contextmanager` function is walked as the call it is."""
        obj = resolve(self.env, expr)
        built = isinstance(expr, ast.Call) and obj is MISSING
        cls = resolve(self.env, expr.func) if built and isinstance(expr, ast.Call) else type(obj)
        if obj is MISSING and not built or not isinstance(cls, type):
            return
        for name in ("__enter__", "__exit__"):
            fn = inspect.getattr_static(cls, name, None)
            if isinstance(fn, types.FunctionType) and user_code(fn):
                self.enter(fn, None if built else obj)

    def visit_While(self, node: ast.While) -> None:
        self._test(node.test)
        with self._branch(), self._loop():
            self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """`a and f(x)`: operands after the first run only when the ones before do not decide."""
        self.visit(node.values[0])
        with self._maybe():
            for value in node.values[1:]:
                self.visit(value)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._test(node.test)
        with self._branch():
            self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        with self._branch():
            self.generic_visit(node)

    @contextlib.contextmanager
    def _branch(self) -> Iterator[None]:
        """Code under a test the scan cannot decide (or an `except:`): it may never run (see `ScanState.branches`)."""
        self.state.branches += 1
        try:
            yield
        finally:
            self.state.branches -= 1

    @contextlib.contextmanager
    def _maybe(self, skipped: bool = True) -> Iterator[Skips]:
        """Code that may be skipped although the other rules read it as run (see `ScanState.maybe`); more reasons
        found inside (`Skips.add`) last until the block ends."""
        skips = Skips(self.state, int(skipped))
        self.state.maybe += skips.count
        try:
            yield skips
        finally:
            self.state.maybe -= skips.count

    @contextlib.contextmanager
    def _loop(self) -> Iterator[None]:
        """The body of a Python loop (see `ScanState.loops`)."""
        self.state.loops += 1
        try:
            yield
        finally:
            self.state.loops -= 1

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        """A comprehension runs its element once per item: its loop variables are bound like a `for` loop's."""
        for gen in node.generators:
            self.visit(gen.iter)
            self._bind_loop(gen.target, gen.iter)
            for test in gen.ifs:
                self.visit(test)
        runs = not isinstance(node, ast.GeneratorExp) and all(
            non_empty(self.env, g.iter) and not g.ifs for g in node.generators
        )
        with self._maybe(not runs):
            for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
                self.visit(part)

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp
    visit_DictComp = visit_ListComp

    def visit_For(self, node: ast.For) -> None:
        it = node.iter
        inner, target = loop_item(node)
        if isinstance(target, ast.Name):
            self.env.loops[target.id] = inner
        self._bind_loop(node.target, it)
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range":
            for arg in inner.args:
                self._test(arg)
        self.visit(it)  # evaluated once, before the loop runs
        with self._loop(), self._maybe(not non_empty(self.env, it)):
            self.visit(node.target)
            self._block(node.body)
        self._block(node.orelse)

    # --------------------------------------------------------------------------------------------- writes

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.record_write(node.target, aug_form(node), node, value=node.value)
        self._taint(node.target, node.value)
        self._rebind(node.target)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.record_assign(target, node.value, node)
            self._save(target, node.value)
            if grows_by_concat(self.env, target, node.value):
                self.hazard("grown", node, f"{ast.unparse(target)[:60]} (a tensor)", certain=False)
            self._flag(target, node.value)
            self._taint(target, node.value)
            self._tensor(target, node.value)
            self._constant(target, node.value)  # last: the value is read with the names as bound before
        self.visit(node.value)
        for target in node.targets:
            if not isinstance(target, (ast.Attribute, ast.Name)):
                self.visit(target)

    def record_assign(self, target: ast.expr, value: ast.expr, node: ast.AST) -> None:
        """Record an assignment's writes, element by element for `a.x, a.y = b, c`; a tensor assigned is form
        `tensor` (Dynamo guards a tensor's metadata, not its value: no Python-state hazard)."""
        if (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
        ):
            for t, v in zip(target.elts, value.elts, strict=True):
                self.record_assign(t, v, node)
            return
        restores = self._restores(target, value)
        form = "restore" if restores else "tensor" if tensor_valued(self.env, value) else form_of(value, target)
        self.record_write(target, form, node, literal(value), value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.record_write(node.target, form_of(node.value, node.target), node, literal(node.value), node.value)
            self._flag(node.target, node.value)
            self._taint(node.target, node.value)
            self._tensor(node.target, node.value)
            self._rebind(node.target)
            self.visit(node.value)

    def visit_Delete(self, node: ast.Delete) -> None:
        """`del self.config.x` after setting it for the call: the state is back to what it was (a restore)."""
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                self.record_write(target, "restore", node)
        self.generic_visit(node)

    def _flag(self, target: ast.expr, value: ast.expr) -> None:
        """Remember a local that holds a compile check (`eager = not is_compiling()`); forget it when rebound."""
        if isinstance(target, ast.Name):
            cond = self._cond(value)
            if cond.eager:
                self.flags[target.id] = cond
            else:
                self.flags.pop(target.id, None)

    # ---------------------------------------------------------------------------------------------- reads

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id not in self.env.local:
            cells = dict(zip(self.env.fn.__code__.co_freevars, self.env.fn.__closure__ or (), strict=False))
            if node.id in cells:
                self.note_value_read((id(cells[node.id]), "cell_contents"), node)
            elif node.id in self.env.fn.__globals__:
                self.note_read((id(self.env.fn.__globals__), node.id), node)

    def note_value_read(self, key: tuple[int, str], node: ast.AST) -> None:
        """Remember where the hot path reads a value (a counter read only by its own update, or returned to a caller
        that drops it, is left unguarded by some torch minors: `versions`)."""
        returned = self.env.fn.__code__ if node is self.returned else None
        self.state.value_reads.setdefault(key, set()).add((self.where(node), returned))

    def visit_Expr(self, node: ast.Expr) -> None:
        """An expression statement: a call's result is dropped (`self.bump()`)."""
        self.dropped = node.value if isinstance(node.value, ast.Call) else None
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        """`return n` hands `n` to the caller, which may drop it."""
        self.returned = node.value if isinstance(node.value, ast.Name) and not self.inline else None
        self.generic_visit(node)
        self.returned = None

    def visit_Subscript(self, node: ast.Subscript) -> None:
        container = resolve(self.env, node.value)
        if breaks.mask_index(self.env, node, container) and not self.state.branches:
            self.hazard("dynamic-shape", node, f"{ast.unparse(node)[:60]} (boolean-mask indexing)")
        bound = breaks.tensor_bound_slice(self.env, node, container)
        if bound is not None and not self.state.branches:
            self.hazard("item-branch", node, f"{ast.unparse(node)[:60]} (a slice bound read from the tensor {bound})")
        if container is os.environ:
            self.hazard("env", node, f"os.environ[{ast.unparse(node.slice)}]")
        elif isinstance(container, (dict, list)):
            key = static_key(self.env, node.slice)
            self.note_read((id(container), repr(key) if key is not MISSING else ANY_KEY), node)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(
            resolve(self.env, c) is os.environ for c in node.comparators
        ):
            self.hazard("env", node, "a membership test on os.environ")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        getter = resolve(self.env, node.func) if not node.args and not node.keywords else MISSING
        slot = getter_slot(getter)
        if slot is not None and getter_value(getter) is None:
            self.note_unset(slot, node)  # a getter of a context slot that is unset now
        shown = ast.unparse(node) if self.both_arms else ""
        both = min(sum(shown in arms for arms in self.both_arms), self.state.branches)
        self.state.branches -= both  # a call both arms of an undecided test make runs either way
        self.state.dropping = node is self.dropped
        try:
            calls.on_call(self, node)
        finally:
            self.state.branches += both
            self.state.dropping = False
        self.generic_visit(node)

    def _test(self, test: ast.expr) -> None:
        """Python control flow on a tensor's value breaks the graph: `.item()`, `int(t)`, `t.sum() > 0` in a test."""
        for sub in walk_expr(test):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in ("item", "tolist")
                and not sub.args
            ):
                return self.hazard("item-branch", sub, f"{ast.unparse(sub)[:60]} in a condition")
            if (
                isinstance(sub, ast.Call)
                and any(resolve(self.env, sub.func) is f for f in (int, float, bool))
                and len(sub.args) == 1
                and tensor_valued(self.env, sub.args[0])
            ):
                return self.hazard("item-branch", sub, f"{ast.unparse(sub)[:60]} in a condition")
        for sub in tested_values(test):
            if tensor_valued(self.env, sub):
                return self.hazard("item-branch", sub, f"tensor {ast.unparse(sub)[:60]} in a condition")
