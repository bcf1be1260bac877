"""What the step passes a compiled call, and how the step's walk follows it into the compiled code: the loop walker's
half for arguments (mixed into `loop.LoopWalker`). A Python number, bool or str that changes between calls, directly
or inside a dict/list/tuple the step builds, is a specialization per value (CC310); so is a tensor whose size
changes (a recompile, then a dynamic graph), a record built anew whose fields the compiled code reads, and inputs
that require grad at some calls only. An argument the compiled code never reads costs nothing (`flow.reads_argument`).
Each compiled call is walked again with what it is passed (`rewalk`), so the branches those values decide are seen.
"""

from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from contract import _torch
from contract.checks.hotpath.calls import call_args
from contract.checks.hotpath.fields import (
    attribute_reads,
    changing_fields,
    constant_fields,
    declared_scalar,
    hints,
    parameter_fields,
    passed_to_children,
    positional_parameters,
)
from contract.checks.hotpath.flow import Change, change, reads_argument, returns_number, sequence_of, step_arguments
from contract.checks.hotpath.model import MISSING, Hazard, ScanState
from contract.checks.hotpath.modes import record_call
from contract.checks.hotpath.resolve import ENTRY, CallArgs, Env, resolve
from contract.checks.hotpath.shadows import hide_shadows
from contract.checks.hotpath.shapes import changing_shape
from contract.checks.hotpath.source import TRUSTED, source_of
from contract.checks.hotpath.visit import visit_callable
from contract.checks.hotpath.walk import Walker

FIRST_CALL = Change(False, 1)
"""The condition of first-call setup (`if i == 0:`): what runs under it happens before anything compiled."""


