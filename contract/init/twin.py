"""The probe's twin that `init` writes for a Hugging Face model: a Python file next to the contract, importable as
`[probe] model`, that builds the same model class from the same config class with a few narrow layers
(`twin_config`). The probe runs the step on it, so `check` and `init --step` work for a model too big for the machine.

What is written is what runs: `init` builds its twin by importing the file's text (`build`), and `check` imports
the same file.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import nn

from contract.checks.probe.twin import kind
from contract.init.build import InitError
from contract.init.twin_config import base_config, decoder_layers, overrides, pick_layers

FACTORY = "twin"
"""The function the twin file defines."""


@dataclass(frozen=True, kw_only=True)
class Twin:
    """The twin file and what it says."""

    path: Path
    """Where the file goes (next to the contract)."""
    ref: str
    """`[probe] model`: the file's import path and its factory."""
    importable: bool
    """The reference imports from the working directory (else its directory must be put on PYTHONPATH)."""
    text: str
    """The file's Python source."""
    picked: list[int]
    """The model's layers the twin keeps one of each kind of (by index)."""
    layers: str
    """Path of the model's decoder layers (`model.layers`)."""


def is_hugging_face(model: nn.Module) -> bool:
    """A `transformers` model with its config: init can write its twin."""
    mod = sys.modules.get("transformers")
    base = getattr(mod, "PreTrainedModel", None) if mod is not None else None
    return base is not None and isinstance(model, base) and hasattr(model, "config")


def plan(model: nn.Module, model_ref: str, contract: Path) -> Twin | None:
    """The twin file for a Hugging Face model (None for any other model, or one whose layers are not found)."""
    if not is_hugging_face(model):
        return None
    config = model.config
    found = decoder_layers(model, config)
    if found is None:
        return None
    layers_path, layers = found
    kinds = [frozenset(kind(m) for m in layer.modules()) for layer in layers]
    picked = pick_layers(kinds)
    path = contract.with_name(f"{_identifier(contract.stem)}_twin.py")
    ref, importable = module_ref(path)
    text = render(model, model_ref, contract.name, picked, overrides(config, picked), base_config(config))
    return Twin(path=path, ref=f"{ref}:{FACTORY}", importable=importable, text=text, picked=picked, layers=layers_path)


def twin_notes(twin: Twin | None, model: nn.Module, *, wanted: bool, stdout: bool) -> list[str]:
    """Report lines: the twin written and where it imports from, or why there is none and how to get one."""
    if twin is None:
        if not wanted or not is_hugging_face(model):
            return []
        if stdout:
            return ["no twin written: pass -o FILE to have init write the probe's twin next to the contract"]
        return [
            "no twin written: init found no list of decoder layers as long as the config's num_hidden_layers; "
            "write one by hand for [probe] model (docs/topics/twin-probe.md)"
        ]
    out = [
        f"twin: {twin.path} ([probe] model = {twin.ref!r}), the model's layers {twin.picked} of {twin.layers}, "
        "narrow widths; the step runs on it"
    ]
    if not twin.importable:
        out.append(f"  put {twin.path.parent.absolute()} on PYTHONPATH so that {twin.ref!r} imports")
    return out


def module_ref(path: Path) -> tuple[str, bool]:
    """The dotted import path of a `.py` file from the working directory, and whether it imports from there (the
    file's directories are identifiers under it); else its bare name (its directory goes on PYTHONPATH)."""
    try:
        rel = path.absolute().relative_to(Path.cwd())
    except ValueError:
        return path.stem, False
    parts = [*rel.parent.parts, rel.stem]
    if all(p.isidentifier() for p in parts):
        return ".".join(parts), True
    return path.stem, False


