"""The monitor's ONE adapter for private `torch._dynamo` APIs (verified on torch 2.11 to 2.15).

Why private: Dynamo reports compiles only through `torch._dynamo.callback.callback_handler` (start/end callbacks
carrying a compile id, no code object); per-instance attribution reads the compiled callable from the
`compile_wrapper` frame of `torch/_dynamo/eval_frame.py` still on the stack; the recompile reason is the
`recompile_reason` local of `convert_frame._compile` (fallback: `torch._dynamo.utils.guard_failures`); graph breaks
and cache lookups are global counters in `torch._dynamo.utils.counters` read as deltas; a recompile-limit hit fires
no callback, only a WARNING on logger `torch._dynamo.convert_frame` emitted in the compiling thread.
`torch._dynamo.reset()` clears the callback lists through `callback_handler.clear()`, so registration survives a
reset by shadowing that one method on the handler instance (state lives on the handler, not in this module).
What a new torch may rename is looked up once at start (`probe()`): a capability it lost is a `monitor_degraded`
event and gauge, never an exception; per-compile lookups use getattr with a fallback (a reason reads "unknown").

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; callbacks, stack reads, reasons,
graph breaks, the limit warning and lazy backwards run on all five). Same in all five:
`callback_handler` (`start_callbacks`, `end_callbacks`, `register_*_callback`, `clear`, called by `reset()`),
`CallbackArgs(callback_trigger, compile_id)` and the trigger names, `compile_wrapper`'s locals `fn` / `self`,
`_compile`'s locals `code` / `compile_id` / `reasons` / `recompile_reason`, `CompileId`'s `frame/compile` text,
`guard_failures`, `graph_break_reasons` of `GraphCompileReason(reason, user_stack)`, the counter names, the
recompile-limit warning (logger, text, argument order) and DDPOptimizer's split entries. Differs: which frame Dynamo
compiles for a `wrap_inline` (`user_code`: a function with no source file is wrapped on 2.11-2.12 only; a torch.nn
module's own `module.compile()` compiles `wrap_inline(module._call_impl)` on 2.14+, nothing before; fixed: named by
the module's forward on every version).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from types import CodeType, FrameType, ModuleType
from typing import Any

from monitor.capabilities import Capability

Callback = Callable[[Any], None]
LIMIT_LOGGER = "torch._dynamo.convert_frame"
"""Logger that emits Dynamo's "hit config.recompile_limit" warning (torch 2.11-2.15)."""
_LIMIT_PREFIX = "torch._dynamo hit config."


def _handler() -> Any:
    from torch._dynamo.callback import callback_handler

    return callback_handler


class _Keeper:
    """Stands in for `callback_handler.clear`: clears as torch does, then re-adds the kept callbacks."""

    def __init__(self, original: Callable[[], None]) -> None:
        self.original = original
        self.kept: list[tuple[Callback, Callback, Callable[[], None]]] = []
        self.lock = threading.Lock()

    def __call__(self) -> None:
        try:
            self.original()
        finally:
            handler = _handler()
            with self.lock:
                kept = list(self.kept)
            for start, end, _ in kept:
                handler.start_callbacks.append(start)
                handler.end_callbacks.append(end)
            for _, _, on_reset in kept:
                on_reset()


def register(start: Callback, end: Callback, on_reset: Callable[[], None]) -> None:
    """Register compile callbacks that survive `torch._dynamo.reset()` (on_reset runs after each reset; not where the
    handler has no `clear`: capability `reset_tracking`)."""
    handler = _handler()
    keeper = handler.__dict__.get("clear")
    if not isinstance(keeper, _Keeper) and callable(getattr(handler, "clear", None)):
        keeper = _Keeper(handler.clear)
        handler.clear = keeper
    if isinstance(keeper, _Keeper):
        with keeper.lock:
            keeper.kept.append((start, end, on_reset))
    handler.register_start_callback(start)
    handler.register_end_callback(end)


def unregister(start: Callback, end: Callback) -> None:
    """Remove our callbacks; the handler's own `clear` comes back when nobody keeps callbacks."""
    handler = _handler()
    keeper = handler.__dict__.get("clear")
    if isinstance(keeper, _Keeper):
        with keeper.lock:
            keeper.kept = [k for k in keeper.kept if k[0] is not start]
            empty = not keeper.kept
        if empty:
            del handler.clear
    for cbs, cb in ((handler.start_callbacks, start), (handler.end_callbacks, end)):
        while cb in cbs:
            cbs.remove(cb)


