"""Adapter for what torch's compile caches are switched by, keyed by and hold (CC2xx, CC7xx, and the monitor's
fingerprint and warm start), torch 2.11 to 2.15. Private parts are named where they are used below.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; the config reads, the PGO path and a
failed artifact load run on all five). Same in all five: the cache switches, ConfigModule's
`_get_dict` / `save_config_portable` / `_save_config_ignore` / `_compile_ignored_keys` / `_cache_config_ignore_prefix`,
`cache_dir()`, `pgo.get_cache_key` / `code_state_path`, `save_cache_artifacts` / `load_cache_artifacts` and
`CacheInfo.artifacts`, the "Failed to un-pickle cache artifacts" warning on `torch.compiler._cache`. Differs (what the
FX-graph key hashes, none breaking a read here): `cpp_runtime_thread_count` from 2.13 on, not on 2.11 and 2.12 (the
warm check reads it from the key's own lines, `monitor/warm.py`), and `readonly_values=True` (same values); 2.14 adds
`nested_inductor_config_patches`, `compile_on_one_rank`, `provenance_tracking_to_timeline`; 2.15 adds
`custom_backend_codegen_implications` and, in `CacheBase.get_system()`, the cache info of every other available device
backend (not mirrored by `device_info`); 2.15's Inductor config is an implication module whose portable dict holds raw
values (an implied value is keyed through its source, e.g. `numerics`).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import torch


def cache_switches() -> dict[str, bool]:
    """Effective local-cache switches; imports the compiler config, so callers check it is already loaded."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    return {
        "fx_graph_cache": bool(inductor_config.fx_graph_cache),
        "autograd_cache": bool(functorch_config.enable_autograd_cache),
        "force_disable_caches": bool(torch.compiler.config.force_disable_caches),
        "fx_graph_remote_cache": inductor_config.fx_graph_remote_cache is True,
    }


# Warm start (CC7xx). What the cache keys hash (`torch/_inductor/codecache.py` `FxGraphHashDetails`, 2.11-2.15):
# Inductor's `config.save_config_portable(ignore_private_configs=False)` (2.13+ add `readonly_values=True`, which
# does not change the values), torch's sources (`torch_key()`), `CacheBase.get_system()` (GPU name and CUDA version,
# only when a GPU is visible; triton's key) and `torch.compiler.config.cache_key_tag`; the AOTAutograd key
# (`AOTAutogradCacheDetails`) adds functorch's `save_config()`, i.e. `_get_dict(ignored_keys=_save_config_ignore)`.
# Dynamo's config (without `_compile_ignored_keys`) only shapes the traced graph. `_get_dict`, `_save_config_ignore`
# and `_compile_ignored_keys` are private to torch's ConfigModule, unchanged in 2.11-2.15. PGO: the state file is
# `torch._dynamo.pgo.code_state_path(get_cache_key())` (private, same in 2.11-2.15). Portable artifacts:
# `torch.compiler.save_cache_artifacts()` / `load_cache_artifacts()` are public (beta since 2.7); their
# `CacheInfo.artifacts` maps an artifact type (inductor, aot_autograd, pgo, ...) to the keys written.


def compile_config() -> dict[str, dict[str, Any]]:
    """The compile-relevant config sections (raw values): what the FX-graph and AOTAutograd keys hash, and Dynamo's."""
    import torch._dynamo.config
    import torch._functorch.config
    import torch._inductor.config

    inductor_config: Any = torch._inductor.config
    functorch_config: Any = torch._functorch.config
    dynamo_config: Any = torch._dynamo.config
    try:
        inductor = inductor_config.save_config_portable(ignore_private_configs=False)
    except Exception:  # a factory key without uuid(): the FX key bypasses the cache anyway; compare the rest
        inductor = inductor_config._get_dict(ignored_prefixes=list(inductor_config._cache_config_ignore_prefix))
    functorch = functorch_config._get_dict(ignored_keys=list(getattr(functorch_config, "_save_config_ignore", [])))
    dynamo = dynamo_config._get_dict(ignored_keys=list(getattr(dynamo_config, "_compile_ignored_keys", ())))
    return {"inductor": inductor, "functorch": functorch, "dynamo": dynamo}


def device_info() -> dict[str, Any]:
    """GPU name, capability and CUDA version as `CacheBase.get_system()` sees them (None without a visible GPU); 2.15's
    `get_system()` also hashes other device backends' cache info (XPU, MPS...), not read here."""
    info: dict[str, Any] = {"cuda": None, "gpu": None, "gpu_capability": None}
    try:
        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            info["gpu"] = props.name if torch.version.cuda is not None else getattr(props, "gcnArchName", props.name)
            info["gpu_capability"] = f"{props.major}.{props.minor}"
            info["cuda"] = torch.version.cuda or getattr(torch.version, "hip", None)
    except (AssertionError, RuntimeError):  # no usable GPU: torch's system info is empty too
        pass
    return info


def torch_identity() -> dict[str, Any]:
    """Version, git revision, cache_key_tag and CPU thread count (Inductor's `cpp_runtime_thread_count`)."""
    return {
        "torch_git": getattr(torch.version, "git_version", None),
        "cache_key_tag": str(getattr(torch.compiler.config, "cache_key_tag", "") or ""),
        "cpu_threads": torch.get_num_threads(),
    }