def build(twin: Twin) -> nn.Module:
    """The twin built by importing the file's text from a scratch directory, through the one importer of references
    (`contract.document.refs`, as `check` will import it), or a one-line error."""
    import tempfile

    from contract.document.refs import RefError, resolve

    name = f"_cc_twin_{_identifier(twin.path.stem)}"
    try:
        with tempfile.TemporaryDirectory(prefix="cc-twin-") as tmp:
            (Path(tmp) / f"{name}.py").write_text(twin.text, encoding="utf-8")
            sys.path.insert(0, tmp)
            try:
                model = resolve(f"{name}:{FACTORY}", "twin")()
            finally:
                sys.path.remove(tmp)
                sys.modules.pop(name, None)
    except RefError as exc:
        raise InitError(f"the twin init derived for the model does not import ({exc}); pass --no-twin") from None
    except Exception as exc:  # a config the library rejects for the twin's widths
        text = " ".join(str(exc).split())[:200]
        raise InitError(
            f"the twin init derived for the model does not build ({type(exc).__name__}: {text}); pass --no-twin to "
            "probe the model itself, or write a twin by hand (docs/topics/twin-probe.md)"
        ) from None
    if not isinstance(model, nn.Module):
        raise RuntimeError(f"the generated twin returned {type(model).__name__}")
    return model


def render(
    model: nn.Module, model_ref: str, contract: str, picked: list[int], changes: dict[str, Any], base: dict[str, Any]
) -> str:
    """The twin file: the model's config, what the twin changes, and the factory."""
    cls, cfg = type(model), type(model.config)
    mode = ".eval()" if not model.training else ""
    return (
        f'"""Twin of `{model_ref}` for the dynamic probe ([probe] model in {contract}),\nwritten by '
        f"`compile-contract init`.\n\n"
        f"The same model class ({cls.__name__}) and config class ({cfg.__name__}) with few and narrow layers: the "
        f"probe runs\nthe step on it while `check` reads the model itself on the meta device. It keeps one layer of "
        f"each kind the\nmodel has (its layers {picked}); `TWIN` below is everything it changes in the model's "
        f"config.\nEdit `CONFIG` when the model's config changes (or re-run `compile-contract init --force`).\n"
        f'"""\n\n'
        f"import torch\n\n{_imports(cfg, cls)}\n\n"
        f'CONFIG = {_literal(base)}\n"""The model\'s config: every key it sets."""\n\n'
        f'TWIN = {_literal(changes)}\n"""What the twin changes: depth, widths and the per-layer keys of the '
        f'layers kept."""\n\n\n'
        f"def {FACTORY}():\n"
        f'    """The twin, with deterministic random weights (the probe reads no weight value)."""\n'
        f"    torch.manual_seed(0)\n"
        f"    return {cls.__name__}({cfg.__name__}(**{{**CONFIG, **TWIN}})){mode}\n"
    )


def _imports(*classes: type) -> str:
    """`from transformers import X, Y` for the classes the library exports, the others from their own modules."""
    top = sys.modules.get("transformers")
    by_module: dict[str, list[str]] = {}
    for cls in classes:
        exported = top is not None and getattr(top, cls.__name__, None) is cls
        by_module.setdefault("transformers" if exported else cls.__module__, []).append(cls.__name__)
    return "\n".join(f"from {module} import {', '.join(names)}" for module, names in by_module.items())


def _literal(value: dict[str, Any], indent: str = "") -> str:
    """A dict as a Python literal, one key a line, as `ruff format` writes it (long values split one item a line)."""
    inner = indent + "    "
    return "{\n" + "".join(f"{inner}{_py(k)}: {_py(v, inner)},\n" for k, v in sorted(value.items())) + indent + "}"


def _py(value: Any, indent: str = "") -> str:
    """A config value (JSON-like: str, number, bool, None, list, dict) as a Python literal."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        flat = "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
        return flat if len(indent) + len(flat) < 90 else _literal(value, indent)
    if isinstance(value, (list, tuple)):
        flat = "[" + ", ".join(_py(v) for v in value) + "]"
        inner = indent + "    "
        return (
            flat
            if len(indent) + len(flat) < 90
            else "[\n" + "".join(f"{inner}{_py(v, inner)},\n" for v in value) + indent + "]"
        )
    return repr(value)


def _identifier(stem: str) -> str:
    """A file stem as a Python identifier (`llama-70b` -> `llama_70b`)."""
    name = re.sub(r"\W", "_", stem)
    return name if name and not name[0].isdigit() else f"_{name}"
