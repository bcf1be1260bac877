"""The loop's side of the hot path: what the contract's `step` (and the eager code it calls: helpers, model methods,
a parent module's forward that is not compiled) writes between compiled calls, and the hooks it adds after compile.

The step is walked like hot code, with its `model` bound to the real model and its `i` marked as changing on every
call, but nothing in it runs compiled: it reports no graph breaks and reads nothing hot. Its writes are judged
against what the compiled regions read (`loop_verdict.classify_loop`): state the step changes between calls is a recompile each
time it changes (CC310); a hook it registers on a compiled module is CC311.
"""

from __future__ import annotations

import ast
import functools
import types
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from contract.checks.hotpath.arguments import FIRST_CALL, Arguments, same_every_call
from contract.checks.hotpath.calls import call_args
from contract.checks.hotpath.classify import form_of, literal
from contract.checks.hotpath.flow import Change, change
from contract.checks.hotpath.hooks import visit_hook
from contract.checks.hotpath.model import MISSING, Hazard, LoopWrite, ScanState, Source
from contract.checks.hotpath.modes import mode_of
from contract.checks.hotpath.resolve import CallArgs, Display, chain, current_value, resolve
from contract.checks.hotpath.shadows import shadow_instance
from contract.checks.hotpath.shapes import ragged_loader
from contract.checks.hotpath.source import callee_of, source_of
from contract.checks.hotpath.visit import visit_callable
from contract.checks.hotpath.walk import Walker

HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
"""Module methods that add a hook the compiled graph guards on."""


def walk_step(state: ScanState, step: Any, model: nn.Module) -> None:
    """Walk `step(model, i)` with `model` bound to the real model and `i` changing on every call."""
    code = getattr(callee_of(step, None)[0], "__code__", None)  # `@torch.no_grad()` wraps it: its own code
    if code is not None and code.co_argcount >= 2:
        state.step_index = (code, code.co_varnames[1])
    call = CallArgs(positional=((model, ""), (MISSING, "every")), rest="some")
    # a first pass finds what the step changes anywhere in its body: the next call's tests read it (`if
    # self.steps_run == n:` before `self.steps_run += 1` at the end of the step)
    scratch = ScanState(
        sources=state.sources, targets=state.targets, hot_modules=state.hot_modules, step_index=state.step_index
    )
    visit_callable(scratch, step, None, "", 0, call=call, walker=LoopWalker)
    state.loop_changing.update(scratch.loop_changing)
    visit_callable(state, step, None, "", 0, call=call, walker=LoopWalker)


@dataclass
class Deferred:
    """Events of a context manager's second half (after its `yield`), replayed after the `with` body."""

    events: list[tuple[tuple[int, str], Any] | None] = field(default_factory=list)
    yielded: bool = False


