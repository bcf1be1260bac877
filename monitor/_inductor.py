"""The monitor's ONE adapter for private `torch._inductor` / `torch._functorch` cache internals (torch 2.11 to 2.15):
every FX-graph and AOTAutograd cache lookup with its key, Inductor's own key components and hit or miss, for the
cold-compile explanation (`coldstart`). Dynamo's own internals stay in `_dynamo`.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; a cold then warm forward and backward
run on all five: the same six lookups on each). Same in all five: the staticmethod
`FxGraphCache.load_with_key(key, debug_lines, ...) -> (graph, cache_info)` with `cache_state` / `time_saved_ns`, the
module function `autograd_cache_key -> (key, debug_lines)` called by its global name, the staticmethod
`AOTAutogradCache.try_load` and its `autograd_cache_hit` / `_miss` counters, the file layout `compile_position` names,
the compile workers' `--parent=` argument. Differs: AOTAutograd's `debug_lines` are always filled on 2.11 and only
under DEBUG logging from 2.12 on (empty lines, not an error); 2.15's `try_load` agrees a hit across ranks before
counting it (`sync_cache_decision_cross_ranks`: a hit another rank rejected counts as a miss), which this reader sees
through the same counters.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from monitor._dynamo import counters
from monitor.capabilities import Capability

# -- Inductor cache lookups: key, Inductor's own key components, hit or miss ------------------------------------------
# Every FX-graph cache lookup goes through `torch._inductor.codecache.FxGraphCache.load_with_key(key, debug_lines,
# ...)`, which returns `(graph or None, cache_info)` with `cache_info["cache_state"]` ("hit"/"miss") and, on a hit,
# `time_saved_ns` (the entry's original compile time); `debug_lines` are `FxGraphCachePickler.debug_lines()`, one
# `[hash] name: value` line per ingredient of the key. AOTAutograd computes its key in the module function
# `torch._functorch._aot_autograd.autograd_cache.autograd_cache_key(...) -> (key, debug_lines)` (2.12+ fill debug_lines
# only under DEBUG logging, empty otherwise; 2.11 always) and decides hit/miss in `AOTAutogradCache.try_load` (counted
# in `counters["aot_autograd"]`). Same names and call sites in torch 2.11-2.15 (class and module attributes looked up at
# call time), so wrapping them sees every lookup; they are wrapped only while a listener is subscribed, restored when
# the last one leaves, and a missing internal leaves lookups unseen, never raising.
# Why not the structured trace (`fx_graph_cache_miss` artifacts): a handler on `torch.__trace` makes torch compute
# every artifact's payload on every compile (graph dumps, output code: ~70 kB per FX lookup measured).


class Lookup(tuple):
    """One cache lookup: (cache, key, state, debug_lines, saved_s); a tuple, built on compiles only."""

    __slots__ = ()

    cache = property(lambda self: self[0], doc="`fx_graph` or `aot_autograd`.")
    key = property(lambda self: self[1], doc="The cache key (None when it could not be computed: a bypass).")
    state = property(lambda self: self[2], doc="`hit`, `miss` or `bypass`.")
    lines = property(lambda self: self[3], doc="Inductor's `[hash] name: value` component lines (may be empty).")
    saved_s = property(lambda self: self[4], doc="On an FX-graph hit: seconds the entry took to compile originally.")


_listeners: list[Callable[[Lookup], None]] = []
_originals: dict[str, Any] = {}
_aot_key = threading.local()
_patch_lock = threading.Lock()


def add_lookup_listener(fn: Callable[[Lookup], None]) -> bool:
    """Call `fn(lookup)` on every FX-graph / AOTAutograd cache lookup; False when this torch hides them."""
    with _patch_lock:
        if not _originals and not _install():
            return False
        if fn not in _listeners:
            _listeners.append(fn)
        return True


def remove_lookup_listener(fn: Callable[[Lookup], None]) -> None:
    """Stop calling `fn`; the last listener to leave restores torch's functions."""
    with _patch_lock:
        while fn in _listeners:
            _listeners.remove(fn)
        if not _listeners and _originals:
            _uninstall()


