"""Build the model for `init`: on the meta device when only its module tree is needed (an 80-layer model in seconds,
no memory), for real when the step will run it."""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from contract.document.refs import RefError, build_model, on_meta, resolve


class InitError(Exception):
    """Bad input for `init` (a reference that does not import, a factory or step that raises, a file in the way):
    one line with its location and a fix; nothing is written."""


@dataclass(frozen=True, kw_only=True)
class Built:
    """The model and how it was built."""

    model: nn.Module
    meta: bool
    """Built on the meta device (no real tensors: the model cannot run)."""
    note: str
    """One sentence for the report and the file header."""


def build(ref: str, *, meta: bool) -> Built:
    """Build on the meta device when `meta` and the factory allows it, else normally (saying why)."""
    try:
        factory = resolve(ref, "model")
        if not meta:
            return Built(model=build_model(ref), meta=False, note=f"{ref} was built normally to run the step.")
        why = on_meta(factory)
        if isinstance(why, nn.Module):
            return Built(
                model=why, meta=True, note=f"{ref} was built on the meta device (module tree only, no weights)."
            )
        model = build_model(ref)
    except RefError as exc:
        raise InitError(str(exc)) from None
    return Built(model=model, meta=False, note=f"{ref} was built normally: {why}.")
