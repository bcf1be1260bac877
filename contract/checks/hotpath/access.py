"""What the walk records on the real objects: reads of state on the hot path (with the instance's scalar values,
properties followed, a lazy `__getattr__` walked) and writes to it (through loop elements, property setters, mutable
defaults), each resolved to the object and key it touches. Mixed into `walk.Walker`."""

from __future__ import annotations

import ast
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any

from torch import nn

from contract.checks.hotpath import calls
from contract.checks.hotpath.fields import fields_read, tensor_fields_only
from contract.checks.hotpath.flow import taint_of
from contract.checks.hotpath.model import MISSING, Cond, Prop, ScanState, Source, Write
from contract.checks.hotpath.resolve import (
    CONTENTS,
    CallArgs,
    Env,
    chain,
    class_holding,
    current_value,
    parent_and_name,
    resolve,
    slot_of,
    static_get,
    value_at,
)
from contract.checks.hotpath.source import TRUSTED, user_code


class Access:
    """The reads-and-writes half of the walker (needs `state`, `src`, `env`, `region`, `guard`, `items`, `each`,
    `enter`, `where` and `note_read` from `walk.Walker`)."""

    state: ScanState
    src: Source
    env: Env
    region: str
    guard: Cond | None
    items: dict[str, list[Any]]

    if TYPE_CHECKING:  # provided by walk.Walker and locals.Locals

        def where(self, node: ast.AST) -> str: ...
        def note_read(self, key: tuple[int, str], node: ast.AST) -> None: ...
        def enter(self, fn: Any, owner: Any, call: CallArgs | None = None) -> None: ...
        def each(self, name: str) -> Any: ...

    def _read(self, node: ast.Attribute) -> None:
        base = chain(node.value)
        if base is not None and base[0] in self.items and base[0] not in self.env.args:
            with self.each(base[0]) as values:
                for value in values:
                    self.env.args[base[0]] = value
                    self._read(node)
            return
        parent = resolve(self.env, node.value)
        if parent is MISSING or isinstance(parent, Prop):
            return
        value = static_get(parent, node.attr)
        if value is None:
            self.note_unset((id(slot_of(parent)), node.attr), node)
        if value is MISSING:
            self._lazy_attribute(parent, node.attr)
        if value is None and tensor_fields_only(parent, node.attr, fields_read(self.src.node, node)):
            return  # an unset slot read only for its tensor fields: the object the loop puts there never recompiles
        self.note_read((id(slot_of(parent)), node.attr), node)
        holder = class_holding(parent, node.attr)
        if holder is not None:  # a class attribute read through an instance: `M.scale = i` changes it too
            self.note_read((id(holder), node.attr), node)
        if isinstance(value, Prop):
            self.enter(value.prop.fget, parent)
        elif (value is None or type(value) in (int, str)) and _instance_state(parent) and _on_self(self.env, node):
            key = (self.region, self.where(node), f"{type(parent).__name__}.{node.attr}")
            self.state.scalar_reads.setdefault(key, {}).setdefault(self.state.target, set()).add(value)
            if self.state.branches:
                self.state.branch_reads.add(key)
            if self.state.rewalking:
                self.state.confirmed.add(key)

    def note_unset(self, key: tuple[int, str], node: ast.expr) -> None:
        """A read of a slot that holds None now (`ctx.attn_metadata`, `get_forward_context()`): remember the fields
        the function reads on it (`ScanState.unset_fields`)."""
        self.state.unset_fields.setdefault(key, set()).update(fields_read(self.src.node, node) or ())

    def _lazy_attribute(self, parent: Any, name: str) -> None:
        """An attribute the object does not hold runs its class's `__getattr__` on every read (vLLM's `envs`, lazy
        config objects): walk it with the name bound, as the compiled code runs it."""
        getter = inspect.getattr_static(type(parent), "__getattr__", None)
        if isinstance(getter, types.FunctionType) and user_code(getter):
            self.enter(getter, parent, CallArgs(positional=((name, ""),)))

    def record_write(
        self, target: ast.expr, form: str, node: ast.AST, literal: Any = MISSING, value: ast.expr | None = None
    ) -> None:
        """A write to `target`: to each element when it goes through a loop variable, to a property's setter."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.record_write(elt, form, node)
            return
        base = chain(target.value) if isinstance(target, (ast.Attribute, ast.Subscript)) else None
        if base is not None and base[0] in self.items and base[0] not in self.env.args:
            with self.each(base[0]) as values:
                for item in values:
                    self.env.args[base[0]] = item
                    self.record_write(target, form, node, literal, value)
            return
        found = parent_and_name(self.env, target)
        if found is None:
            return
        parent, key, what = found
        if isinstance(target, ast.Subscript) and calls.dict_grows(self.env, target, parent, key):
            self.record_write(target.value, "mutate", node)
        if isinstance(target, ast.Attribute):
            prop = static_get(parent, key)
            if isinstance(prop, Prop):
                if prop.prop.fset is not None:
                    self.enter(prop.prop.fset, parent, CallArgs(positional=((MISSING, taint_of(self.env, value)),)))
                return
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and self.env.is_default(target.value.id)
            and value_at(parent, key) is MISSING
        ):  # a new key in a mutable default: it grows across calls
            self.emit_write(parent, CONTENTS, f"default argument {target.value.id}", "mutate", node)
        self.emit_write(parent, key, what, form, node, literal, value)

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
        """Record one resolved write, with the state's current value, for `classify`."""
        is_cell = type(parent).__name__ == "cell"
        store = parent.cell_contents if is_cell else parent
        current = current_value(parent, key)
        via = "cell" if is_cell else "class" if isinstance(parent, type) else ""
        if module_globals(parent) and what.startswith("global "):
            via = "global"  # a `global n` statement's name (`mod.n` written from outside was not measured per torch)
        self.state.writes.append(
            Write(
                key=(id(parent), key),
                value=current,
                form=form,
                where=self.where(node),
                region=self.region,
                what=what,
                owner=store,
                guard=self.guard,
                literal=literal,
                via=via,
                read_before=(id(parent), key) in self.state.call_reads,
                delta=_delta(node),
            )
        )


def module_globals(parent: Any) -> bool:
    """A module's namespace (`global n` writes there), not a dict the code keeps."""
    name = parent.get("__name__") if isinstance(parent, dict) else None
    return isinstance(name, str) and getattr(sys.modules.get(name), "__dict__", None) is parent


def _delta(node: ast.AST) -> float | None:
    """What `x += k` / `x -= k` adds, for a numeric constant k."""
    if not isinstance(node, ast.AugAssign) or not isinstance(node.op, (ast.Add, ast.Sub)):
        return None
    k = node.value.value if isinstance(node.value, ast.Constant) else None
    if not isinstance(k, (int, float)) or isinstance(k, bool):
        return None
    return k if isinstance(node.op, ast.Add) else -k


def _instance_state(obj: Any) -> bool:
    """An object of its own whose attributes each instance of a region may hold differently: a module, or a user
    object a module holds (a LoRA patch keyed by its weight's name); not a class or a Python module."""
    return (
        isinstance(obj, nn.Module)
        or not isinstance(obj, (type, types.ModuleType))
        and str(type(obj).__module__).split(".")[0] not in TRUSTED
    )


def _on_self(env: Env, node: ast.Attribute) -> bool:
    """Whether an attribute chain starts at the function's `self`."""
    parsed = chain(node)
    return parsed is not None and parsed[0] == env.self_name
