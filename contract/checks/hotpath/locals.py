"""What a walked function's locals hold and how long state it writes lasts: loop variables bound to the real
elements, copies saved to restore state at the end of a call, locals that are constants of the call, taint (what
changes between calls), and one-time initialisation behind `if self.done: return`. Mixed into `walk.Walker`."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from contract.checks.hotpath.conditions import cond, exits
from contract.checks.hotpath.flow import stronger, taint_of
from contract.checks.hotpath.model import MISSING, Cond, Prop, ScanState
from contract.checks.hotpath.resolve import Env, chain, iter_values, pair_values, resolve
from contract.checks.hotpath.source import loop_stored_names, own_nodes
from contract.checks.hotpath.tensors import TENSOR, assigned_kinds


class Locals:
    """The local-state half of the walker (needs `state`, `env`, `flags`, `items`, `saved`, `once_assigned`,
    `in_order` and `_block` from `walk.Walker`)."""

    state: ScanState
    env: Env
    flags: dict[str, Cond]
    items: dict[str, list[Any]]
    saved: dict[str, str]
    once_assigned: frozenset[str]
    in_order: frozenset[int]

    if TYPE_CHECKING:  # provided by walk.Walker

        def _block(self, stmts: list[ast.stmt]) -> None: ...
        def _cond(self, test: ast.expr) -> Cond: ...

    def _once_keys(self, stmt: ast.stmt) -> frozenset[tuple[int, str]]:
        """The state an early exit tests (`if getattr(m, "_installed", False): return`), when its value is unknown."""
        if not (isinstance(stmt, ast.If) and exits(stmt.body) and not stmt.orelse):
            return frozenset()
        test = stmt.test.operand if isinstance(stmt.test, ast.UnaryOp) else stmt.test
        if isinstance(test, ast.Attribute):
            parent = resolve(self.env, test.value)
            return frozenset() if parent is MISSING else frozenset({(id(parent), test.attr)})
        if (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id in ("getattr", "hasattr")
            and len(test.args) >= 2
            and isinstance(test.args[1], ast.Constant)
        ):
            parent = resolve(self.env, test.args[0])
            return frozenset() if parent is MISSING else frozenset({(id(parent), str(test.args[1].value))})
        return frozenset()

    def _once(self, keys: frozenset[tuple[int, str]], rest: list[ast.stmt]) -> None:
        """Code after an early exit on state that it sets itself runs once (lazy initialisation: hooks installed on
        the first call, a flag marking it done): the flag's write is not a per-call change."""
        start = len(self.state.writes)
        self._block(rest)
        for w in self.state.writes[start:]:
            if w.key in keys:
                w.form = "once"

    def _exit_cond(self, stmt: ast.stmt) -> Cond | None:
        """The condition under which an `if` leaves the block when compiled (return/raise/continue/break)."""
        if not isinstance(stmt, ast.If):
            return None
        cond = self._cond(stmt.test)
        taken = stmt.body if cond.value else stmt.orelse
        return cond if cond.value is not None and exits(taken) else None

    def _bind_loop(self, target: ast.expr, it: ast.expr) -> None:
        """Bind loop variables to the real elements (writes through them reach each one) and carry the iterable's
        taint (a loop over a constant tuple gives constant names)."""
        level = taint_of(self.env, it)
        names = [t.id for t in ast.walk(target) if isinstance(t, ast.Name)]
        for name in names:
            self.items.pop(name, None)
            if level:
                self.env.taint[name] = stronger(self.env.taint.get(name, ""), level)
        if isinstance(target, ast.Name):
            values = iter_values(self.env, it)
            if values is not None:
                self.items[target.id] = values
        elif isinstance(target, ast.Tuple) and self._zipped(target, it):
            return
        elif isinstance(target, ast.Tuple) and len(target.elts) == 2:
            pairs = pair_values(self.env, it)
            for i, elt in enumerate(target.elts):
                if pairs is not None and isinstance(elt, ast.Name):
                    self.items[elt.id] = [p[i] for p in pairs]

    def _zipped(self, target: ast.Tuple, it: ast.expr) -> bool:
        """`for table, ids in zip(self.tables, indices):` binds each name to the elements of its own iterable."""
        if not (isinstance(it, ast.Call) and resolve(self.env, it.func) is zip and len(it.args) == len(target.elts)):
            return False
        for elt, arg in zip(target.elts, it.args, strict=True):
            values = iter_values(self.env, arg) if isinstance(elt, ast.Name) else None
            if isinstance(elt, ast.Name) and values is not None:
                self.items[elt.id] = values
        return True

    @contextmanager
    def each(self, name: str) -> Iterator[list[Any]]:
        """Bind a loop variable to each of its elements in turn (restored afterwards)."""
        saved = self.env.args.get(name, MISSING)
        try:
            yield self.items.get(name, [])
        finally:
            if saved is MISSING:
                self.env.args.pop(name, None)
            else:
                self.env.args[name] = saved

    def _save(self, target: ast.expr, value: ast.expr) -> None:
        """Remember `old = obj.attr` (or `getattr(obj, "attr")`, or a declared global) so that `obj.attr = old` is
        known as a restore."""
        if not isinstance(target, ast.Name):
            return
        self.saved.pop(target.id, None)
        if isinstance(value, ast.Attribute) and chain(value) is not None:
            self.saved[target.id] = ast.unparse(value)
        elif isinstance(value, ast.Name) and value.id in self.env.declared:  # `prev = _ctx` under `global _ctx`
            self.saved[target.id] = value.id
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "getattr"
            and len(value.args) >= 2
            and isinstance(value.args[1], ast.Constant)
        ):
            self.saved[target.id] = f"{ast.unparse(value.args[0])}.{value.args[1].value!s}"

    def _constant(self, target: ast.expr, value: ast.expr) -> None:
        """`rope_type = self.rope_type if layer_type is None else ...`, assigned once: a constant of this call, so
        tests on it decide branches (`if "dynamic" in rope_type:`). Any other name it binds is no longer the
        caller's object (`_rebind`)."""
        bound = MISSING
        if (
            isinstance(target, ast.Name)
            and (target.id in self.once_assigned or id(value) in self.in_order)
            and target.id not in self.env.taint
        ):
            bound = constant_value(self.env, self.flags, value)
            bound = alias_of(self.env, value) if bound is MISSING else bound
        if isinstance(target, ast.Name) and bound is MISSING:
            bound = self.constructed(value)
        self._rebind(target)
        if isinstance(target, ast.Name) and isinstance(value, ast.Attribute) and target.id in self.once_assigned:
            if isinstance(alias_of(self.env, value), (list, dict, set)):  # the same container whatever it holds
                self.env.aliases[target.id] = value
        if isinstance(target, ast.Name) and bound is not MISSING:
            self.env.args[target.id] = bound
            origins = state_read(self.env, value)
            if origins:
                self.env.origins[target.id] = origins

    def constructed(self, value: ast.expr) -> Any:
        """An object the walked code builds, as the scan can know it (MISSING here: in compiled code a fresh object
        holds no state between calls; the loop walker knows more)."""
        return MISSING

    def _restores(self, target: ast.expr, value: ast.expr) -> bool:
        """`obj.attr = old` where `old` holds the value `obj.attr` had earlier in this call."""
        return isinstance(value, ast.Name) and self.saved.get(value.id) == ast.unparse(target)

    def _rebind(self, target: ast.expr) -> None:
        """A parameter stops holding the caller's object where it is rebound (`if group is None: group = ...`)."""
        if isinstance(target, ast.Name):
            self.env.args.pop(target.id, None)
            self.env.origins.pop(target.id, None)
            self.env.aliases.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for elt in target.elts if not isinstance(target, ast.Starred) else [target.value]:
                self._rebind(elt)

    def _tensor(self, target: ast.expr, value: ast.expr) -> None:
        """Follow which locals hold a tensor: bound to one, or rebound to something the scan cannot tell."""
        for name, kind in assigned_kinds(self.env, target, value).items():
            if kind == TENSOR:
                self.env.tensors.add(name)
            else:
                self.env.tensors.discard(name)

    def _taint(self, target: ast.expr, value: ast.expr) -> None:
        """A local assigned from a changing value changes too (taint only grows: the walk is not flow-sensitive)."""
        level = taint_of(self.env, value)
        for name in (t.id for t in ast.walk(target) if isinstance(t, ast.Name)):
            self.items.pop(name, None)
            if level:
                self.env.taint[name] = stronger(self.env.taint.get(name, ""), level)