def ensure(start: Callback, end: Callback) -> bool:
    """Re-register callbacks something removed without `clear()`; True when they had to be re-added."""
    handler = _handler()
    missing = start not in handler.start_callbacks or end not in handler.end_callbacks
    if missing:
        if start not in handler.start_callbacks:
            handler.register_start_callback(start)
        if end not in handler.end_callbacks:
            handler.register_end_callback(end)
    return missing


def is_dynamo(args: Any) -> bool:
    """Whether a CallbackArgs is a Dynamo frame compile (not a lazy backward or a CUDA-graph recording)."""
    return getattr(getattr(args, "callback_trigger", None), "name", None) == "DYNAMO"


def trigger_name(args: Any) -> str:
    """`DYNAMO`, `LAZY_BACKWARD`, `CUDAGRAPH_RECORDING`, ... of a CallbackArgs."""
    trig = getattr(args, "callback_trigger", None)
    return getattr(trig, "name", str(trig))


def compile_id(args: Any) -> str:
    """`"frame_id/frame_compile_id"` of a CallbackArgs."""
    return str(getattr(args, "compile_id", ""))


def _walk(depth: int = 2):
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None:
        yield frame
        frame = frame.f_back


def compiled_callable() -> Any | None:
    """The callable the innermost `compile_wrapper` on this thread's stack is compiling, if any."""
    for frame in _walk():
        if _is_wrapper(frame.f_code):
            return frame.f_locals.get("fn")
    return None


_CALLS = ("_call_impl", "_wrapped_call_impl", "__call__")
"""Names of a compiled bound method that run the module's forward: `module.compile()`, `torch.compile(module)`,
Hugging Face's `torch.compile(self.__call__)`."""


def owner_of(fn: Any) -> tuple[Any, str] | None:
    """(module instance, method name) of a compiled callable; the module's call (see `_CALLS`) means forward."""
    fn = getattr(fn, "__wrapped__", fn)  # wrap_inline (contract.apply, torch.compile of a torch.nn builtin)
    if hasattr(fn, "_call_impl") and not hasattr(fn, "__func__"):  # wrap_inline(module) keeps the module itself
        return fn, "forward"
    inner = getattr(fn, "__func__", None)
    instance = getattr(fn, "__self__", None)
    if inner is None or instance is None:
        return None
    name = getattr(inner, "__name__", "")
    return instance, "forward" if name in _CALLS else name


def code_of(frame: FrameType | None) -> Any | None:
    """The code object a `convert_frame._compile` frame compiles (its `code` argument), or None."""
    try:
        return frame.f_locals.get("code") if frame is not None else None
    except Exception:  # a frame whose locals cannot be read
        return None


def is_recompile(compile_id: str) -> bool:
    """Dynamo had compiled this frame before (`frame_id/frame_compile_id` with a compile number above 0)."""
    last = compile_id.rpartition("/")[2]
    return last.isdigit() and int(last) > 0


def compile_frame() -> FrameType | None:
    """The innermost `convert_frame._compile` frame on this thread's stack (full walk: for rare paths)."""
    for frame in _walk():
        if _is_compile(frame.f_code):
            return frame
    return None


def reasons_of(frame: FrameType) -> list[str]:
    """Guard-failure texts held by one `convert_frame._compile` frame (its locals are read once, here)."""
    local = frame.f_locals  # Python 3.11 materialises every local: call only for recompiles
    reasons = local.get("reasons")
    if isinstance(reasons, list) and reasons:
        return [str(r) for r in reasons]
    first = local.get("recompile_reason") or _guard_failure(local.get("code"))
    return [str(first)] if first else []


def _is_compile(code: Any) -> bool:
    return code.co_name == "_compile" and code.co_filename.endswith("convert_frame.py")


def _is_wrapper(code: Any) -> bool:
    return code.co_name == "compile_wrapper" and code.co_filename.endswith("eval_frame.py")


