"""The verification run of a precompiled bundle: a fresh process, an empty cache dir, precompile on.

`compile-contract warm` starts it (`python -m contract.warm.precompile_worker ...`, `contract.warm.precompile.verify`) with
`TORCHINDUCTOR_CACHE_DIR` pointing at a new empty dir, so nothing of the warm run's local cache can help. It loads the
bundle as `enforce` does (before anything compiles), binds and applies the contract, runs the step through the
steps the warm run ran (every shape it saw) under the monitor, then calls each region once more with an input shape
the warm run never saw (one more row on the first dim, else on the second; a shape the region's eager forward rejects
is no test). It writes what happened as JSON to `--out`; `contract.warm.precompile.judge` turns that into the verdict. Any
exception of torch's is caught and reported; a crash of the process itself is seen by the parent (no JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOG_LINES = 20
"""Monitor events kept per kind in the result (the first ones: enough to name what missed)."""


class _Events:
    """A monitor logger that keeps the events (name and fields) instead of printing them."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __getattr__(self, level: str) -> Callable[..., None]:
        def say(event: str, **fields: Any) -> None:
            if sum(e["event"] == event for e in self.events) < LOG_LINES:
                self.events.append({"event": event, "level": level, **_plain(fields)})

        return say


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(fields, default=str))