class Arguments:
    """The argument half of the loop walker (needs `state`, `env`, `items`, `conds` and `where` from it)."""

    state: ScanState
    env: Env
    items: dict[str, list[Any]]
    conds: list[Change]

    if TYPE_CHECKING:  # provided by walk.Walker

        def where(self, node: ast.AST) -> str: ...

    def init_arguments(self) -> None:
        """The function's locals start with what its caller marked its parameters (`CallArgs.marks`)."""
        marks = self.env.marks
        self.scalars: set[str] = {n for n, m in marks.items() if m == "scalar"}
        """The locals of the function walked now that hold a Python number, bool or str."""
        self.built: dict[str, ast.Call] = {}
        """Locals the step assigned from a call (a record it may build anew every call)."""
        self.shaped: set[str] = {n for n, m in marks.items() if m == "sized"}
        """The locals of the function walked now that hold a tensor whose size changes between calls."""
        self.literals: dict[str, ast.Dict | ast.List | ast.Tuple] = {}
        """Locals the step assigned a dict/list/tuple display (`batch = {"task": TASKS[i], ...}`)."""
        self.grad_inputs: set[str] = set()
        """Locals the step made require grad (`real.requires_grad_()`)."""
        self.dynamic: set[str] = set()
        """Locals the step declared dynamic (`torch._dynamo.mark_dynamic`): their sizes may change."""
        self.lengths: set[str] = {n for n, m in marks.items() if m == "length"}
        """Locals holding a list whose length changes between calls (`_changing_length`)."""
        self.records: set[str] = {n for n, m in marks.items() if m == "record"}
        """Parameters a caller passed a record it built (`builds_record`)."""
        self.nones: set[str] = set()
        """Locals last assigned None."""
        self.optional: set[str] = {n for n, m in marks.items() if m == "none"}
        """Locals that are None at some calls and a value at others (`_sometimes_none`)."""

    def hot_with_objects(self, node: ast.Call, module: nn.Module, region: str) -> None:
        """A compiled call the step passes objects (a KV cache, a scheduler) or literal constants
        (`output_attentions=True`): walk its forward again as hot code with them bound, so what it does to the
        objects and the branches the constants decide are seen (every other argument stays unknown, as from ENTRY)."""
        self.rewalk(module, region, step_arguments(node, call_args(self.env, node), self.env))

    def rewalk(self, module: nn.Module, region: str, passed: CallArgs | None) -> None:
        """Walk a compiled forward again as the step calls it (see `hot_with_objects`); what it reaches is confirmed
        (`ScanState.confirmed`). Objects the step built are unknown there: the scan holds only their shadows."""
        passed = hide_shadows(passed, self.state.shadows) if passed is not None else None
        target, self.state.target = self.state.target, id(module)
        self.state.rewalking, self.state.called = True, self.state.called | {region}
        try:
            visit_callable(
                self.state, getattr(type(module), "forward", None), module, region, call=passed or ENTRY, walker=Walker
            )
        finally:
            self.state.target, self.state.rewalking = target, False

    def visit_Assign(self, node: ast.Assign) -> None:
        """Also remember the step's locals that hold a Python number (`lr = base * 0.9 ** i`) or a record it builds."""
        super().visit_Assign(node)  # type: ignore[misc]
        value = node.value
        arms = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        if all(isinstance(a, ast.Call) for a in arms):
            self._record_built(arms)  # type: ignore[arg-type]
        for name in (t.id for t in node.targets if isinstance(t, ast.Name)):
            _remember(self.built, name, value if isinstance(value, ast.Call) else None)
            _remember(self.literals, name, value if isinstance(value, (ast.Dict, ast.List, ast.Tuple)) else None)
            _toggle(self.scalars, name, self._scalar(value))
            _toggle(self.shaped, name, changing_shape(self.env, value, self._scalar, self.shaped, self._lists()))
            _toggle(self.optional, name, self._sometimes_none(value))
            _toggle(self.lengths, name, self._changing_length(value))
            self.dynamic.discard(name)
        for target in node.targets:
            self._unpacked_scalars(target, value)
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                _toggle(self.nones, name, isinstance(value, ast.Constant) and value.value is None)

    def visit_For(self, node: ast.For) -> None:
        """`residual = None; for layer in self.layers: h, residual = layer(h, residual)`: a local None before the
        loop that the loop body reassigns is None at the first iteration's calls only."""
        carried = self.nones & {
            n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        added = carried - self.optional
        self.optional |= added
        try:
            super().visit_For(node)  # type: ignore[misc]
        finally:
            self.optional -= added

    def _unpacked_scalars(self, target: ast.expr, value: ast.expr) -> None:
        """`temperature, top_p = REQUESTS[i]` over a sequence of equal-length tuples of constants: each name a
        Python number or string, as `SIZES[i]` is."""
        if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Subscript)):
            return
        rows = sequence_of(self.env, value.value)
        width = len(target.elts)
        if not (
            isinstance(rows, (tuple, list)) and rows and all(isinstance(r, tuple) and len(r) == width for r in rows)
        ):
            return
        for k, elt in enumerate(target.elts):
            if isinstance(elt, ast.Name):
                _toggle(self.scalars, elt.id, _constants([r[k] for r in rows]))

    def builds_record(self, value: ast.expr | None) -> bool:
        """A record the step builds here (`Meta(...)`, a factory annotated to return one), or a local that holds one,
        or a parameter a caller passed one through (`set_forward_context(meta)`)."""
        if isinstance(value, ast.Name):
            if value.id in self.records:
                return True
            value = self.built.get(value.id)
        return isinstance(value, ast.Call) and self._record_type(value) is not None

    def _record_type(self, call: ast.Call) -> tuple[type, ast.Call] | None:
        """The typed record class a call builds (`record_class`; not a module, not trusted library code), with the
        call's arguments named by field."""
        found: tuple[Any, ast.Call] = record_class(resolve(self.env, call.func), call)
        cls = found[0]
        if cls is None or issubclass(cls, nn.Module) or cls.__module__.split(".")[0] in TRUSTED or not hints(cls):
            return None
        return found

    def _record_built(self, arms: list[ast.Call]) -> None:
        """Remember which Python fields of a record the step builds change between calls (`ScanState.record_fields`):
        filled with a changing value, or, built in the arms of a changing test (`Batch("prefill", 8) if i == 0 else
        Batch("decode", n)`), with different constants."""
        built = []
        for arm in arms:
            found = self._record_type(arm)
            if found is None:
                return
            cls, call = found
            self.state.record_fields |= changing_fields(cls, call, lambda e: change(self.env, e) is not None)
            built.append(constant_fields(cls, call))
        if len(built) == 2:
            first, second = built
            self.state.record_fields |= {f for f in first.keys() | second.keys() if first.get(f) != second.get(f)}

    def _lists(self) -> frozenset[str]:
        """The step's locals that hold a list or tuple display (`examples = [a, b]`): their length is fixed."""
        return frozenset(n for n, v in self.literals.items() if isinstance(v, (ast.List, ast.Tuple)))

    def _scalar(self, node: ast.expr) -> bool:
        """A Python number, bool or str for certain (what Dynamo specializes on): constants, the step's index, locals
        computed from them, items of a sequence of such constants, arithmetic and comparisons on them, f-strings,
        `int()`/`float()`/`len()`/`str()` of anything and `round()`/`min()`/`max()`/`abs()`/`math.*` of them (never a
        tensor)."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool)
        if isinstance(node, ast.JoinedStr):
            return True
        if isinstance(node, ast.Name):
            index = self.state.step_index
            own = index is not None and getattr(self.env.fn, "__code__", None) is index[0] and node.id == index[1]
            return own or node.id in self.scalars or type(resolve(self.env, node)) in (int, float)
        if isinstance(node, ast.BinOp):
            return self._scalar(node.left) and self._scalar(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._scalar(node.operand)
        if isinstance(node, (ast.Compare, ast.BoolOp)):  # a flag such as `i % 2 == 0`: a bool, one graph per value
            parts = [node.left, *node.comparators] if isinstance(node, ast.Compare) else node.values
            return all(self._scalar(p) for p in parts)
        if isinstance(node, ast.Subscript):  # `(1.0, 1.5, 7.5)[i]`, `BATCH_SIZES[i]`
            return _constants(sequence_of(self.env, node.value))
        if isinstance(node, ast.Call):
            fn = resolve(self.env, node.func)
            if returns_number(fn) or fn in (int, float, len, str) and len(node.args) == 1:  # always one, or raises
                return True
            numeric = fn in (round, min, max, abs) or getattr(fn, "__module__", None) == "math"
            args = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], ast.Tuple) else node.args
            return numeric and bool(args) and not node.keywords and all(self._scalar(a) for a in args)
        return False

    def scalar_arguments(self, node: ast.Call, module: nn.Module, rewalk: bool = True) -> None:
        """A compiled call the step passes a Python number, bool or str that changes between calls (directly, or as an
        item of a dict/list/tuple it builds): Dynamo specializes on it and recompiles (a number once, then it is
        dynamic; a string, or anything where dynamic shapes are off, on every new value). Also a tensor whose size
        changes, and a record built anew whose fields the compiled code reads."""
        region = self.state.hot_modules.get(id(module))
        if region is not None:
            inside = isinstance(self.env.owner, nn.Module)  # a wrapper module's forward: located at the step's call
            where = self.state.step_call if inside and self.state.step_call else self.where(node)
            code = getattr(getattr(type(module), "forward", None), "__code__", None)
            record_call(self.state, region, code, where, self._requires_grad(node))
            if rewalk:
                self.hot_with_objects(node, module, region)
        if region is None or any(c is FIRST_CALL for c in self.conds):
            return
        if self.state.ragged_batches and (node.args or node.keywords):
            self._argument("loop-shape", node, region, self.state.ragged_batches)
        forward = getattr(type(module), "forward", None)
        places = [(n, None) for n in range(len(node.args))] + [(None, k.arg) for k in node.keywords]
        for (position, keyword), arg in zip(places, [*node.args, *(k.value for k in node.keywords)], strict=True):
            self.record_argument(arg, module, region, position, keyword)
            if not reads_argument(forward, module, position, keyword):
                continue
            spread = arg.value if isinstance(arg, ast.Starred) else arg
            declared = isinstance(arg, ast.Name) and arg.id in self.dynamic
            if not declared and (
                changing_shape(self.env, spread, self._scalar, self.shaped, self._lists())
                or self.shapes_over_loop(arg) > 1
            ):
                self._argument("loop-shape", arg, region, f"`{ast.unparse(arg)[:60]}`")
            scalar = self._scalar(arg) or declared_scalar(forward, position, keyword)
            if change(self.env, arg) is not None and scalar:
                self._argument("loop-arg", arg, region, f"`{ast.unparse(arg)[:60]}`")
            if self._sometimes_none(arg) or isinstance(arg, ast.Name) and arg.id in self.optional:
                self._argument("loop-none", arg, region, f"`{ast.unparse(arg)[:60]}`, None at some calls only,")
            item = self._changing_item(arg)
            if item is not None:
                self._argument("loop-arg", item, region, f"`{ast.unparse(item)[:60]}` (in `{ast.unparse(arg)[:30]}`)")
            listed = next((e for e in self._parts(arg) if self._changing_length(e)), None)
            if listed is not None:
                self._argument("loop-length", arg, region, f"`{ast.unparse(listed)[:60]}`")

    def _parts(self, arg: ast.expr) -> list[ast.expr]:
        """An argument and, for a dict/list/tuple display the step builds, its items."""
        built = self.literals.get(arg.id) if isinstance(arg, ast.Name) else arg
        items = (
            built.values
            if isinstance(built, ast.Dict)
            else built.elts
            if isinstance(built, (ast.List, ast.Tuple))
            else []
        )
        return [arg, *items]

    def _changing_length(self, node: ast.expr) -> bool:
        """A list the step builds with one item per count that changes between calls (`[torch.randn(4) for _ in
        range(n_regions)]`), or a local holding one."""
        if isinstance(node, ast.Name):
            return node.id in self.lengths
        if not isinstance(node, ast.ListComp) or len(node.generators) != 1 or node.generators[0].ifs:
            return False
        it = node.generators[0].iter
        if not (isinstance(it, ast.Call) and resolve(self.env, it.func) is range and len(it.args) == 1):
            return False
        return change(self.env, it.args[0]) is not None and self._scalar(it.args[0])

    def marks_of(self, node: ast.Call, skip: int = 0) -> tuple[tuple[int | str, str], ...]:
        """What a call from the step's side passes on (`CallArgs.marks`), so an eager parent's forward or a helper
        knows which of its parameters hold a changing size, a Python number or a sometimes-None value."""
        places: list[tuple[int | str, ast.expr]] = list(enumerate(node.args[skip:]))
        places += [(k.arg, k.value) for k in node.keywords if k.arg]
        out: list[tuple[int | str, str]] = []
        for place, arg in places:
            if isinstance(arg, ast.Starred):
                break
            mark = self._mark(arg)
            if mark:
                out.append((place, mark))
        return tuple(out)

    def _mark(self, arg: ast.expr) -> str:
        declared = isinstance(arg, ast.Name) and arg.id in self.dynamic
        if not declared and changing_shape(self.env, arg, self._scalar, self.shaped, self._lists()):
            return "sized"
        if self._sometimes_none(arg) or isinstance(arg, ast.Name) and arg.id in self.optional:
            return "none"
        if self._changing_length(arg):
            return "length"
        if self.builds_record(arg):
            return "record"
        return "scalar" if self._scalar(arg) else ""

    def _argument(self, kind: str, node: ast.expr, region: str, what: str) -> None:
        self.state.hazards.append(Hazard(kind=kind, where=self.where(node), region=region, what=what, certain=False))

    def _changing_item(self, arg: ast.expr) -> ast.expr | None:
        """The first changing Python constant inside a dict/list/tuple the step builds and passes
        (`{"task": TASKS[i], "state": obs}`)."""
        built = self.literals.get(arg.id) if isinstance(arg, ast.Name) else arg
        if not isinstance(built, (ast.Dict, ast.List, ast.Tuple)):
            return None
        items = built.values if isinstance(built, ast.Dict) else built.elts
        return next((e for e in items if self._scalar(e) and change(self.env, e) is not None), None)

    def _sometimes_none(self, node: ast.expr) -> bool:
        """`None if all(r.top_k is None for r in reqs) else torch.tensor(...)` under a test that changes between
        calls: Dynamo guards on which one it is given (an optional mask, cache or sampling tensor)."""
        if not isinstance(node, ast.IfExp) or change(self.env, node.test) is None:
            return False
        branches = [isinstance(b, ast.Constant) and b.value is None for b in (node.body, node.orelse)]
        return branches[0] != branches[1]

    def marks_grad(self, node: ast.Call) -> bool:
        """`x.requires_grad_()` on one of the step's locals (R1 regularisation, input gradients): remember it."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and isinstance(func.value, ast.Name)):
            return False
        off = bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value is False
        (self.grad_inputs.discard if off else self.grad_inputs.add)(func.value.id)
        return True

    def marks_dynamic(self, node: ast.Call, callee: Any) -> bool:
        """`torch._dynamo.mark_dynamic(x, 0)` on one of the step's locals: its size may change without a recompile."""
        if not (_torch.is_mark_dynamic(callee) and node.args and isinstance(node.args[0], ast.Name)):
            return False
        self.shaped.discard(node.args[0].id)
        self.dynamic.add(node.args[0].id)
        return True

    def _requires_grad(self, node: ast.Call) -> bool:
        """Whether a compiled call gets an input the step made require grad (Dynamo guards each input's flag)."""
        names = {a.id for a in (*node.args, *(k.value for k in node.keywords)) if isinstance(a, ast.Name)}
        return bool(names & self.grad_inputs)

    def shapes_over_loop(self, arg: ast.expr) -> int:
        """How many tensor shapes of one rank a loop variable of the step takes over its real items (`for p in
        model.parameters(): model.orthogonalize(p)`): each new shape is a recompile. Counted per rank, since a loop
        that filters its items filters by rank (`if p.ndim == 2:`)."""
        items = self.items.get(arg.id, []) if isinstance(arg, ast.Name) else []
        shapes = {tuple(v.shape) for v in items if isinstance(v, torch.Tensor)}
        return max((sum(len(s) == rank for s in shapes) for rank in {len(s) for s in shapes}), default=0)

    def record_argument(
        self, arg: ast.expr, module: nn.Module, region: str, position: int | None, keyword: str | None
    ) -> None:
        """A record the step builds anew each call (`meta = AttnMetadata(lens, max_len=5 + i)`, or a factory annotated
        to return one: `device_put(q, v, nefc=2 * n) -> MjData`) and passes to a compiled call whose forward reads one
        of its changing Python fields (`meta.max_len`): a guard on that field fails every time it changes (vLLM's
        per-step attention metadata)."""
        call = self.built.get(arg.id) if isinstance(arg, ast.Name) else arg if isinstance(arg, ast.Call) else None
        if call is None:
            return
        record = self._record_type(call)
        if record is None:
            return
        cls, call = record
        moving = changing_fields(cls, call, lambda e: change(self.env, e) is not None)
        forward = getattr(type(module), "forward", None)
        source = source_of(self.state, forward) if moving and forward is not None else None
        found = parameter_fields(source.node, position, keyword) if source is not None else None
        read = sorted(moving & record_reads(self.state, module, source.node, found[0])) if source and found else []
        if read:
            what = f"`{ast.unparse(arg)[:40]}` (a new {cls.__name__} every call; the compiled code reads its {', '.join(read)})"
            self.state.hazards.append(
                Hazard(kind="loop-arg", where=self.where(arg), region=region, what=what, certain=False)
            )