def _emit(lookup: Lookup) -> None:
    for fn in list(_listeners):
        try:
            fn(lookup)
        except Exception:  # a listener's fault never reaches the compile (the monitor counts its own)
            pass


def _install() -> bool:
    try:
        from torch._functorch._aot_autograd import autograd_cache
        from torch._inductor import codecache
    except Exception:
        return False
    fx_load = codecache.FxGraphCache.__dict__.get("load_with_key")
    aot_key = getattr(autograd_cache, "autograd_cache_key", None)
    aot_cls = getattr(autograd_cache, "AOTAutogradCache", None)
    try_load = aot_cls.__dict__.get("try_load") if aot_cls is not None else None
    if isinstance(fx_load, staticmethod):  # each cache on its own: one renamed leaves the other seen
        _originals["fx"] = fx_load
        setattr(codecache.FxGraphCache, "load_with_key", staticmethod(_fx_wrapper(fx_load.__func__)))  # noqa: B010
    if aot_cls is not None and callable(aot_key) and isinstance(try_load, staticmethod):
        _originals["aot_key"], _originals["try_load"] = aot_key, try_load
        autograd_cache.autograd_cache_key = _aot_key_wrapper(aot_key)
        setattr(aot_cls, "try_load", staticmethod(_try_load_wrapper(try_load.__func__)))  # noqa: B010
    return bool(_originals)


def _uninstall() -> None:
    from torch._functorch._aot_autograd import autograd_cache
    from torch._inductor import codecache

    if "fx" in _originals:
        setattr(codecache.FxGraphCache, "load_with_key", _originals.pop("fx"))  # noqa: B010
    if "aot_key" in _originals:
        autograd_cache.autograd_cache_key = _originals.pop("aot_key")
        setattr(autograd_cache.AOTAutogradCache, "try_load", _originals.pop("try_load"))  # noqa: B010


