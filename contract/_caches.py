"""Adapter for what torch's compile caches are switched by, keyed by and hold (CC2xx, CC7xx, and the monitor's
fingerprint and warm start), torch 2.11 to 2.15. Private parts are named where they are used below.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; the config reads, the PGO path and a
failed artifact load run on all five). Same in all five: the cache switches, ConfigModule's
`_get_dict` / `save_config_portable` / `_save_config_ignore` / `_compile_ignored_keys` / `_cache_config_ignore_prefix`,
`cache_dir()`, `pgo.get_cache_key` / `code_state_path`, `save_cache_artifacts` / `load_cache_artifacts` and
`CacheInfo.artifacts`, the "Failed to un-pickle cache artifacts" warning on `torch.compiler._cache`. Differs (what the
FX-graph key hashes, none breaking a read here): `cpp_runtime_thread_count` from 2.13 on, not on 2.11 and 2.12 (the
warm check reads it from the key's own lines, `contract/warm/run.py`), and `readonly_values=True` (same values); 2.14 adds
`nested_inductor_config_patches`, `compile_on_one_rank`, `provenance_tracking_to_timeline`; 2.15 adds
`custom_backend_codegen_implications` and, in `CacheBase.get_system()`, the cache info of every other available device
backend (not mirrored by `device_info`); 2.15's Inductor config is an implication module whose portable dict holds raw
values (an implied value is keyed through its source, e.g. `numerics`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import logging
import os
import re
import sys
import time
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
    dynamo.pop("caching_precompile", None)  # enforce sets it from the warm manifest's verdict (`precompile`)
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


# Precompile: Dynamo's bytecode and guards in the portable artifacts (`torch._dynamo.config.caching_precompile`, env
# `TORCH_CACHING_PRECOMPILE=1`; private config, read in 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0, same in all five).
# With it on, `torch.compiler.save_cache_artifacts()` adds `precompile` entries and `torch.compile()` (eval_frame's
# `_optimize_catch_errors.__call__`, 2.15.0 line ~1003) looks one up when it wraps a function: `DynamoCache.load`
# counts `counters["dynamo_cache"]["dynamo_cache_hit" | "_miss" | "_error"]` (an error is logged "Failed to load
# package from path" on `torch._dynamo.package`), then `CompilePackage.initialize` checks `SystemInfo` (Python,
# torch, GPU toolkit, Triton, GPU name) and the checksum of every inlined source; a mismatch raises RuntimeError,
# which torch logs "Failed to load entry from dynamo cache" on `torch._dynamo.eval_frame` with the traceback and
# then compiles from scratch (a bypass, still counted as a hit). A hit installs the entry's code on the wrapped code
# object: its first call runs no Dynamo compile (no compile callback fires). Entries are keyed by the innermost
# function's `__qualname__` and first line (`CompilePackage.source_id_from_fn`): every `nn.Module.compile()` shares
# the key `Module._call_impl`, so two regions of different classes compiled that way overwrite each other's entry at
# save time (the warm verification then sees a miss).
_PRECOMPILE_LOGGERS = ("torch._dynamo.eval_frame", "torch._dynamo.package")
_PRECOMPILE_FAILED = ("Failed to load entry from dynamo cache", "Failed to load package from path")


def precompile_available() -> bool:
    """Whether this torch has Dynamo's caching precompile switch at all."""
    import torch._dynamo.config as dynamo_config

    return hasattr(dynamo_config, "caching_precompile")


def caching_precompile() -> bool:
    """Whether `torch.compile()` now saves and loads precompiled entries."""
    import torch._dynamo.config as dynamo_config

    return bool(getattr(dynamo_config, "caching_precompile", False))


def set_caching_precompile(on: bool) -> None:
    """Switch precompiled entries on or off for every later `torch.compile()` (a wrap made before keeps its mode)."""
    import torch._dynamo.config as dynamo_config

    if hasattr(dynamo_config, "caching_precompile"):
        dynamo_config.caching_precompile = on


