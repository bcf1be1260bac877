"""Resolve the `"pkg.module:attr"` references a contract names (the only code a contract may run)."""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from typing import Any


class RefError(Exception):
    """A named model or step cannot be imported, built or called: one line with its location and a fix."""


def resolve(ref: str, what: str) -> Callable[..., Any]:
    """Import `pkg.module:attr` and return the callable."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise RefError(f'{what} {ref!r}: expected "package.module:attribute"')
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # the user's import may raise anything
        raise RefError(
            f"{what} {ref!r}: cannot import {module_name!r} ({_brief(exc)}); "
            f"check the name and that it is importable from {sys.path[0] or '.'}"
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise RefError(f"{what} {ref!r}: module {module_name!r} has no attribute {attr!r}; check the spelling")
        obj = getattr(obj, part)
    if not callable(obj):
        raise RefError(f"{what} {ref!r}: {type(obj).__name__} is not callable; name a function or class")
    return obj


def build_model(ref: str) -> Any:
    """Call the model factory and check that it returns an `nn.Module`."""
    from torch import nn

    factory = resolve(ref, "model")
    try:
        model = factory()
    except Exception as exc:
        raise RefError(f"model {ref!r} raised {_brief(exc)} at {_where(exc)}; fix the factory") from None
    if not isinstance(model, nn.Module):
        raise RefError(f"model {ref!r} returned {type(model).__name__}, not an nn.Module; return the model")
    return model


def _brief(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _where(exc: BaseException) -> str:
    """`file:line` of the innermost frame of the user's exception."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