def inductor_cache_dir() -> str:
    """The Inductor cache dir torch uses now (`TORCHINDUCTOR_CACHE_DIR` or its default)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return os.path.abspath(cache_dir())


def pgo_state() -> dict[str, Any]:
    """PGO job id, the local state file (relative to the cache dir) and whether it exists; job id None: PGO off."""
    job_id = getattr(torch.compiler.config, "job_id", None)
    out: dict[str, Any] = {"job_id": job_id, "state_file": None, "present": False}
    try:
        from torch._dynamo import pgo

        key = pgo.get_cache_key() if job_id is not None else None
        path = pgo.code_state_path(key) if key else None
    except Exception:  # a reserved job id ("mast:") or a renamed internal: no local state to find
        return out
    if path:
        out["state_file"] = os.path.relpath(path, inductor_cache_dir())
        out["present"] = os.path.isfile(path)
    return out


def save_cache_artifacts() -> tuple[bytes, dict[str, list[str]]] | None:
    """`torch.compiler.save_cache_artifacts()`: the serialized artifacts and their keys by type (None: nothing)."""
    saved = torch.compiler.save_cache_artifacts()
    if saved is None:
        return None
    data, info = saved
    return data, {str(k): [str(x) for x in v] for k, v in getattr(info, "artifacts", {}).items()}


def load_cache_artifacts(data: bytes) -> dict[str, list[str]] | None:
    """`torch.compiler.load_cache_artifacts()`: the keys it wrote into the caches by type (None: nothing loaded)."""
    info = torch.compiler.load_cache_artifacts(data)
    if info is None:
        return None
    return {str(k): [str(x) for x in v] for k, v in getattr(info, "artifacts", {}).items()}


# What the load runs (read in each release's `torch/_inductor/codecache.py` and every artifact class's
# `populate_cache`): only torch 2.13.0 unpickles while loading (`InductorCacheArtifact.populate_cache` calls the
# private `FxGraphCache._emit_triton_bundle`, lines 1837-1841 and 2123-2129, `pickle.loads` when Triton bundling is
# on); 2.11.0, 2.12.0/2.12.1, 2.14.0/2.14.1 and 2.15.0 write every entry's bytes into the cache dir unread (2.15.0:
# lines 2036-2039). Every release unpickles an entry with plain `pickle.loads` (no `weights_only`, no restricted
# unpickler) at the next compile of its key (`GuardedCache.iterate_over_candidates`: 2.11.0 line 1074, 2.13.0 1714,
# 2.15.0 1901). So the file's protections and pin (CC211-CC213) are checked before this runs, on every version.
#
# A failed load is loud in torch (2.11-2.15): `CacheArtifactManager.deserialize` logs "Failed to un-pickle cache
# artifacts" with a traceback at WARNING on logger `torch.compiler._cache` (torch/compiler/_cache.py line 296 in
# 2.11 and 2.12, 313 in 2.13-2.15), which reaches the stderr handler `torch._logging._init_logs` puts on logger
# `torch`; errors in `populate_caches` escape; a half-unpickled `CompiledFxGraph` (2.13) prints "Exception ignored in
# ... __del__" through `sys.unraisablehook`. The engine reports all of it as one finding instead (CC707), so while
# torch loads, the `torch` loggers' handlers, Python warnings and the unraisable hook are swapped for collectors
# (process-wide: this runs once, at startup, before anything compiles); after a load that worked, the records go to the
# handlers they were meant for.


def load_cache_artifacts_quietly(data: bytes) -> tuple[dict[str, list[str]] | None, str | None]:
    """`load_cache_artifacts` with nothing printed: (keys written by type, None), or (None, why it failed)."""
    records: list[logging.LogRecord] = []
    problem = None
    with _torch_logs_to(records), _unraisable_to(records), warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            wrote = load_cache_artifacts(data)
        except Exception as exc:  # a file torch cannot take raises anything
            wrote, problem = None, f"loading it raised {type(exc).__name__}: {str(exc)[:200]}"
        if problem is not None:
            gc.collect()  # the failed objects' __del__ runs now, into the collector, not later onto stderr
    if problem is None and wrote is None and records:
        problem = _said(records[0])
    if problem is None:
        for record in records:
            if record.name != "unraisable":
                logging.getLogger(record.name).handle(record)
    return wrote, problem


def _said(record: logging.LogRecord) -> str:
    """What torch logged, with the exception it carried, on one line."""
    exc = record.exc_info[1] if record.exc_info else None
    text = record.getMessage() + (f" ({type(exc).__name__}: {exc})" if exc is not None else "")
    return "torch: " + " ".join(text.split())[:300]


@contextlib.contextmanager
def _torch_logs_to(records: list[logging.LogRecord]) -> Iterator[None]:
    """Every record of a `torch.*` logger goes to `records` only (handlers restored after)."""
    collector = _Collector(records)
    root = logging.getLogger("torch")
    loggers = [root] + [
        lg
        for name, lg in list(logging.Logger.manager.loggerDict.items())
        if name.startswith("torch.") and isinstance(lg, logging.Logger) and lg.handlers
    ]
    saved = [(lg, lg.handlers[:], lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.handlers = [collector]
    root.propagate = False
    try:
        yield
    finally:
        for lg, handlers, propagate in saved:
            lg.handlers, lg.propagate = handlers, propagate


@contextlib.contextmanager
def _unraisable_to(records: list[logging.LogRecord]) -> Iterator[None]:
    """Errors Python would print as "Exception ignored in ..." go to `records` (as records named `unraisable`)."""
    saved = sys.unraisablehook

    def keep(info: Any) -> None:
        text = f"exception ignored in {info.object!r}: {info.exc_type.__name__}: {info.exc_value}"
        records.append(logging.makeLogRecord({"name": "unraisable", "msg": text, "levelno": logging.WARNING}))

    sys.unraisablehook = keep
    try:
        yield
    finally:
        sys.unraisablehook = saved


class _Collector(logging.Handler):
    """A handler that keeps records."""

    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