def record_reads(state: ScanState, module: nn.Module, node: ast.AST, name: str, depth: int = 4) -> set[str]:
    """The attributes read on a record by the method that receives it as `name` and by the child modules it passes
    the record on to (vLLM's attention metadata, handed through the model's and every layer's forward to the
    attention that reads its counts); children are read from `_modules`, so no user code runs."""
    reads = attribute_reads(node, name)
    for attr, position, keyword in passed_to_children(node, name) if depth else ():
        child = module._modules.get(attr)
        if isinstance(child, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
            children = list({type(c): c for c in child._modules.values() if c is not None}.values())
        else:
            children = [child] if isinstance(child, nn.Module) else []
        for c in children:
            forward = getattr(type(c), "forward", None)
            source = source_of(state, forward) if forward is not None else None
            found = parameter_fields(source.node, position, keyword) if source is not None else None
            reads |= record_reads(state, c, source.node, found[0], depth - 1) if source and found else set()
    return reads


def record_class(fn: Any, call: ast.Call) -> tuple[type | None, ast.Call]:
    """The record class a call builds: a class itself, or a function annotated to return one, whose arguments are then
    named by its parameters (a factory passes them on to the fields of the same names)."""
    if isinstance(fn, type):
        return fn, call
    returned = hints(fn).get("return") if isinstance(fn, types.FunctionType) else None
    if not isinstance(returned, type):
        return None, call
    params = [p.name for p in positional_parameters(fn)]
    keywords = [
        ast.keyword(arg=p, value=a) for p, a in zip(params, call.args, strict=False) if not isinstance(a, ast.Starred)
    ]
    return returned, ast.Call(func=call.func, args=[], keywords=[*keywords, *call.keywords])


def _toggle(names: set[str], name: str, on: bool) -> None:
    """A local rebound: it holds such a value now, or no longer."""
    (names.add if on else names.discard)(name)


def _remember(table: dict[str, Any], name: str, node: Any) -> None:
    if node is None:
        table.pop(name, None)
    else:
        table[name] = node


def _constants(values: Any) -> bool:
    """A tuple or list of Python numbers or strings (its items are what the step indexes out)."""
    return isinstance(values, (tuple, list)) and bool(values) and all(type(v) in (int, float, str) for v in values)


def same_every_call(call: CallArgs) -> CallArgs:
    """What eager code passes a compiled call that the scan knows and that does not change between calls; every
    other argument unknown and changing, as ENTRY's."""

    def keep(value: Any, taint: str) -> tuple[Any, str]:
        return (value, "") if value is not MISSING and not taint else (MISSING, "some")

    return CallArgs(
        positional=tuple(keep(v, t) for v, t in call.positional),
        keywords=tuple((k, *keep(v, t)) for k, v, t in call.keywords),
        rest="some",
    )
