"""Resolve the `"pkg.module:attr"` references a contract names (the only code a contract may run). A reference that
fails is a CC010 finding located at `contract.model` / `contract.step` (`load_refs`) or `probe.model` (`load_twin`),
reported with the rest."""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from typing import Any

from contract.document.rules import MODEL_UNBUILDABLE
from contract.findings import Finding


class RefError(Exception):
    """A named model or step cannot be imported, built or called: one line with its location and a fix."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(f"{message}; {fix}" if fix else message)
        self.message, self.fix = message, fix


def load_refs(
    model_ref: str | None, step_ref: str | None, *, meta: bool = False
) -> tuple[Any, Callable[..., Any] | None, list[Finding]]:
    """Build the model (on the meta device when `meta` and the factory allows it) and resolve the step; each
    reference that fails is a CC010 finding instead (never raised)."""
    findings: list[Finding] = []
    model = step = None
    for key, ref in (("model", model_ref), ("step", step_ref)):
        if not ref:
            continue
        try:
            if key == "model":
                model = build_model(ref, meta=meta)
            else:
                step = resolve(ref, "step")
        except RefError as exc:
            findings.append(MODEL_UNBUILDABLE.finding(f"contract.{key}", exc.message, exc.fix or "fix the reference"))
    return model, step, findings


def check_model(model: Any, what: str = "model") -> list[Finding]:
    """A model the engine passes itself: CC010 when it is not an `nn.Module`."""
    from torch import nn

    if isinstance(model, nn.Module):
        return []
    return [
        MODEL_UNBUILDABLE.finding(
            f"contract.{what}",
            f"{what} is {type(model).__name__}, not an nn.Module",
            "pass the model instance (or None to build it from [contract] model)",
        )
    ]


def resolve(ref: str, what: str) -> Callable[..., Any]:
    """Import `pkg.module:attr` and return the callable."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise RefError(f"{what} {ref!r}: not a reference", 'write "package.module:attribute"')
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # the user's import may raise anything
        raise RefError(
            f"{what} {ref!r}: cannot import {module_name!r} ({_brief(exc)})",
            f"check the name and that it is importable from {sys.path[0] or '.'}",
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise RefError(f"{what} {ref!r}: module {module_name!r} has no attribute {attr!r}", "check the spelling")
        obj = getattr(obj, part)
    if not callable(obj):
        raise RefError(f"{what} {ref!r}: {type(obj).__name__} is not callable", "name a function or class")
    return obj


def load_twin(ref: str) -> tuple[Any, list[Finding]]:
    """Build the probe's twin (`[probe] model`); a reference that fails, or a twin without real tensors (the step
    must run on it), is a CC010 finding at `probe.model` instead (never raised)."""
    try:
        model = build_model(ref, "probe model")
    except RefError as exc:
        return None, [MODEL_UNBUILDABLE.finding("probe.model", exc.message, exc.fix or "fix the reference")]
    if any(t.is_meta for t in (*model.parameters(), *model.buffers())):
        return None, [
            MODEL_UNBUILDABLE.finding(
                "probe.model",
                f"probe model {ref!r} returned a model with tensors on the meta device: the step cannot run on it",
                "build the twin for real: it is small (2 layers, narrow widths), it needs no meta device",
            )
        ]
    return model, []


def build_model(ref: str, what: str = "model", *, meta: bool = False) -> Any:
    """Call the model factory and check that it returns an `nn.Module`; with `meta`, under `torch.device("meta")`
    when the factory allows it (module tree only: nothing reads a weight), else normally."""
    from torch import nn

    factory = resolve(ref, what)
    if meta:
        built = on_meta(factory)
        if isinstance(built, nn.Module):
            return built
    try:
        model = factory()
    except Exception as exc:
        raise RefError(f"{what} {ref!r} raised {_brief(exc)} at {_where(exc)}", "fix the factory") from None
    if not isinstance(model, nn.Module):
        raise RefError(f"{what} {ref!r} returned {type(model).__name__}, not an nn.Module", "return the model")
    return model


def on_meta(factory: Callable[[], Any]) -> Any:
    """The model built under `torch.device("meta")` (an 80-layer model in seconds, no memory), or why that build
    cannot be used (a string)."""
    import torch
    from torch import nn

    try:
        with torch.device("meta"):
            model = factory()
    except Exception as exc:  # the factory may not support meta (it loads weights, calls .item(), ...)
        text = " ".join(str(exc).split())[:160]
        return f"building it on the meta device raised {type(exc).__name__}: {text}"
    if not isinstance(model, nn.Module):
        return "the factory did not return an nn.Module on the meta device"
    devices = {t.device.type for t in (*model.parameters(), *model.buffers())}
    if devices - {"meta"}:
        return f"the factory put tensors on {', '.join(sorted(devices - {'meta'}))} itself, not on the meta device"
    return model


def _brief(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _where(exc: BaseException) -> str:
    """`file:line` of the innermost frame of the user's exception."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