def _fx_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    def load_with_key(key: Any, debug_lines: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(key, debug_lines, *args, **kwargs)
        try:
            info = result[1] if isinstance(result, tuple) and len(result) == 2 else {}
            state = str(info.get("cache_state") or ("hit" if result[0] is not None else "miss"))
            saved = info.get("time_saved_ns")
            lines = tuple(debug_lines) if isinstance(debug_lines, (list, tuple)) else ()
            _emit(Lookup(("fx_graph", str(key), state, lines, saved / 1e9 if isinstance(saved, int) else None)))
        except Exception:
            pass
        return result

    load_with_key.__wrapped__ = original  # type: ignore[attr-defined]
    return load_with_key


def _aot_key_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    def autograd_cache_key(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _aot_key.value = result  # read by the try_load wrapper in this thread
        return result

    autograd_cache_key.__wrapped__ = original  # type: ignore[attr-defined]
    return autograd_cache_key


def _try_load_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    def try_load(*args: Any, **kwargs: Any) -> Any:
        table = counters().get("aot_autograd") or {}
        before = (table.get("autograd_cache_hit", 0), table.get("autograd_cache_miss", 0))
        _aot_key.value = None
        result = original(*args, **kwargs)
        try:
            table = counters().get("aot_autograd") or {}
            hit = table.get("autograd_cache_hit", 0) > before[0]
            miss = table.get("autograd_cache_miss", 0) > before[1]
            key, lines = _aot_key.value if isinstance(_aot_key.value, tuple) else (None, ())
            state = "hit" if hit else "miss" if miss else "bypass"
            _emit(Lookup(("aot_autograd", str(key) if key else None, state, tuple(lines or ()), None)))
        except Exception:
            pass
        return result

    try_load.__wrapped__ = original  # type: ignore[attr-defined]
    return try_load


def probe() -> tuple[Capability, ...]:
    """Whether this torch has the cache-lookup functions wrapped above (looked up, never by version; capabilities:
    `monitor.capabilities`)."""
    try:
        from torch._inductor import codecache

        fx = isinstance(codecache.FxGraphCache.__dict__.get("load_with_key"), staticmethod)
    except Exception:
        fx = False
    try:
        from torch._functorch._aot_autograd import autograd_cache

        aot_cls = getattr(autograd_cache, "AOTAutogradCache", None)
        aot = callable(getattr(autograd_cache, "autograd_cache_key", None)) and isinstance(
            aot_cls.__dict__.get("try_load") if aot_cls is not None else None, staticmethod
        )
    except Exception:
        aot = False
    effect = "{} cache lookups are not seen: with a warm manifest, no cold_compile event or "
    effect += "torch_compile_cold_compiles_total for them; compile-contract warm records none of their keys"
    return (
        Capability(
            name="fx_graph_lookups",
            available=fx,
            reads="torch._inductor.codecache.FxGraphCache.load_with_key",
            effect=effect.format("FX-graph"),
        ),
        Capability(
            name="aot_autograd_lookups",
            available=aot,
            reads="torch._functorch._aot_autograd.autograd_cache (autograd_cache_key, AOTAutogradCache.try_load)",
            effect=effect.format("AOTAutograd"),
        ),
    )


# -- where a running compile is, read from another thread (SIGTERM, exit, a budget overrun) ---------------------------
# The compiling thread's Python frames (`sys._current_frames()`, CPython), innermost first. torch's file layout names
# the stage (same in 2.11-2.15): `_dynamo/` traces, `_functorch/` runs AOTAutograd, `_inductor/` lowers and builds
# (`select_algorithm.py` autotunes, `async_compile.py` waits for the compile workers, `codecache.py`/`cpp_builder.py`
# build). A frame of the `filelock` package means it waits for an Inductor cache lock (`<cache dir>/locks/*.lock`,
# flock: held by another live process); the lock's path is that frame's `self.lock_file`. Inductor's compile workers
# are child processes running `torch/_inductor/compile_worker/__main__.py ... --parent=<pid>`.
_WORKER_MARK = b"compile_worker"
_OURS = (os.path.dirname(os.path.abspath(__file__)) + os.sep, threading.__file__)
"""Files of frames skipped at the top of the stack: the monitor's (its signal handler) and `threading`'s (a join)."""


def compile_position(tid: int) -> dict[str, Any]:
    """`at` (innermost frame), `phase` (innermost torch compiler frame: `torch/<file>:<line> <function>`),
    `waiting_on` (a cache lock file) and `workers` (Inductor compile-worker PIDs) of the compile running on thread
    `tid`; keys are left out where unknown."""
    out: dict[str, Any] = {}
    frame = sys._current_frames().get(tid)
    while frame is not None and frame.f_code.co_filename.startswith(_OURS):  # a SIGTERM handler's own frames
        frame = frame.f_back
    if frame is not None:
        parts = frame.f_code.co_filename.replace("\\", "/").rsplit("/", 2)[-2:]
        out["at"] = f"{'/'.join(parts)}:{frame.f_lineno} {frame.f_code.co_name}"
    while frame is not None:
        file = frame.f_code.co_filename.replace("\\", "/")
        if "/filelock/" in file and "waiting_on" not in out:
            lock = getattr(frame.f_locals.get("self"), "lock_file", None)
            if lock:
                out["waiting_on"] = str(lock)
        at = file.rfind("/torch/")
        if at >= 0 and not file.startswith("utils/", at + 7) and "/monitor/" not in file:
            out["phase"] = f"{file[at + 1 :]}:{frame.f_lineno} {frame.f_code.co_name}"
            break
        frame = frame.f_back
    workers = compile_workers(os.getpid())
    if workers:
        out["workers"] = workers
    return out


def compile_workers(pid: int) -> list[int]:
    """PIDs of Inductor's compile-worker processes started by `pid` (Linux `/proc`; [] elsewhere)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                for child in fh.read().split():
                    with open(f"/proc/{int(child)}/cmdline", "rb") as cmd:
                        if _WORKER_MARK in cmd.read():
                            found.append(int(child))
    except (OSError, ValueError):  # no /proc, no `children` file, a child gone meanwhile
        return found
    return found