def main(argv: list[str] | None = None) -> int:
    """Run the verification and write its JSON result (exit 0 whatever it found; the parent judges)."""
    parser = argparse.ArgumentParser(
        prog="python -m contract.warm.precompile_worker", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--contract", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--step", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    result: dict[str, Any] = {"stage": "start", "crash": None}
    try:
        _verify(args, result)
    except BaseException as exc:  # anything torch or the user's code raises is the finding
        result["crash"] = _crash(result["stage"], exc)
    Path(args.out).write_text(json.dumps(result, default=str), encoding="utf-8")
    return 0


def _verify(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Load, apply, the warm run's steps, then one unseen shape per region; fills `result` as it goes."""
    import torch

    from contract import _caches
    from contract.binding.apply import apply
    from contract.binding.resolve import bind
    from contract.document.load import load
    from contract.document.refs import build_model, resolve
    from monitor.runtime import Monitor

    result["torch"] = torch.__version__
    _caches.set_caching_precompile(True)
    result["stage"] = "load"
    started = time.perf_counter()
    _, problem = _caches.load_cache_artifacts_quietly(Path(args.bundle).read_bytes())
    if problem is not None:
        raise RuntimeError(f"the bundle did not load: {problem}")
    result["stage"] = "apply"
    contract, _ = load(args.contract)
    if contract is None:
        raise RuntimeError(f"{args.contract}: the contract does not load")
    model, step = build_model(args.model), resolve(args.step, "step")
    binding, _ = bind(contract, model)
    apply(binding)
    result["instances"] = _loads(binding)
    recorder = _Recorder(binding)
    events = _Events()
    mon = Monitor(binding, serve=False, logger=events)
    try:
        result["stage"] = "steps"
        for i in range(args.steps):
            step(model, i)
        result["first_step_s"] = time.perf_counter() - started
        result["compiled"] = {name: s["compiles"] for name, s in mon.snapshot().items()}
        result["stage"] = "unseen"
        compiled = [name for name, rb in binding.regions.items() if rb.state == "compiled"]
        result["unseen"] = {name: _unseen(recorder, mon, name) for name in compiled}
    finally:
        mon.stop()
        result["events"] = [e for e in events.events if e["event"] in ("cold_compile", "first_compile", "recompile")]


def _loads(binding: Any) -> dict[str, dict[str, Any]]:
    """Per region instance apply compiled: what its wrap found in the precompile cache (state, seconds, reason)."""
    out: dict[str, dict[str, Any]] = {}
    for target in (t for rb in binding.regions.values() if rb.state == "compiled" for t in rb.targets):
        load = target.precompile
        out[_label(target)] = {
            "region": target.region,
            "state": None if load is None else load.state,
            "seconds": None if load is None else round(load.seconds, 3),
            "reason": None if load is None else load.reason,
        }
    return out


def _label(target: Any) -> str:
    return f"{target.path or '<root>'}.{target.method}"


class _Recorder:
    """Keeps the last arguments each region target was called with (this process only: the unseen shape is made
    from them), by wrapping the callable apply installed."""

    def __init__(self, binding: Any) -> None:
        from contract.binding.apply import set_call

        self.calls: dict[str, list[tuple[Any, Any, tuple, dict, bool]]] = {}
        for name, rb in binding.regions.items():
            if rb.state != "compiled":
                continue
            for target in rb.targets:
                set_call(target, self._wrap(name, target, target.compiled))

    def _wrap(self, region: str, target: Any, fn: Any) -> Callable[..., Any]:
        import torch

        def call(*args: Any, **kwargs: Any) -> Any:
            kept = self.calls.setdefault(region, [])
            if not any(t is target for t, *_ in kept):
                kept.append((target, fn, args, kwargs, torch.is_grad_enabled()))
            return fn(*args, **kwargs)

        return call


def _unseen(recorder: _Recorder, mon: Any, region: str) -> dict[str, Any]:
    """Calls of the region with shapes the warm run never saw (one and two more rows on a dim, so two guard misses
    after the load): `recompiled` (Dynamo compiled, nothing broke), `crashed` (with the exception), or `untested`."""
    calls = recorder.calls.get(region)
    if not calls:
        return {"result": "untested", "why": "the region was never called in the warm run's steps"}
    target, fn, args, kwargs, grad = calls[0]
    for dim in (0, 1):
        shapes = [_grow(args, kwargs, dim, rows) for rows in (1, 2)]
        if any(s is None for s in shapes) or not all(_eager_ok(fn, s, grad) for s in shapes if s is not None):
            continue
        before = mon.snapshot()[region]["compiles"]
        for grown in shapes:
            try:
                _call(fn, grown, grad)  # type: ignore[arg-type]
            except Exception as exc:  # the crash this verification exists to find
                return {"result": "crashed", "dim": dim, "error": _brief(exc), "instance": _label(target)}
        compiled = mon.snapshot()[region]["compiles"] - before
        if not compiled:
            return {"result": "untested", "why": f"new sizes on dim {dim} compiled nothing (no guard missed)"}
        return {"result": "recompiled", "dim": dim, "compiles": compiled, "instance": _label(target)}
    return {"result": "untested", "why": "no input with more rows on dim 0 or 1 runs in the region's eager forward"}


def _grow(args: tuple, kwargs: dict, dim: int, rows: int) -> tuple[tuple, dict] | None:
    """The arguments with `rows` more rows on `dim` of every tensor whose `dim` has the size of the first tensor's
    (tensors inside tuples, lists and dicts too: Hugging Face passes `position_embeddings` as a tuple)."""
    import torch

    first = next((t for t in _leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.dim() > dim), None)
    if first is None:
        return None
    size = first.shape[dim]

    def grow(t: Any) -> Any:
        if not isinstance(t, torch.Tensor) or t.dim() <= dim or t.shape[dim] != size:
            return t
        new = torch.cat([t, *[t.narrow(dim, 0, 1)] * rows], dim).detach()
        return new.requires_grad_(t.requires_grad) if new.is_floating_point() else new

    return _map(grow, args), _map(grow, kwargs)


def _leaves(obj: Any) -> list[Any]:
    """What `_map` would reach, in order."""
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in _leaves(item)]
    if isinstance(obj, dict):
        return [leaf for item in obj.values() for leaf in _leaves(item)]
    return [obj]


def _map(fn: Callable[[Any], Any], obj: Any) -> Any:
    """`fn` applied to every value inside tuples, lists and dicts (their types kept; other containers as they are)."""
    if isinstance(obj, dict):
        return type(obj)((k, _map(fn, v)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_map(fn, v) for v in obj]
    if isinstance(obj, tuple):
        items = [_map(fn, v) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    return fn(obj)


def _eager_ok(fn: Any, grown: tuple[tuple, dict], grad: bool) -> bool:
    """The grown input runs in the region's eager forward (torch's `force_eager` stance: nothing compiles)."""
    import torch

    try:
        with torch.compiler.set_stance("force_eager"):
            _call(fn, grown, grad)
    except Exception:  # a shape the model does not take: no test of Dynamo
        return False
    return True


def _call(fn: Any, grown: tuple[tuple, dict], grad: bool) -> None:
    """One call under the grad mode the warm run used, and its backward when the output needs one."""
    import torch

    args, kwargs = grown
    with torch.set_grad_enabled(grad):
        out = fn(*args, **kwargs)
    outputs = out.to_tuple() if hasattr(out, "to_tuple") else out  # a Hugging Face ModelOutput
    tensors = [t for t in _leaves(outputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    if tensors:
        sum(t.float().sum() for t in tensors).backward()  # type: ignore[union-attr]


def _brief(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:400]


def _crash(stage: str, exc: BaseException) -> str:
    """`stage: Exception: text (at file:line)`: where in the verification torch raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{stage}: {_brief(exc)}{where}"


if __name__ == "__main__":
    sys.exit(main())