class LoopWalker(Arguments, Walker):
    """Walks the step and the eager code it reaches; records `LoopWrite`s instead of hot writes and hazards."""

    MODE = "loop"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.init_arguments()
        self.conds: list[Change] = self.state.loop_conds
        """The changing conditions (`if i == 2:`) around the statement walked now, callers' included; `first_call`
        ones (`if i == 0:`) run before anything compiled."""
        self.env.changing = self.state.loop_changing

    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True, pattern: str = "") -> None:
        """Graph breaks, environment reads and tensor branches in eager code cost nothing: not reported."""

    def note_read(self, key: tuple[int, str], node: ast.AST) -> None:
        """The step's own reads are not the compiled code's."""

    def note_value_read(self, key: tuple[int, str], node: ast.AST) -> None:
        """Nor are the values it reads."""

    def _test(self, test: ast.expr) -> None:
        """Eager code may branch on tensors."""

    def _read(self, node: ast.Attribute) -> None:
        """Reads in eager code do not guard; a DataLoader read keeps a ragged last batch (`shapes.ragged_loader`)."""
        self.state.ragged_batches = self.state.ragged_batches or ragged_loader(resolve(self.env, node))

    def visit_Name(self, node: ast.Name) -> None:
        super().visit_Name(node)
        if isinstance(node.ctx, ast.Load):
            self.state.ragged_batches = self.state.ragged_batches or ragged_loader(resolve(self.env, node))

    def _block(self, stmts: list[ast.stmt]) -> None:
        """Every statement runs (the step is eager: `is_compiling()` and dormant state do not apply), except that code
        after `if self.done: return` which sets `self.done` is one-time initialisation (see `_once`)."""
        for i, stmt in enumerate(stmts):
            self.visit(stmt)
            keys = self._once_keys(stmt)
            if keys and isinstance(stmt, ast.If) and change(self.env, stmt.test) is None:
                self._once(keys, stmts[i + 1 :])
                return

    def _once(self, keys: frozenset[tuple[int, str]], rest: list[ast.stmt]) -> None:
        """Lazy initialisation on the first call (transformers installs its output hooks so): the hooks it registers
        are in place before anything the same call compiles, and its flag is set once."""
        start_w, start_h = len(self.state.loop_writes), len(self.state.hazards)
        self._block(rest)
        if any(w.key in keys for w in self.state.loop_writes[start_w:]):
            self.state.hazards[start_h:] = [h for h in self.state.hazards[start_h:] if h.kind != "late-hook"]
            for w in self.state.loop_writes[start_w:]:
                w.changing = w.changing and w.key not in keys

    def visit_If(self, node: ast.If) -> None:
        """Both branches may run; writes under a changing test (`if i == 2:`) change between calls; under
        `if i == 0:` (`not i`) they are first-call setup."""
        self.visit(node.test)
        found = FIRST_CALL if self._first_call(node.test) else change(self.env, node.test)
        if found is not None:
            self.conds.append(found)
        try:
            self._block(node.body)
            self._block(node.orelse)
        finally:
            if found is not None:
                self.conds.pop()

    def _event(self, event: tuple[tuple[int, str], Any] | None) -> None:
        """Log a constant write or a compiled call; after a context manager's `yield`, hold it for the end of the
        `with` body (`with disable_adapter(model): model(x)` runs the body between the two halves)."""
        if self.state.loop_defer is not None and self.state.loop_defer.yielded:
            self.state.loop_defer.events.append(event)
        else:
            self.state.loop_events.append(event)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, (ast.Yield, ast.YieldFrom)) and self.state.loop_defer is not None:
            self.state.loop_defer.yielded = True
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        """The context managers' code before `yield` runs before the body, the rest after it."""
        outer, self.state.loop_defer = self.state.loop_defer, Deferred()
        for item in node.items:
            self.visit(item)
        held, self.state.loop_defer = self.state.loop_defer.events, outer
        entered = [m for m in (mode_of(self.env, item.context_expr) for item in node.items) if m is not None]
        self.state.modes += entered
        try:
            self._block(node.body)
        finally:
            del self.state.modes[len(self.state.modes) - len(entered) :]
        for event in held:
            self._event(event)

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def _first_call(self, test: ast.expr) -> bool:
        """`i == 0`, `0 == i`, `not i` on the step's `i` (a name changing on every call)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
            return self.env.taint.get(test.operand.id) == "every"
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            return False
        sides = (test.left, test.comparators[0])
        return any(
            isinstance(a, ast.Name)
            and self.env.taint.get(a.id) == "every"
            and isinstance(b, ast.Constant)
            and b.value == 0
            for a, b in (sides, sides[::-1])
        )

    def enter_module(self, module: nn.Module, method: str = "forward", call: CallArgs | None = None) -> None:
        """A compiled method is the hot walk's; an eager one (a parent's forward, a setter method) is followed."""
        if (id(module), method) in self.state.targets or method == "forward" and id(module) in self.state.hot_modules:
            self._event(None)  # a compiled call: it sees the constants written before it
            region = self.state.hot_modules.get(id(module))
            if region is not None and call is not None and method == "forward":  # called from eager code
                self.rewalk(module, region, same_every_call(call))
            return
        super().enter_module(module, method, call)

    def emit_write(
        self,
        parent: Any,
        key: str,
        what: str,
        form: str,
        node: ast.AST,
        literal: Any = MISSING,
        value: ast.expr | None = None,
    ) -> None:
        """Record a write made between compiled calls, with how its value moves from one call to the next."""
        if isinstance(parent, Display):  # a dict display built for one call: not state, but its keys change
            parent.written(key, literal if form == "assign" and not self.conds else MISSING, form == "assign")
            return
        current = current_value(parent, key)
        moved = change(self.env, value) if value is not None else None
        if any(c is FIRST_CALL for c in self.conds):
            return  # first-call setup, before anything compiled
        if (form == "reset" or form == "assign" and empty_container(value)) and not self.conds:
            self.state.loop_resets.add((id(parent), key))
            return
        certain = form == "step" or (moved is not None and moved.certain)
        distinct = 2 if isinstance(current, bool) else moved.distinct if moved is not None else None
        if literal is not MISSING:
            self._event(((id(parent), key), literal))
        level = "every" if certain else "some" if moved is not None or form in ("selfref", "mutate", "reset") else ""
        if level:
            self.state.loop_changing[(id(parent), key)] = level
        self.state.loop_writes.append(
            LoopWrite(
                key=(id(parent), key),
                value=current,
                where=self.where(node),
                what=what,
                owner=parent,
                literal=literal,
                certain=certain,
                changing=certain or moved is not None or form not in ("assign", "settle") or bool(self.conds),
                distinct=distinct,
                form=form,
                cond_certain=any(c.certain for c in self.conds),
                conditional=bool(self.conds),
                moved=moved is not None,
                record=self.builds_record(value),
                inputs=self._inputs(value),
            )
        )

    def _inputs(self, value: ast.expr | None) -> tuple[Any, ...]:
        """The ids of the caller's objects a written expression reads through this function's parameters, directly
        or through its locals (`owned = {id(p) for p in optimizer.params}; p.requires_grad = id(p) in owned`)."""
        if value is None:
            return ()
        names = local_inputs(self.src.node, value) - set(self.items) - {self.env.self_name}
        return tuple((n, id(self.env.args[n])) for n in sorted(names) if n in self.env.args)

    def constructed(self, value: ast.expr) -> Any:
        """An object of a user class the step builds: a shadow holding what it was given (`shadows`)."""
        shadow = shadow_instance(self.env, value)
        if shadow is not MISSING:
            self.state.shadows.append(shadow)
        return shadow

    def child_call(self, node: ast.Call, child: nn.Module) -> None:
        """What eager code passes a compiled child it calls through a container (`for layer in self.layers: h, r =
        layer(h, r)`); `enter_module` walks the child again with it."""
        self.scalar_arguments(node, child, rewalk=False)

    def special_call(self, node: ast.Call, callee: Any) -> bool:
        """`module.train(...)`/`.eval()` write every submodule's `training`; `register_forward_hook` adds a hook;
        `x.requires_grad_()` and `mark_dynamic(x, 0)` mark an input (`Arguments.marks_grad`, `marks_dynamic`); on a
        parameter, `requires_grad_(flag)` writes its `requires_grad`."""
        if self.parameter_grad(node) or self.marks_grad(node) or self.marks_dynamic(node, callee):
            return True
        if isinstance(callee, nn.Module) and not isinstance(self.env.owner, nn.Module):
            self.state.step_call = self.where(node)  # the step's side calls into module code here
        if isinstance(callee, nn.Module):
            self.scalar_arguments(node, callee)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return False
        module = resolve(self.env, func.value)
        if not isinstance(module, nn.Module):
            return False
        if func.attr in ("train", "eval") and callee is getattr(nn.Module, func.attr):
            self.train_write(module, node, func.attr == "train")
            return True
        if func.attr in HOOK_METHODS and callee is getattr(nn.Module, func.attr):
            if not any(c is FIRST_CALL for c in self.conds):
                self.hook_added(module, node)
            return True
        if func.attr == "apply" and callee is nn.Module.apply and node.args:
            self.apply_each(module, node.args[0])
            return True
        return False

    def parameter_grad(self, node: ast.Call) -> bool:
        """`param.requires_grad_(it >= start)` on the model's parameters (also over `named_parameters()`): a write
        of `param.requires_grad`, which Dynamo guards."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and len(node.args) <= 1):
            return False
        base = chain(func.value)
        values = self.items.get(base[0], []) if base is not None else []
        if not any(isinstance(v, nn.Parameter) for v in [*values, resolve(self.env, func.value)]):
            return False
        value = node.args[0] if node.args else ast.copy_location(ast.Constant(True), node)
        target = ast.copy_location(ast.Attribute(value=func.value, attr="requires_grad", ctx=ast.Store()), node)
        self.record_write(target, form_of(value, target), node, literal(value), value)
        return True

    def apply_each(self, module: nn.Module, arg: ast.expr) -> None:
        """`model.apply(fn)` calls fn on every submodule: a function, a `partial` of one, a def or lambda of the step
        (whose free names, such as a rate computed from `i`, keep their change)."""
        local = self.nested.get(arg.id) if isinstance(arg, ast.Name) else arg if isinstance(arg, ast.Lambda) else None
        if local is not None:
            for sub in module.modules():
                self._walk_local(local, sub)
            return
        fn, bound = resolve(self.env, arg), CallArgs()
        if isinstance(arg, ast.Call) and fn is MISSING and resolve(self.env, arg.func) is functools.partial:
            fn, bound = resolve(self.env, arg.args[0]) if arg.args else MISSING, call_args(self.env, arg, skip=1)
        for sub in module.modules():
            self.enter(fn, None, CallArgs((*bound.positional, (sub, "")), bound.keywords, bound.rest))

    def _walk_local(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, first: Any) -> None:
        """A def or lambda of the walked function, called with `first` as its first parameter."""
        env = self.env.nested(node)  # type: ignore[arg-type]
        params = [*node.args.posonlyargs, *node.args.args]
        if params:
            env.args[params[0].arg] = first
        src = Source(node=node, file=self.src.file, offset=self.src.offset)
        type(self)(self.state, src, env, self.region, self.depth + 1, self.guard).run()

    def train_write(self, module: nn.Module, node: ast.Call, train: bool) -> None:
        """`train(mode)` / `eval()`: a write of `training` on the module and every submodule."""
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
        literal: Any = arg.value if isinstance(arg, ast.Constant) else MISSING if arg is not None else train
        for sub in module.modules():
            self.emit_write(sub, "training", f"{type(sub).__name__}.training", "assign", node, literal, arg)

    def observer(self, hook: Any, arg: ast.expr | None) -> bool:
        """A late hook that returns nothing (captures activations, writes a dict): measured on torch 2.13 and 2.11, it
        runs in the compiled call and adds no recompile; only what its body does to Python state matters."""
        if isinstance(arg, ast.Name) and arg.id in self.nested:
            return returns_nothing(self.nested[arg.id].body)
        if not isinstance(hook, types.FunctionType):
            return False
        source = source_of(self.state, hook)
        return source is not None and not isinstance(source.node, ast.Lambda) and returns_nothing(source.node.body)

    def hook_added(self, module: nn.Module, node: ast.Call) -> None:
        """A hook the step registers on a compiled module: the graph compiled without it (CC311); its body runs
        inside the compiled call from then on, so it is walked as hot code."""
        regions = {self.state.hot_modules[id(m)] for m in module.modules() if id(m) in self.state.hot_modules}
        hook = resolve(self.env, node.args[0]) if node.args else MISSING
        observer = self.observer(hook, node.args[0] if node.args else None)
        for region in sorted(regions):
            if not observer:
                self.state.hazards.append(
                    Hazard(
                        kind="late-hook",
                        where=self.where(node),
                        region=region,
                        what=f"{ast.unparse(node.func)[: -len(node.func.attr) - 1]} ({type(module).__name__})"
                        if isinstance(node.func, ast.Attribute)
                        else type(module).__name__,
                        certain=False,
                    )
                )
            if callable(hook):  # MISSING is not
                visit_hook(self.state, hook, module, region)


def empty_container(node: ast.expr | None) -> bool:
    """`[]`, `{}`, `list()`, `dict()`, `set()`, `deque()`: a fresh empty container."""
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.Tuple)):
        return not getattr(node, "elts", getattr(node, "keys", None))
    return (
        isinstance(node, ast.Call)
        and not node.args
        and ast.unparse(node.func).split(".")[-1] in ("list", "dict", "set", "deque", "OrderedDict")
    )


def returns_nothing(body: list[ast.stmt]) -> bool:
    """A function body with no `return <value>` of its own other than `return None` (nested functions aside): it
    only observes."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
            return False
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return True


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def local_inputs(fn: ast.AST, value: ast.expr) -> set[str]:
    """The names an expression reads, following the function's locals back to what they are assigned from."""
    sources: dict[str, set[str]] = defaultdict(set)
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for name in (t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)):
                sources[name] |= read
    seen: set[str] = set()
    todo = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(sources.get(name, ()))
    return seen