class DynamoStack:
    """Finds `compile_wrapper` and `_compile` on the stack of an end callback without walking every frame.

    Every frame between the callback and Dynamo's entry (the outermost `convert_frame.py` frame of the compile) is
    torch's own fixed path, so one full walk learns the entry's and `_compile`'s depths; later events jump there
    with `sys._getframe(depth)` (which materialises one frame object, not every one on the way), check the code
    object, and walk outward only over the few frames between Dynamo's entry and the innermost `compile_wrapper`.
    Anything unexpected falls back to the full walk. Call both methods from one function (the depths are relative
    to their caller). State is per instance (one per monitor).
    """

    MAX_GAP = 16
    """Frames tolerated between Dynamo's entry and `compile_wrapper` (`_call_impl`, compiled forward, resume)."""

    def __init__(self) -> None:
        self._entry: tuple[int, Any] | None = None
        self._compile: tuple[int, Any] | None = None
        self.context: Any = None
        """The Dynamo context (`self` of `compile_wrapper`) of the last `compiled_callable()` found: how that
        compile was asked for (read for regions an engine compiles lazily)."""

    def compiled_callable(self) -> Any | None:
        """`fn` of the innermost `compile_wrapper` on the stack (the callable being compiled), or None; its context
        is kept in `context`."""
        self.context = None
        entry = self._entry
        if entry is not None:
            frame = _frame_at(entry[0] + 1)
            if frame is not None and frame.f_code is entry[1]:
                frame = frame.f_back
                for _ in range(self.MAX_GAP):
                    if frame is None:
                        return None
                    if _is_wrapper(frame.f_code):
                        return self._fn_of(frame)
                    frame = frame.f_back
        return self._learn()

    def _fn_of(self, frame: FrameType) -> Any | None:
        local = frame.f_locals
        self.context = local.get("self")
        return local.get("fn")

    def compile_frame(self) -> FrameType | None:
        """The `convert_frame._compile` frame of the compile in progress (for its recompile reasons)."""
        known = self._compile
        if known is not None:
            frame = _frame_at(known[0] + 1)
            if frame is not None and frame.f_code is known[1]:
                return frame
        for frame in _walk(2):
            if _is_compile(frame.f_code):
                return frame
        return None

    def _learn(self) -> Any | None:
        """Full walk from our caller: remember where `_compile` and Dynamo's entry sit; return the wrapper's fn."""
        compile_at, entry = -1, None
        for depth, frame in enumerate(_walk(3)):  # generator, _learn, compiled_callable: depth 0 is the caller
            code = frame.f_code
            if compile_at < 0 and _is_compile(code):
                compile_at, entry = depth, (depth, code)
                self._compile = (depth, code)
            elif entry is not None and entry[0] == depth - 1 and code.co_filename.endswith("convert_frame.py"):
                entry = (depth, code)
            if _is_wrapper(code):
                self._entry = entry
                return self._fn_of(frame)
        self.context = None
        return None