def reset_dynamo() -> None:
    """Forget every compiled frame (`torch.compiler.reset()`, public): the next call of each wrap compiles again."""
    torch.compiler.reset()


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrecompileLoad:
    """What one `torch.compile()` wrap found in the precompile cache."""

    state: str
    """`hit` (an entry installed), `miss` (none for this function), `bypass` (found, refused by torch's system or
    source check), `error` (found, unreadable)."""
    seconds: float
    """The wrap's wall time: reading and installing the entry (on CPU, building its C++ kernels)."""
    reason: str | None = None
    """Why torch refused or could not read the entry (its exception, one line)."""


class PrecompileWatch:
    """Collects what the precompile cache did during one `torch.compile()` wrap (see `precompile_watch`)."""

    def __init__(self) -> None:
        self.records: list[logging.LogRecord] = []
        self.load: PrecompileLoad | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep torch's load-failure warnings (they become one event, not a traceback on stderr); pass the rest."""
        if record.getMessage().startswith(_PRECOMPILE_FAILED):
            self.records.append(record)
            return False
        return True


@contextlib.contextmanager
def precompile_watch() -> Iterator[PrecompileWatch]:
    """Around one `torch.compile()`: `watch.load` says what its precompile lookup did (None when it made none)."""
    from torch._dynamo.utils import counters

    watch = PrecompileWatch()
    loggers = [logging.getLogger(name) for name in _PRECOMPILE_LOGGERS]
    before = dict(counters["dynamo_cache"])
    sizes = _module_sizes()
    for lg in loggers:
        lg.addFilter(watch)
    start = time.perf_counter()
    try:
        yield watch
    finally:
        seconds = time.perf_counter() - start
        for lg in loggers:
            lg.removeFilter(watch)
        delta = {k: n - before.get(k, 0) for k, n in counters["dynamo_cache"].items() if n > before.get(k, 0)}
        watch.load = _load_state(delta, watch.records, seconds)
        if watch.load is not None and watch.load.state == "hit":
            names_past(_installed_ids(sizes))


# Recovery, torch 2.11-2.14: an installed entry puts globals named by the SAVING process's counter into module dicts
# (`__builtins_dict___N`, `__resume_at_..._N`: `CompilePackage.install`); this process's later compiles name theirs with
# `bytecode_transformation.unique_id` (one process-wide `_unique_id_counter`) through `OutputGraph.install_global`,
# which on 2.11-2.14 does not look at the module's dict, so a guard miss after a load could mint a name the load
# installed: `AssertionError: Name '__builtins_dict___4' already exists in scope` (2.13, 2.14; a bare `assert name not in
# scope` on 2.11, 2.12), on whichever later compile reaches that number (measured on 2.12.1, 2.13.0 and 2.14.1: the
# first or second unseen shape after a demo bundle's load; 2.11.0 read from its source, the same assert). 2.15 mints
# names free in the scope (`unique_id_unbound_in`). Where that function is absent, the counter is moved past every
# number the loads installed, so new names never meet them.
_INSTALLED_ID = re.compile(r"^__\w*?_(\d+)$")


def _module_sizes() -> dict[int, int]:
    """len(vars(module)) of every loaded module, to find the ones a precompile install wrote globals into."""
    return {id(m): len(d) for m in list(sys.modules.values()) if isinstance(d := getattr(m, "__dict__", None), dict)}


def _installed_ids(sizes: dict[int, int]) -> int:
    """The largest `_N` suffix among the dunder globals of modules whose dict grew since `sizes` (0: none)."""
    top = 0
    for m in list(sys.modules.values()):
        d = getattr(m, "__dict__", None)
        if isinstance(d, dict) and len(d) != sizes.get(id(m)):
            for name in list(d):
                found = _INSTALLED_ID.match(name) if name.startswith("__") else None
                if found:
                    top = max(top, int(found.group(1)))
    return top


def names_past(top: int) -> bool:
    """Make Dynamo's next generated global names number above `top` (2.11-2.14, see above); True when moved."""
    from torch._dynamo import bytecode_transformation as bt

    counter = getattr(bt, "_unique_id_counter", None)
    if hasattr(bt, "unique_id_unbound_in") or counter is None or top <= 0:
        return False
    nxt = next(counter)
    bt._unique_id_counter = itertools.count(max(nxt, top + 1))
    return nxt <= top


