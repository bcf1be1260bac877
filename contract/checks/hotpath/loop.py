"""The loop's side of the hot path: what the contract's `step` (and the eager code it calls: helpers, model methods,
a parent module's forward that is not compiled) writes between compiled calls, and the hooks it adds after compile.

The step is walked like hot code, with its `model` bound to the real model and its `i` marked as changing on every
call, but nothing in it runs compiled: it reports no graph breaks and reads nothing hot. Its writes are judged
against what the compiled regions read (`classify_loop`): state the step changes between calls is a recompile each
time it changes (CC310); a hook it registers on a compiled module is CC311.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Any

import torch
from torch import nn

from contract.checks.hotpath.conditions import is_scalar
from contract.checks.hotpath.flow import Change, change
from contract.checks.hotpath.model import MISSING, Hazard, LoopWrite, ScanState
from contract.checks.hotpath.resolve import CallArgs, cell_value, resolve, value_at
from contract.checks.hotpath.walk import Walker, visit_callable, visit_hook

HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
"""Module methods that add a hook the compiled graph guards on."""


def walk_step(state: ScanState, step: Any, model: nn.Module) -> None:
    """Walk `step(model, i)` with `model` bound to the real model and `i` changing on every call."""
    call = CallArgs(positional=((model, ""), (MISSING, "every")), rest="some")
    visit_callable(state, step, None, "", 0, call=call, walker=LoopWalker)


class LoopWalker(Walker):
    """Walks the step and the eager code it reaches; records `LoopWrite`s instead of hot writes and hazards."""

    MODE = "loop"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conds: list[Change] = []
        """The changing conditions (`if i == 2:`) around the statement walked now."""

    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True) -> None:
        """Graph breaks, environment reads and tensor branches in eager code cost nothing: not reported."""

    def note_read(self, key: tuple[int, str], node: ast.AST) -> None:
        """The step's own reads are not the compiled code's."""

    def _test(self, test: ast.expr) -> None:
        """Eager code may branch on tensors."""

    def _read(self, node: ast.Attribute) -> None:
        """Reads in eager code do not guard."""

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
        """Both branches may run; writes under a changing test (`if i == 2:`) change between calls."""
        self.visit(node.test)
        found = change(self.env, node.test)
        if found is not None:
            self.conds.append(found)
        try:
            self._block(node.body)
            self._block(node.orelse)
        finally:
            if found is not None:
                self.conds.pop()

    def enter_module(self, module: nn.Module, method: str = "forward", call: CallArgs | None = None) -> None:
        """A compiled method is the hot walk's; an eager one (a parent's forward, a setter method) is followed."""
        if (id(module), method) in self.state.targets or method == "forward" and id(module) in self.state.hot_modules:
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
        is_cell = type(parent).__name__ == "cell"
        current = cell_value(parent) if is_cell else parent if key.startswith("<") else value_at(parent, key)
        moved = change(self.env, value) if value is not None else None
        certain = form == "step" or (moved is not None and moved.certain)
        distinct = 2 if isinstance(current, bool) else moved.distinct if moved is not None else None
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
            )
        )

    def special_call(self, node: ast.Call, callee: Any) -> bool:
        """`module.train(...)`/`.eval()` write every submodule's `training`; `register_forward_hook` adds a hook."""
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
            self.hook_added(module, node)
            return True
        return False

    def train_write(self, module: nn.Module, node: ast.Call, train: bool) -> None:
        """`train(mode)` / `eval()`: a write of `training` on the module and every submodule."""
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
        literal: Any = arg.value if isinstance(arg, ast.Constant) else MISSING if arg is not None else train
        for sub in module.modules():
            self.emit_write(sub, "training", f"{type(sub).__name__}.training", "assign", node, literal, arg)

    def hook_added(self, module: nn.Module, node: ast.Call) -> None:
        """A hook the step registers on a compiled module: the graph compiled without it (CC311); its body runs
        inside the compiled call from then on, so it is walked as hot code."""
        regions = {self.state.hot_modules[id(m)] for m in module.modules() if id(m) in self.state.hot_modules}
        hook = resolve(self.env, node.args[0]) if node.args else MISSING
        for region in sorted(regions):
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
            if hook is not MISSING and callable(hook):
                visit_hook(self.state, hook, module, region)


def classify_loop(state: ScanState, budgets: dict[str, int]) -> list[Hazard]:
    """State the compiled code reads and the step changes between calls: an error when it is certain to recompile
    more often than the region's recompile budget (a Python int/str/bool/enum changed on every call), else a
    warning (it may settle: a schedule, a flag set once, a float)."""
    by_key: dict[tuple[int, str], list[LoopWrite]] = defaultdict(list)
    for w in state.loop_writes:
        by_key[w.key].append(w)
    out = []
    for key, writes in by_key.items():
        if key not in state.reads:
            continue
        hazard = loop_hazard(writes, *state.reads[key], budgets)
        if hazard is not None:
            out.append(hazard)
    return out


def loop_hazard(writes: list[LoopWrite], read_at: str, region: str, budgets: dict[str, int]) -> Hazard | None:
    """The hazard of the step's writes to one piece of state the hot path reads (None: it does not change)."""
    value = writes[0].value
    if isinstance(value, (torch.Tensor, nn.Module)) or callable(value) and not is_scalar(value):
        return None
    literals = {repr(w.literal) for w in writes if w.literal is not MISSING}
    certain = any(w.certain for w in writes) or len(literals) > 1 and any(w.cond_certain for w in writes)
    if not (certain or len(literals) > 1 or any(w.changing for w in writes)):
        return None
    first = next((w for w in writes if w.certain), writes[0])
    distinct = 2 if isinstance(value, bool) or len(literals) > 1 and not any(w.certain for w in writes) else None
    distinct = first.distinct if first.certain and first.distinct else distinct
    storm = certain and is_scalar(value) and (distinct is None or distinct - 1 > budgets.get(region, 0))
    shown = type(value).__name__ if value is not MISSING else "not set before the first call"
    return Hazard(
        kind="loop" if storm else "loop-may",
        where=first.where,
        region=region,
        what=f"{first.what} ({shown}, read at {read_at})",
        certain=storm,
    )
