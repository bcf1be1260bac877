"""Objects the step builds (`trainer = Trainer(model)`, `cb = _callbacks[k] = Finetuning(model)`), known to the loop
walk without running any user code: a shadow instance of the class, created without `__init__`, holding what
`__init__` stores as it was passed (`self.model = model`). Methods the step then calls on it (`trainer.evaluate()`)
are walked with the real objects it was given, so the step's writes through them (`self.model.eval()`) are seen. A
shadow passed to a compiled call is an unknown argument there: it holds only part of the real object's state."""

from __future__ import annotations

import ast
from typing import Any

from torch import nn

from contract.checks.hotpath.calls import call_args
from contract.checks.hotpath.model import MISSING
from contract.checks.hotpath.resolve import CallArgs, Env, resolve
from contract.checks.hotpath.source import parse_source, user_code


def shadow_instance(env: Env, node: ast.expr) -> Any:
    """A shadow of the user-class instance `node` builds, or MISSING (not a construction, not user code, a module)."""
    if not isinstance(node, ast.Call):
        return MISSING
    cls = resolve(env, node.func)
    init: Any = getattr(cls, "__init__", None)
    if not isinstance(cls, type) or issubclass(cls, nn.Module) or not user_code(init):
        return MISSING
    source = parse_source(init)
    try:
        shadow = object.__new__(cls)
    except TypeError:  # a class with its own __new__ or a C base: not shadowed
        return MISSING
    if source is None or not isinstance(source.node, ast.FunctionDef) or not hasattr(shadow, "__dict__"):
        return MISSING
    shadow.__dict__.update(_stored(source.node, call_args(env, node)))
    return shadow


def hide_shadows(call: CallArgs, shadows: list[Any]) -> CallArgs:
    """The call with each shadow it passes made an unknown, changing argument."""

    def real(value: Any, taint: str) -> tuple[Any, str]:
        return (MISSING, "some") if any(value is s for s in shadows) else (value, taint)

    return CallArgs(
        positional=tuple(real(v, t) for v, t in call.positional),
        keywords=tuple((k, *real(v, t)) for k, v, t in call.keywords),
        rest=call.rest,
        marks=call.marks,
    )


def _stored(init: ast.FunctionDef, call: CallArgs) -> dict[str, Any]:
    """Attributes `__init__` sets straight from a parameter (`self.model = model`), with the value the call passed."""
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)]
    if not params:
        return {}
    passed = dict(zip(params[1:], (value for value, _ in call.positional), strict=False))
    passed.update({k: v for k, v, _ in call.keywords})
    out: dict[str, Any] = {}
    for stmt in init.body:
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Name):
            continue
        for target in stmt.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == params[0]
                and passed.get(stmt.value.id, MISSING) is not MISSING
            ):
                out[target.attr] = passed[stmt.value.id]
    return out