@functools.lru_cache(maxsize=4096)
def single_assignments(node: ast.AST) -> frozenset[str]:
    """Names stored exactly once in a function's own scope (not as loop targets or in `with`/`except` clauses)."""
    counts: dict[str, int] = {}
    for n in own_nodes(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (ast.For, ast.AugAssign, ast.withitem, ast.ExceptHandler)):
            for sub in ast.walk(getattr(n, "target", None) or getattr(n, "optional_vars", None) or ast.Pass()):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):  # not `obj` of `obj.n += 1`
                    counts[sub.id] = 2
    return frozenset(k for k, v in counts.items() if v == 1)


@functools.lru_cache(maxsize=4096)
def in_order_assignments(node: ast.AST) -> frozenset[int]:
    """id() of the values of assignments made in the function's own body, outside any block, to a name no loop binds
    (`use_cache = use_cache if use_cache is not None else self.config.use_cache`): the walk meets them in the order
    they run, so the name holds that value until a later assignment (which unbinds it where it stands)."""
    looped = loop_stored_names(node)
    body = getattr(node, "body", [])
    return frozenset(
        id(stmt.value)
        for stmt in (body if isinstance(body, list) else [])
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id not in looped
    )


def state_read(env: Env, node: ast.expr) -> frozenset[tuple[int, str]]:
    """The Python state an expression reads on real objects ((container id, name)), when that alone decides it: empty
    when it also reads an argument the call passed (a constant of this call) or a local bound to one."""
    keys: set[tuple[int, str]] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in env.args and n.id != env.self_name and n.id not in env.defaults:
            if n.id not in env.origins:
                return frozenset()
            keys |= env.origins[n.id]
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            parent = resolve(env, n.value)
            if parent is not MISSING and not isinstance(parent, Prop):
                keys.add((id(parent), n.attr))
    return frozenset(keys)


def alias_of(env: Env, node: ast.expr) -> Any:
    """The object a local assigned once from an attribute chain or a known item names (`scheduler =
    self.scheduler`, `group = self.param_groups[0]`, `cache = kwargs.get("cache_params")`): writes and reads
    through the alias are that object's."""
    mapping_get = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
    if chain(node) is None and not isinstance(node, ast.Subscript) and not mapping_get:
        return MISSING
    value = resolve(env, node)
    if value is MISSING or isinstance(value, Prop) or value is None or type(value) in (int, float, str, bool):
        return MISSING
    return value


def constant_value(env: Env, flags: dict[str, Cond], node: ast.expr) -> Any:
    """A scalar an expression certainly has in this call: a literal, a scalar on a real object, a bound constant, or
    the branch of a conditional expression whose test is decided; else MISSING."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.IfExp):
        test = cond(env, flags, node.test)
        if test.value is None or not test.eager and test.keys:
            return MISSING
        return constant_value(env, flags, node.body if test.value else node.orelse)
    value = resolve(env, node) if chain(node) is not None else MISSING
    return value if type(value) in (int, str, bool, type(None)) else MISSING