def _load_state(delta: dict[str, int], records: list[logging.LogRecord], seconds: float) -> PrecompileLoad | None:
    reason = _exception(records[0]) if records else None
    if delta.get("dynamo_cache_error"):
        return PrecompileLoad(state="error", seconds=seconds, reason=reason)
    if delta.get("dynamo_cache_hit"):
        state = "bypass" if records else "hit"
        return PrecompileLoad(state=state, seconds=seconds, reason=reason)
    if delta.get("dynamo_cache_miss"):
        return PrecompileLoad(state="miss", seconds=seconds)
    return None


def _exception(record: logging.LogRecord) -> str:
    """The exception a load-failure warning carried (`RuntimeError: Compile package was created with ...`), else
    the warning itself, on one line."""
    exc = record.exc_info[1] if record.exc_info else None
    text = f"{type(exc).__name__}: {exc}" if exc is not None else record.getMessage()
    return " ".join(text.split())[:300]


# C++ kernels on CPU (the kernel pack, `contract.warm.kernels`): Inductor's C++ code caches (`CppCodeCache`,
# `CppPythonBindingsCodeCache`, `CppWrapperCodeCache` in torch/_inductor/codecache.py; private, read in 2.11.0,
# 2.12.1, 2.13.0, 2.14.1 and 2.15.0, same in all five) key a kernel by `code_hash(source, extra=<the other source> +
# <the full g++ command line>)` and build `<cache_dir>/<key[1:3]>/<key>[.main].so` only when that file does not exist
# (`_worker_compile_cpp`, under the file lock `<cache_dir>/locks/<key>.lock`); a found .so is dlopened as is. The
# command line holds the compiler's name, the ISA flags `pick_vec_isa()` chose (`-mavx512f ... -D
# CPU_CAPABILITY_AVX512`), the include dirs of torch and Python, and the literal `-march=native`: the key does NOT
# hold torch's version, the compiler's version or the CPU model `-march=native` resolves to, so the pack records
# those itself and is installed only where they match (`contract.checks.warm.kernels`). The ISA probes
# (`cpu_vec_isa.VecISA.check_build`, `<key[1:3]>/<key>.so` too) are keyed by compiler version, ISA flags and torch
# version, and each is dlopened in a subprocess before it is trusted. Every process knows the kernels it loaded: the
# caches' class-level `cache` dicts (key -> loader), filled when a compiled graph's module is loaded, whether the
# graph was compiled, read from the FX cache or installed by a precompiled entry.
_CPP_CACHES = ("CppCodeCache", "CppPythonBindingsCodeCache", "CppWrapperCodeCache")


def cpp_kernel_keys() -> set[str]:
    """Keys of the C++ libraries this process's Inductor loaded (empty when Inductor's codecache is not imported)."""
    codecache = sys.modules.get("torch._inductor.codecache")
    keys: set[str] = set()
    for name in _CPP_CACHES:
        cache = getattr(getattr(codecache, name, None), "cache", None)
        if isinstance(cache, dict):
            keys.update(str(k) for k in cache)
    return keys


def isa_probe_sources() -> set[str]:
    """The C++ sources Inductor's ISA check compiles and dlopens (`VecISA` subclasses' `_*_code`), stripped."""
    try:
        from torch._inductor import cpu_vec_isa
    except ImportError:  # a torch without Inductor's CPU backend: no probes
        return set()
    found: set[str] = set()
    for cls in [cpu_vec_isa.VecISA, *_subclasses(cpu_vec_isa.VecISA)]:
        for name, value in vars(cls).items():
            if name.endswith("_code") and isinstance(value, str):
                found.add(value.strip())
    return found


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    subs: list[type] = cls.__subclasses__()
    for sub in subs:
        out += [sub, *_subclasses(sub)]
    return out


def cpp_compiler_version() -> str | None:
    """The C++ compiler Inductor builds kernels with and its version (`g++ -v`, one line), None when none answers."""
    try:
        from torch._inductor.cpp_builder import get_compiler_version_info, get_cpp_compiler

        return " ".join(get_compiler_version_info(get_cpp_compiler()).split())[-300:] or None
    except Exception:  # no compiler on this host: it builds nothing either
        return None
