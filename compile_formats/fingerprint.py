"""The environment fingerprint the cache keys depend on, and each region's code and settings hashes.

`static_environment` reads no torch (package metadata, `os.environ`, the platform), so `doctor` stays fast;
`full_environment` adds what only a loaded torch can tell (its config, the GPU, the CPU thread count) through the
adapter `contract._torch`. Values are canonical JSON (sets sorted, callables by name, no addresses), so two
processes with the same settings produce equal fingerprints.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import platform
import types
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract.binding.targets import Binding

ENV_PREFIXES = ("TORCHINDUCTOR_", "TORCHDYNAMO_", "TORCH_DYNAMO_", "TORCH_COMPILE_", "TORCH_COMPILER_")
"""Variables torch's compiler reads (its config modules take their values from these)."""
ENV_NOT_IN_KEYS = frozenset(
    {
        "TORCHINDUCTOR_CACHE_DIR",
        "TORCHINDUCTOR_FX_GRAPH_CACHE",
        "TORCHINDUCTOR_AUTOGRAD_CACHE",
        "TORCHINDUCTOR_FORCE_DISABLE_CACHES",
        "TORCH_COMPILE_FORCE_DISABLE_CACHES",
        "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE",
        "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE",
        "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE",
        "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE",
        "TORCHINDUCTOR_BUNDLED_AUTOTUNE_REMOTE_CACHE",
        "TORCHINDUCTOR_COMPILE_THREADS",
        "TORCH_COMPILE_DEBUG",
        "TORCH_COMPILE_DEBUG_DIR",
        "TORCH_COMPILE_CPROFILE",
        "TORCH_COMPILE_DYNAMO_PROFILER",
        "TORCHDYNAMO_VERBOSE",
        "TORCH_COMPILE_JOB_ID",
        "TORCH_COMPILE_STICKY_PGO_KEY",
        "TORCH_COMPILE_STICKY_PGO_READ",
        "TORCH_COMPILE_STICKY_PGO_WRITE",
    }
)
"""Compiler variables that do not enter the cache keys: where the caches live and whether they are on (CC2xx and the
entry check cover those), worker counts, debug output, and the PGO job id (its own finding)."""
ENV_NOT_IN_KEYS_PREFIXES = ("TORCHINDUCTOR_REDIS_", "TORCHINDUCTOR_WORKER_", "TORCHINDUCTOR_TRACE")


def compile_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The compile-relevant variables that are set (name -> value), sorted."""
    return {
        k: environ[k]
        for k in sorted(environ)
        if k.startswith(ENV_PREFIXES) and k not in ENV_NOT_IN_KEYS and not k.startswith(ENV_NOT_IN_KEYS_PREFIXES)
    }


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def static_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """What the keys depend on that is readable without importing torch (for `doctor`)."""
    return {
        "torch": _version("torch"),
        "triton": _version("triton") or _version("pytorch-triton") or _version("pytorch-triton-rocm"),
        "python": platform.python_version(),
        "env": compile_env(environ),
    }


def full_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The static part plus torch's config, GPU and thread count (imports torch through the adapter)."""
    from contract import _caches

    out = static_environment(environ)
    out.update(_caches.torch_identity())
    out.update(_caches.device_info())
    out["cuda_driver"] = cuda_driver()
    out["config"] = {name: canon(section) for name, section in _caches.compile_config().items()}
    out["config_digest"] = {name: digest(section) for name, section in out["config"].items()}
    return out


def cuda_driver() -> str | None:
    """The NVIDIA driver version (recorded for humans: it does not enter the keys), None when there is none."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            head = fh.readline()
    except OSError:
        return None
    parts = head.split("Kernel Module")
    return parts[1].split()[0] if len(parts) > 1 and parts[1].split() else head.strip()[:80] or None


def canon(value: Any, depth: int = 0) -> Any:
    """A process-independent JSON value: sets sorted, callables and classes by name, other objects by type."""
    if depth > 8:
        return "<nested>"
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, (list, tuple)):
        return [canon(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canon(v, depth + 1) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k): canon(v, depth + 1) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__}>"
    if isinstance(value, type) or callable(value):
        name = getattr(value, "__qualname__", None) or type(value).__qualname__
        return f"<callable {getattr(value, '__module__', '?')}.{name}>"
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def digest(value: Any) -> str:
    """sha256 of a canonical value's compact JSON."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# -- per region: the code it compiles and the settings it compiles with ---------------------------------------------


def region_fingerprints(binding: Binding) -> dict[str, dict[str, str]]:
    """Region -> {source, settings}: hashes of the code its instances run and of its compile settings."""
    out = {}
    for name, rb in binding.regions.items():
        region = rb.region
        settings = {
            "compile": canon(region.compile_kwargs()),
            "dynamic_dims": canon(region.dynamic_dims),
            "methods": list(region.methods),
            "enabled": region.enabled,
        }
        out[name] = {"source": source_hash(t.module for t in rb.targets), "settings": digest(settings)}
    return out


def source_hash(modules: Iterable[Any]) -> str:
    """sha256 over the source of every user class the modules (and their submodules) are made of, with the module
    functions those classes call; torch's own classes are covered by the torch version."""
    classes: dict[str, type] = {}
    for module in modules:
        for sub in module.modules():
            for cls in type(sub).__mro__:
                if _is_user_class(cls):
                    classes.setdefault(f"{cls.__module__}.{cls.__qualname__}", cls)
    h = hashlib.sha256()
    for name in sorted(classes):
        h.update(name.encode())
        h.update(_class_source(classes[name]).encode())
    return h.hexdigest()


def _is_user_class(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return not (module == "builtins" or module == "torch" or module.startswith("torch."))


def _class_source(cls: type) -> str:
    """The class's source, plus that of the plain functions of its module its methods name (one level)."""
    try:
        text = inspect.getsource(cls)
    except (OSError, TypeError):  # defined in a REPL or generated: fall back to its methods' bytecode
        text = "".join(f.__code__.co_code.hex() for f in vars(cls).values() if isinstance(f, types.FunctionType))
    module = inspect.getmodule(cls)
    names: set[str] = set()
    for f in vars(cls).values():
        code = getattr(f, "__code__", None)
        if isinstance(code, types.CodeType):
            names |= _names(code)
    for name in sorted(names):
        fn = getattr(module, name, None) if module is not None else None
        if isinstance(fn, types.FunctionType) and fn.__module__ == cls.__module__:
            try:
                text += inspect.getsource(fn)
            except (OSError, TypeError):
                text += fn.__code__.co_code.hex()
    return text


def _names(code: types.CodeType) -> set[str]:
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out