def _frame_at(depth: int) -> FrameType | None:
    """`sys._getframe(depth + 1)` from the caller's point of view, None past the bottom of the stack."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


def compile_id_of(frame: FrameType | None) -> str:
    """The compile id (`"frame_id/frame_compile_id"`) a `convert_frame._compile` frame works on, or ""."""
    cid = frame.f_locals.get("compile_id") if frame is not None else None
    return str(cid) if cid is not None else ""


def user_code(frame: FrameType | None, fn: Any = None) -> Any | None:
    """The user's code object a compile is about: the code the `convert_frame._compile` frame compiles, unless that is
    torch's own `wrap_inline` frame (a torch.nn module compiled whole; on torch 2.11-2.12 also a function with no source
    file), then the code of the callable it wraps (`fn`, the compile wrapper's callable)."""
    code = code_of(frame)
    if code is not None and "/torch/_dynamo/" not in str(getattr(code, "co_filename", "")).replace("\\", "/"):
        return code
    inner = getattr(fn, "__wrapped__", None)
    if hasattr(inner, "_call_impl") and not hasattr(inner, "__func__"):  # wrap_inline(module): its forward
        inner = getattr(type(inner), "forward", None)
    inner = _module_forward(inner)
    inner = getattr(inner, "__func__", inner)
    return getattr(inner, "__code__", None) or code


def _module_forward(fn: Any) -> Any:
    """A module's bound call (`_call_impl`...) -> its class's forward, so a compile names the user's method: torch 2.14
    and 2.15 compile a torch.nn module's `module.compile()` as `wrap_inline(module._call_impl)` (2.11-2.13: nothing)."""
    owner = getattr(fn, "__self__", None)
    if getattr(getattr(fn, "__func__", None), "__name__", "") in _CALLS and hasattr(owner, "_call_impl"):
        return getattr(type(owner), "forward", fn)
    return fn


def compile_code(frame: FrameType | None, fn: Any = None) -> tuple[str, str, int] | None:
    """(function, file, first line) of the user's code a compile is about (see `user_code`)."""
    code: Any = user_code(frame, fn)
    return (code.co_name, code.co_filename, code.co_firstlineno) if hasattr(code, "co_firstlineno") else None


def reason_compile_id(reason: str) -> str:
    """The compile id a guard-failure text names (the cache entry whose guard failed)."""
    head = reason.split(":", 1)[0].strip()
    return head if "/" in head else ""


def _guard_failure(code: Any) -> str | None:
    try:
        from torch._dynamo.utils import guard_failures

        texts = guard_failures.get(code) if code is not None else None
        return str(texts[-1]) if texts else None
    except Exception:  # a renamed internal: reason unknown
        return None


def counters() -> Any:
    """Dynamo's global counters (graph breaks, cache hits/misses), resolved once per monitor; an empty table where this
    torch has none (capability `dynamo_counters`)."""
    try:
        from torch._dynamo.utils import counters as dynamo_counters
    except ImportError:
        return {}
    return dynamo_counters


class BreakLog:
    """New graph breaks since the previous read, from Dynamo's own list of break reasons.

    `torch._dynamo.utils.graph_break_reasons` gets one `GraphCompileReason(reason, user_stack)` per graph break of
    every kind, data-dependent jumps (`if tensor.sum() > 0:`, "generic_jump") included, which the global
    `counters["graph_break"]` misses (torch 2.11-2.15); `torch._dynamo.reset()` clears it. Present on 2.11-2.15
    (it backs `torch._dynamo.explain`). Absent (a renamed internal): the graph-break counter's deltas stand in.
    Read only from Dynamo's callbacks and our reset hook, which Dynamo serializes.
    """

    def __init__(self, table: Any) -> None:
        self._table = table
        self._reasons = _break_reasons()
        self._seen = 0
        self._counts: dict[str, int] = {}
        self.sync()

    def sync(self) -> None:
        """Mark everything logged so far as seen (at start and after a reset)."""
        if self._reasons is not None:
            self._seen = len(self._reasons)
        else:
            self._counts = dict(self._table.get("graph_break", ()))

    def new(self) -> tuple[tuple[tuple[str, str], ...], int]:
        """Since the previous call: (site, reason) of each graph break (site is `file:line` of the user code, or ""),
        and how many of the logged entries were DDPOptimizer's splits at gradient-bucket boundaries (not breaks)."""
        if self._reasons is None:
            return self._from_counter(), 0
        n = len(self._reasons)
        if n == self._seen:
            return (), 0
        start = self._seen if n > self._seen else 0  # shorter: reset() cleared the list since our last read
        self._seen = n
        entries = self._reasons[start:n]
        splits = sum(1 for r in entries if is_ddp_split(r))
        return tuple(_site_and_reason(r) for r in entries if not is_ddp_split(r)), splits

    def _from_counter(self) -> tuple[tuple[str, str], ...]:
        table = self._table.get("graph_break")
        if not table or sum(table.values()) == sum(self._counts.values()):
            return ()
        now = dict(table)
        out = tuple(("", k) for k, v in now.items() for _ in range(v - self._counts.get(k, 0)))
        self._counts = now
        return out


def _break_reasons() -> list | None:
    try:
        from torch._dynamo.utils import graph_break_reasons

        return graph_break_reasons if isinstance(graph_break_reasons, list) else None
    except Exception:  # a renamed internal: fall back to the counter
        return None


_DDP_SPLIT_FILE = "_dynamo/backends/distributed.py"
_DDP_SPLIT_REASON = "DDPOptimizer intentional graph-break"


def is_ddp_split(entry: Any) -> bool:
    """Whether a graph-break log entry is DDPOptimizer splitting the graph at a gradient-bucket boundary: one entry
    per bucket, its user stack a single synthetic frame (`torch/_dynamo/backends/distributed.py`, line 0,
    `DDPOptimizer`), its reason starting "DDPOptimizer intentional graph-break" (torch 2.11-2.15). The split is
    DDP overlapping gradient all-reduce with backward, not a graph break of the user's code: Dynamo compiled the frame
    whole, and the counter of real breaks never sees it."""
    stack = list(getattr(entry, "user_stack", None) or ())
    if len(stack) == 1 and getattr(stack[0], "lineno", None) == 0:
        if str(getattr(stack[0], "filename", "")).replace("\\", "/").endswith(_DDP_SPLIT_FILE):
            return True
    return str(getattr(entry, "reason", "")).startswith(_DDP_SPLIT_REASON)


def _site_and_reason(entry: Any) -> tuple[str, str]:
    """`file:line` of the innermost user frame of a GraphCompileReason, and its reason text."""
    stack = getattr(entry, "user_stack", None) or ()
    last = stack[-1] if stack else None
    site = f"{getattr(last, 'filename', '?')}:{getattr(last, 'lineno', '?')}" if last is not None else ""
    return site, str(getattr(entry, "reason", ""))


CACHE_KEYS: tuple[tuple[str, str], ...] = (
    ("fx_graph", "hit"),
    ("fx_graph", "miss"),
    ("aot_autograd", "hit"),
    ("aot_autograd", "miss"),
)
"""Order of the values `cache_totals` returns."""


def cache_totals(table: Any) -> tuple[int, int, int, int]:
    """FX-graph and AOTAutograd hit/miss totals as one tuple (cheap to compare between two compiles)."""
    ind, aot = table.get("inductor") or {}, table.get("aot_autograd") or {}
    return (
        ind.get("fxgraph_cache_hit", 0),
        ind.get("fxgraph_cache_miss", 0),
        aot.get("autograd_cache_hit", 0),
        aot.get("autograd_cache_miss", 0),
    )


def is_limit_hit(record: logging.LogRecord) -> bool:
    """Whether a log record is Dynamo's recompile-limit warning."""
    return isinstance(record.msg, str) and record.msg.startswith(_LIMIT_PREFIX)


def limit_hit_reason(record: logging.LogRecord) -> str | None:
    """The "last reason" argument of the recompile-limit warning."""
    args = record.args if isinstance(record.args, tuple) else ()
    return str(args[3]) if len(args) > 3 and args[3] is not None else None


def limit_logger() -> logging.Logger:
    """The logger to attach the recompile-limit handler to."""
    return logging.getLogger(LIMIT_LOGGER)


# -- capabilities: what this torch lets the readings above find, probed once when a monitor starts --------------------


def probe() -> tuple[Capability, ...]:
    """One record per private reading of this adapter (`monitor.capabilities`), found by looking the internals up the way
    the readings above use them (never by version); a lookup that fails is a lost capability, never an exception."""
    handler = _found(_handler)
    events = handler is not None and all(
        hasattr(handler, n)
        for n in ("register_start_callback", "register_end_callback", "start_callbacks", "end_callbacks")
    )
    has_counters = isinstance(_found(lambda: _module("utils").counters), Mapping)
    eval_frame, convert = _found(lambda: _module("eval_frame")), _found(lambda: _module("convert_frame"))
    compile_fn = _found(lambda: _unwrap(convert._compile).__code__) if convert is not None else None
    local = set(compile_fn.co_varnames + compile_fn.co_cellvars) if isinstance(compile_fn, CodeType) else set()
    guard_failures = _found(lambda: _module("utils").guard_failures)
    breaks = (
        "graph breaks are counted from torch._dynamo.utils.counters['graph_break'] instead: without their file:line "
        "site, and the breaks that counter misses (a tensor in a Python `if`) are not counted"
        if has_counters
        else "graph breaks are not counted: torch_compile_graph_breaks_total and graph_break_budget see only the "
        "frames Dynamo gave up on"
    )
    return (
        Capability(
            name="compile_events",
            available=events,
            reads="torch._dynamo.callback.callback_handler (register_start_callback, register_end_callback, "
            "start_callbacks, end_callbacks)",
            effect="no compile is seen: every torch_compile_* count stays 0 and no budget fires",
        ),
        Capability(
            name="reset_tracking",
            available=events and callable(getattr(handler, "clear", None)),
            reads="torch._dynamo.callback.callback_handler.clear",
            effect="torch._dynamo.reset() is not seen: compiles after it are missed until the next scrape registers "
            "the callbacks again, and first compiles after it may count as recompiles",
        ),
        Capability(
            name="region_attribution",
            available=eval_frame is not None and any(_is_wrapper(c) and _has(c, "fn") for c in _codes(eval_frame)),
            reads="the compile_wrapper frame of torch/_dynamo/eval_frame.py (its local fn)",
            effect="compiles are not attributed to regions: per-region counts and budgets stay 0, and no compile is "
            "counted as unclaimed",
        ),
        Capability(
            name="recompile_reasons",
            available=isinstance(compile_fn, CodeType)
            and _is_compile(compile_fn)
            and bool({"reasons", "recompile_reason"} & local or ("code" in local and guard_failures is not None)),
            reads="locals reasons / recompile_reason of torch._dynamo.convert_frame._compile "
            "(or torch._dynamo.utils.guard_failures)",
            effect='recompiles are counted without their guard: reason="other", no guard text or site',
        ),
        Capability(
            name="graph_break_reasons",
            available=_break_reasons() is not None,
            reads="torch._dynamo.utils.graph_break_reasons",
            effect=breaks,
        ),
        Capability(
            name="dynamo_counters",
            available=has_counters,
            reads="torch._dynamo.utils.counters",
            effect="Inductor cache hits and misses are not counted: torch_compile_cache_lookups_total stays 0",
        ),
        Capability(
            name="recompile_limit_warning",
            available=convert is not None
            and any(isinstance(k, str) and k.startswith(_LIMIT_PREFIX) for c in _codes(convert) for k in c.co_consts),
            reads=f'the "{_LIMIT_PREFIX}*" warning of logger {LIMIT_LOGGER}',
            effect="recompile-limit hits are counted only from Dynamo's compilation metrics: at the next compile or "
            "scrape, without the module instance",
        ),
    )


def _found(lookup: Callable[[], Any]) -> Any:
    """What a lookup returns, None where it raises (a renamed module or attribute)."""
    try:
        return lookup()
    except Exception:
        return None


def _module(name: str) -> ModuleType:
    """One of Dynamo's submodules, which `torch._dynamo` imports itself (a renamed one raises: `_found` says None)."""
    import torch._dynamo

    found = getattr(torch._dynamo, name)
    if not isinstance(found, ModuleType):
        raise AttributeError(f"torch._dynamo.{name} is not a module")
    return found


def _unwrap(fn: Any) -> Any:
    """The function under `functools.wraps` layers (bounded: a wrapper chain may loop)."""
    for _ in range(16):
        inner = getattr(fn, "__wrapped__", None) if not isinstance(fn, ModuleType) else None
        if inner is None:
            break
        fn = inner
    return fn


def _has(code: CodeType, name: str) -> bool:
    return name in code.co_varnames or name in code.co_freevars or name in code.co_cellvars


def _codes(module: ModuleType) -> Iterator[CodeType]:
    """Every code object of a module's functions and classes' methods, nested ones included (a few hundred)."""
    todo: list[Any] = []
    for value in vars(module).values():
        if isinstance(value, type) and value.__module__ == module.__name__:
            todo += vars(value).values()
        else:
            todo.append(value)
    codes = []
    for value in todo:
        fn = _function_of(value)
        if getattr(fn, "__module__", None) == module.__name__ and isinstance(getattr(fn, "__code__", None), CodeType):
            codes.append(fn.__code__)
    while codes:
        code = codes.pop()
        yield code
        codes += [k for k in code.co_consts if isinstance(k, CodeType)]


def _function_of(value: Any) -> Any:
    """The plain function behind a module or class attribute (a property's getter, a static or class method's
    function, under its `functools.wraps` layers); None where looking raises."""
    try:
        return _unwrap(value.fget if isinstance(value, property) else getattr(value, "__func__", value))
    except Exception:
        return None
